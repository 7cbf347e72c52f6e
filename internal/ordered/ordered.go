// Package ordered runs a function over a stream of items on a bounded pool of goroutines and
// hands the results back in input order, so that a parallel stage of a pipeline gives exactly
// the output of its sequential form. The corpus readers use it to decode pages and split
// documents on every core.
package ordered

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// ErrClosed is what Next returns after Close.
var ErrClosed = errors.New("ordered: pipeline closed")

// Pipeline applies work to the items that next produces, on Workers goroutines, and returns
// the results in the order of the items.
type Pipeline[In, Out any] struct {
	order  chan chan result[Out] // one slot per item, in input order; its capacity bounds work in flight
	cancel context.CancelFunc
	slot   chan result[Out] // taken from order, its result not yet returned (Next's context ended)
	ended  chan struct{}    // closed when the producer returns
	done   bool             // Next returned a terminal error
	err    error
	wg     sync.WaitGroup // the workers
}

type result[Out any] struct {
	out Out
	err error
}

type job[In, Out any] struct {
	in  In
	res chan result[Out]
}

// Start begins reading items with next, on a goroutine of its own, until next returns an
// error (io.EOF at the end), and runs work on each item on workers goroutines (workers <= 0:
// GOMAXPROCS). At most 2*workers items are in flight: a slow consumer stops next.
//
// work's error is fatal: Next returns it after the results of the items before its item, and
// the pipeline stops reading. So is next's error, io.EOF included. A panic in work or next is
// recovered and returned as an error. next and work must not keep references that the next
// call of next changes: work runs while next reads on.
func Start[In, Out any](ctx context.Context, workers int, next func() (In, error), work func(In) (Out, error)) *Pipeline[In, Out] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pipeline[In, Out]{order: make(chan chan result[Out], 2*workers), cancel: cancel, ended: make(chan struct{})}
	jobs := make(chan job[In, Out], workers)
	p.wg.Add(workers)
	for range workers {
		go func() {
			defer p.wg.Done()
			for j := range jobs {
				j.res <- run(work, j.in)
			}
		}()
	}
	go p.produce(ctx, next, jobs)
	return p
}

// produce calls next until it fails, handing each item to the workers and its result slot to
// Next, in the same order.
func (p *Pipeline[In, Out]) produce(ctx context.Context, next func() (In, error), jobs chan<- job[In, Out]) {
	defer close(p.ended)
	defer close(jobs)
	defer close(p.order)
	for {
		// select picks at random among ready cases, so a send that is ready beside a closed
		// ctx.Done() can win; checking first keeps Close's promise that no item is read
		// after it.
		if ctx.Err() != nil {
			return
		}
		in, err := call(next)
		res := make(chan result[Out], 1) // buffered: a worker never waits for the consumer
		if err != nil {
			res <- result[Out]{err: err}
		}
		select {
		case p.order <- res:
		case <-ctx.Done():
			return
		}
		if err != nil || ctx.Err() != nil {
			return
		}
		select {
		case jobs <- job[In, Out]{in: in, res: res}:
		case <-ctx.Done():
			return
		}
	}
}

// Next returns the result of the next item, or the error that ended the pipeline once the
// results before it are all returned. It returns that error again on every later call. When
// ctx ends first, Next returns ctx's error and a later call returns the same result.
func (p *Pipeline[In, Out]) Next(ctx context.Context) (Out, error) {
	var zero Out
	if p.done {
		return zero, p.err
	}
	if p.slot == nil {
		select {
		case slot, ok := <-p.order:
			if !ok { // closed: only after Close cancelled the producer
				p.done, p.err = true, ErrClosed
				return zero, p.err
			}
			p.slot = slot
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
	var r result[Out]
	select {
	case r = <-p.slot:
		p.slot = nil
	case <-ctx.Done():
		return zero, ctx.Err() // the slot is kept: the next call waits on it again
	}
	if r.err != nil {
		p.done, p.err = true, r.err
		p.cancel()
	}
	return r.out, r.err
}

// Close stops the pipeline: no new item is read once next returns, and the workers finish
// the items they hold. It waits for the workers but not for a call of next in progress,
// which may block on I/O: close next's source too (after Close) to end it.
func (p *Pipeline[In, Out]) Close() {
	p.cancel()
	if !p.done {
		p.done, p.err = true, ErrClosed
	}
	go func() { // drain, so that the producer never blocks on a full order channel
		for range p.order {
		}
	}()
	p.wg.Wait()
}

// Ended is closed once the goroutine that calls next has returned: after Close, a caller
// that must not touch next's source while next runs waits for it.
func (p *Pipeline[In, Out]) Ended() <-chan struct{} { return p.ended }

func run[In, Out any](work func(In) (Out, error), in In) (r result[Out]) {
	defer func() {
		if v := recover(); v != nil {
			r = result[Out]{err: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
		}
	}()
	out, err := work(in)
	return result[Out]{out: out, err: err}
}

func call[In any](next func() (In, error)) (in In, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return next()
}
