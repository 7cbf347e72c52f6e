package live

import (
	"errors"
	"fmt"
)

// Errors of a live index, for errors.Is. A front end maps ErrUnsupported and
// ErrInvalidQuery to a client error (HTTP 400), ErrNotLoaded to "not ready" (503) and
// search.ErrNotFound, which Passage wraps, to "not found" (404).
var (
	// ErrUnsupported is wrapped by every refusal of a query this index, with the models it
	// was opened with, cannot answer: the request asks for too much, the server is not at
	// fault. ErrUnsupportedMode and ErrUnsupportedStage wrap it.
	ErrUnsupported = errors.New("not supported by this index")
	// ErrUnsupportedMode refuses a dense or hybrid query on a load without vectors or
	// without a query encoder.
	ErrUnsupportedMode = fmt.Errorf("search mode %w", ErrUnsupported)
	// ErrUnsupportedStage refuses the cross rerank stage without a cross-encoder.
	ErrUnsupportedStage = fmt.Errorf("rerank stage %w", ErrUnsupported)
	// ErrInvalidQuery refuses a query no index could answer (a time need out of range, from
	// a caller that did not validate it through rerank/request).
	ErrInvalidQuery = errors.New("invalid query")
	// ErrNotLoaded answers a query before the first load and after Close.
	ErrNotLoaded = errors.New("no index loaded yet")
)

// UnsupportedError is a query refused for what it asks of this index: What it asked for,
// and Fix, what would let it be served (the flag or command).
type UnsupportedError struct {
	Err       error // ErrUnsupportedMode or ErrUnsupportedStage
	What, Fix string
}

func (e *UnsupportedError) Error() string { return e.What + " is not supported: " + e.Fix }
func (e *UnsupportedError) Unwrap() error { return e.Err }

// InvalidQueryError is a query refused as invalid (ErrInvalidQuery), with the reason.
type InvalidQueryError struct{ Err error }

func (e *InvalidQueryError) Error() string   { return "invalid query: " + e.Err.Error() }
func (e *InvalidQueryError) Unwrap() []error { return []error{ErrInvalidQuery, e.Err} }
