package chat

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"
)

// What went wrong with an LLM call, by what its caller can do about it. Every error a Client
// returns for a failed call matches one of them under errors.Is (or the caller's own
// context.Canceled / context.DeadlineExceeded), and still wraps the detail (*StatusError,
// *TimeoutError, the transport's error) for logs. The detail may hold what the LLM server
// wrote and its address: a server answering end users maps these kinds to its own words and
// keeps the detail in its log.
var (
	// ErrLLMRateLimited: the LLM answered 429 Too Many Requests (after the retries);
	// LLMRetryAfter says when it asked to be called again.
	ErrLLMRateLimited = errors.New("the LLM is rate limiting its callers")
	// ErrLLMUpstream: the LLM server failed, answering 5xx (after the retries).
	ErrLLMUpstream = errors.New("the LLM server failed")
	// ErrLLMRejected: the LLM server refused the request itself (a 4xx other than 429: a
	// wrong key, model or URL), which retrying does not mend.
	ErrLLMRejected = errors.New("the LLM server refused the request")
	// ErrLLMBadResponse: the LLM answered 2xx with something that is not a completion (not
	// JSON, no choices, a stream cut short or malformed).
	ErrLLMBadResponse = errors.New("the LLM's answer is not a completion")
	// ErrLLMUnreachable: no answer at all: connection refused or reset, no such host.
	ErrLLMUnreachable = errors.New("the LLM could not be reached")
	// ErrLLMTimeout: an attempt ran past ClientOptions.Timeout (--llm-timeout); the detail is a
	// *TimeoutError.
	ErrLLMTimeout = errors.New("the LLM did not answer within its timeout")
)

// Outcomes of an LLM call (CallRecord.Outcome, Outcome): "ok", or the kind of failure.
const (
	OutcomeOK          = "ok"
	OutcomeRateLimited = "rate_limited"
	OutcomeUpstream    = "upstream_error"
	OutcomeRejected    = "rejected"
	OutcomeBadResponse = "bad_response"
	OutcomeUnreachable = "unreachable"
	OutcomeTimeout     = "timeout"
	// OutcomeCanceled: the caller gave up (its context was cancelled or ran out), not the LLM.
	OutcomeCanceled = "canceled"
)

// Outcome names the kind of a Client's error: OutcomeOK for nil, OutcomeCanceled when the
// caller's context ended, else the ErrLLM* kind it matches (OutcomeBadResponse for one that
// matches none).
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrLLMRateLimited):
		return OutcomeRateLimited
	case errors.Is(err, ErrLLMUpstream):
		return OutcomeUpstream
	case errors.Is(err, ErrLLMRejected):
		return OutcomeRejected
	case errors.Is(err, ErrLLMUnreachable):
		return OutcomeUnreachable
	case errors.Is(err, ErrLLMTimeout):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCanceled
	}
	return OutcomeBadResponse
}

// LLMRetryAfter is the wait the LLM asked for with its 429 or 5xx (Retry-After), 0 when err
// carries none.
func LLMRetryAfter(err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
}

// llmError is a call's final error with its kind: errors.Is finds both.
type llmError struct {
	kind error
	err  error
}

func (e *llmError) Error() string   { return e.err.Error() }
func (e *llmError) Unwrap() []error { return []error{e.kind, e.err} }

// classifyLLMError gives a failed call's error its kind. The caller's own cancellation or
// deadline is left as it is: nothing went wrong with the LLM.
func classifyLLMError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var (
		se *StatusError
		te *TimeoutError
		ue *url.Error
		ne net.Error
		oe *net.OpError
	)
	kind := ErrLLMBadResponse
	switch {
	case errors.As(err, &se) && se.Status == http.StatusTooManyRequests:
		kind = ErrLLMRateLimited
	case errors.As(err, &se) && se.Status >= 500:
		kind = ErrLLMUpstream
	case errors.As(err, &se):
		kind = ErrLLMRejected
	case errors.As(err, &te):
		kind = ErrLLMTimeout
	case errors.As(err, &ue), errors.As(err, &oe), errors.As(err, &ne):
		kind = ErrLLMUnreachable
	}
	return &llmError{kind: kind, err: err}
}

// CallRecord is one LLM call as a CallObserver sees it, once it has ended.
type CallRecord struct {
	Stage    string // CompletionRequest.Stage
	Model    string
	Outcome  string // OutcomeOK, OutcomeRateLimited, ...
	Attempts int    // 1 + retries; 0 when the call never got a slot
	Duration time.Duration
}

type observerKey struct{}

// WithCallObserver returns a context under which every call a Client makes, through Complete
// or Stream, is reported to f when it ends, failed or not (as httptrace.ClientTrace rides a
// request's context): a server counts the LLM calls of each request, labelled by what it
// knows of the request. f runs on the calling goroutine and must be safe for concurrent use
// (a pipeline's stages call in parallel). An observer already in ctx is called too.
func WithCallObserver(ctx context.Context, f func(CallRecord)) context.Context {
	if prev, ok := ctx.Value(observerKey{}).(func(CallRecord)); ok {
		next := f
		f = func(r CallRecord) { prev(r); next(r) }
	}
	return context.WithValue(ctx, observerKey{}, f)
}

func observe(ctx context.Context, r CallRecord) {
	if f, ok := ctx.Value(observerKey{}).(func(CallRecord)); ok {
		f(r)
	}
}
