package qdrant

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Engine is a connection to a Qdrant cluster for one Kairos index. It implements
// backend.Lexical and backend.Vectors, and opens backend.Passages. Safe for concurrent use.
type Engine struct {
	opts    Options
	clients []*qdrant.Client
	next    atomic.Uint32 // the host the next request starts with

	replOnce sync.Once // asks the cluster for its peers once (replicationFactor)
	repl     uint32
}

// New connects to the hosts of opts and checks that at least one answers.
func New(ctx context.Context, opts Options) (*Engine, error) {
	o := opts
	o.SetDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	e := &Engine{opts: o}
	for _, h := range o.Hosts {
		host, port, _ := net.SplitHostPort(h)
		p, err := strconv.Atoi(port)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("qdrant: host %q: port: %v", h, err)
		}
		c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("qdrant %s: %w", h, err)
		}
		e.clients = append(e.clients, c)
	}
	err := e.do(ctx, "health check", "", func(ctx context.Context, c *qdrant.Client) error {
		_, err := c.HealthCheck(ctx)
		return err
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the connections.
func (e *Engine) Close() error {
	var errs []error
	for _, c := range e.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Collection is the collection of generation gen.
func (e *Engine) Collection(gen string) string { return e.opts.Index + "-" + gen }

// Alias is the alias that names the live generation.
func (e *Engine) Alias() string { return e.opts.Index }

// retryable reports whether a request that failed with err may succeed on another attempt
// or another peer: transport failures, timeouts and overload, not bad requests.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Canceled:
		return true
	case codes.Internal:
		// A peer that lost a replica mid-request answers Internal ("service internal error:
		// ... no active replica", "channel closed"): another attempt goes to a live one.
		return true
	}
	return false
}

// do runs op against the cluster with a per-request timeout, moving to the next host and
// backing off exponentially on a retryable failure. Errors name the host and collection.
func (e *Engine) do(ctx context.Context, what, coll string, op func(context.Context, *qdrant.Client) error) error {
	start := int(e.next.Load())
	wait := e.opts.Backoff
	var err error
	for attempt := 0; attempt <= e.opts.Retries; attempt++ {
		i := (start + attempt) % len(e.clients)
		rctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
		err = op(rctx, e.clients[i])
		cancel()
		if err == nil {
			if attempt > 0 {
				e.next.Store(uint32(i))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("qdrant %s %s: %w", e.opts.Hosts[i], what, ctx.Err())
		}
		if !retryable(err) || attempt == e.opts.Retries {
			return e.wrap(i, what, coll, err)
		}
		e.opts.Logger.Warn("qdrant request failed, retrying", "host", e.opts.Hosts[i], "op", what, "collection", coll, "attempt", attempt+1, "err", err)
		if err := pause(ctx, &wait); err != nil {
			return fmt.Errorf("qdrant %s %s: %w", e.opts.Hosts[i], what, err)
		}
	}
	return err
}

// pause waits out one step of a retry's exponential backoff and doubles the next (up to 5 s
// a step), or returns ctx's error when it ends first.
func pause(ctx context.Context, wait *time.Duration) error {
	select {
	case <-time.After(*wait):
	case <-ctx.Done():
		return ctx.Err()
	}
	if *wait < 5*time.Second {
		*wait *= 2
	}
	return nil
}

// wrap names the host, operation and collection in err and says what an unreachable or
// read-only cluster means.
func (e *Engine) wrap(i int, what, coll string, err error) error {
	where := "qdrant grpc://" + e.opts.Hosts[i]
	if coll != "" {
		where += " collection " + coll
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return fmt.Errorf("%s: %s: cluster unreachable after %d attempts on %d hosts: %w", where, what, e.opts.Retries+1, len(e.clients), err)
	case codes.PermissionDenied, codes.FailedPrecondition:
		return fmt.Errorf("%s: %s: refused (a read-only cluster or an API key without write access?): %w", where, what, err)
	}
	return fmt.Errorf("%s: %s: %w", where, what, err)
}
