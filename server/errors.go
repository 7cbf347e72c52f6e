package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/rerank/live"
	"github.com/kairos-rag/kairos/rerank/request"
	"github.com/kairos-rag/kairos/search"
)

// Errors a Chatter wraps to choose the HTTP status.
var (
	ErrNotFound = errors.New("not found")       // 404
	ErrInvalid  = errors.New("invalid request") // 400
)

// apiError is an error with the HTTP status it should be answered with, and for a refusal
// that may succeed later, when to retry.
type apiError struct {
	status int
	msg    string
	retry  time.Duration
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// ErrorResponse is the body of every error answer, on every path: Detail repeats Error,
// because FastAPI clients (WikiChat's) read "detail" and Kairos's read "error", and a
// client that calls both /v1 and /search should meet one shape.
type ErrorResponse struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// errorResponse is the one ErrorResponse of msg.
func errorResponse(msg string) ErrorResponse { return ErrorResponse{Error: msg, Detail: msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error":"encoding response failed","detail":"encoding response failed"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff") // never sniffed into HTML, whatever a string holds
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorResponse(msg))
}

// writeErr maps an error to a status (classify) and writes it, with Retry-After on an answer
// that may succeed later.
func writeErr(w http.ResponseWriter, err error, timeout string) {
	status, msg, retry := classifyRetry(err, timeout)
	if sw, ok := w.(*statusWriter); ok && sw.draining != nil {
		status, msg, retry = stoppedByShutdown(sw.draining.Load(), status, msg, retry)
	}
	msg += noteFailure(w, status, err)
	setRetryAfter(w, status, retry)
	writeError(w, status, msg)
}

// stoppedByShutdown is the answer to a request cancelled (499, for a client that went away)
// while the server drains: the shutdown's grace ended and the server stopped it. Its client
// is still there, and may retry elsewhere or once the server is back.
func stoppedByShutdown(draining bool, status int, msg string, retry time.Duration) (int, string, time.Duration) {
	if status == 499 && draining {
		return http.StatusServiceUnavailable, "the server is shutting down and stopped this request; retry", time.Second
	}
	return status, msg, retry
}

// setRetryAfter tells the client of an answer that may succeed later (overload, a timeout, no
// index loaded yet, an LLM that is rate limiting) when to try again, as WikiChat's and other
// HTTP clients' retries read it: after retry when known, else after a second.
func setRetryAfter(w http.ResponseWriter, status int, retry time.Duration) {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		w.Header().Set("Retry-After", retrySeconds(retry))
	}
}

// retrySeconds is a Retry-After value: whole seconds, rounded up, at least 1.
func retrySeconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}

// maxUpstreamRetryAfter caps the wait an LLM's Retry-After passes on to clients: a longer
// one (an hour, a year, a misconfigured proxy's) is not a wait a chat client can act on.
const maxUpstreamRetryAfter = 5 * time.Minute

func classify(err error, timeout string) (int, string) {
	status, msg, _ := classifyRetry(err, timeout)
	return status, msg
}

// classifyRetry is the one map from errors to statuses, for every endpoint: apiError carries
// its own; a refused request (*request.Error), ErrInvalid and what the live index cannot
// serve (live.ErrUnsupported: a mode without vectors or encoder, the cross stage without a
// cross-encoder; live.ErrInvalidQuery) 400; ErrNotFound and an unknown passage
// (search.ErrNotFound) 404; no index loaded (live.ErrNotLoaded) 503; overload 429;
// the chat layer's LLM failures 502 (a bad or failed upstream), 503 (an LLM that rate limits,
// a full conversation store) and 504 (a timeout), never with the upstream's words or
// address; deadline 504; anything else 500. retry, when not 0, is when to try again.
func classifyRetry(err error, timeout string) (status int, msg string, retry time.Duration) {
	var ae *apiError
	var re *request.Error
	var be *busyError
	var te *chat.TimeoutError
	var sf *chat.StoreFullError
	switch {
	case errors.As(err, &be):
		return http.StatusTooManyRequests, be.Error(), 0
	case errors.As(err, &ae):
		return ae.status, ae.msg, ae.retry
	case errors.As(err, &re):
		return http.StatusBadRequest, re.Error(), 0
	case errors.Is(err, ErrNotFound), errors.Is(err, search.ErrNotFound):
		return http.StatusNotFound, err.Error(), 0
	case errors.Is(err, ErrInvalid), errors.Is(err, live.ErrUnsupported), errors.Is(err, live.ErrInvalidQuery):
		return http.StatusBadRequest, err.Error(), 0
	case errors.Is(err, live.ErrNotLoaded):
		return http.StatusServiceUnavailable, err.Error(), 0
	case errors.As(err, &sf):
		return http.StatusServiceUnavailable, sf.Error(), sf.RetryAfter
	case errors.Is(err, chat.ErrLLMRateLimited):
		return http.StatusServiceUnavailable, "the LLM is rate limiting this server (it answered 429 Too Many Requests); retry later (--llm-concurrency and --chat-rate-limit bound the calls this server makes)",
			min(chat.LLMRetryAfter(err), maxUpstreamRetryAfter)
	case errors.As(err, &te):
		// The LLM client's own per-attempt timeout (--llm-timeout), not the request's.
		return http.StatusGatewayTimeout, "the LLM did not answer within its timeout of " + te.Timeout.String() + " (--llm-timeout)", 0
	case errors.Is(err, chat.ErrLLMUpstream):
		return http.StatusBadGateway, "the LLM server failed" + chat.Answered(err) + " (see the server log)", 0
	case errors.Is(err, chat.ErrLLMRejected):
		return http.StatusBadGateway, "the LLM server refused the request" + chat.Answered(err) +
			" (check --llm-url, --llm-model and the LLM key; see the server log)", 0
	case errors.Is(err, chat.ErrLLMUnreachable):
		return http.StatusBadGateway, "the LLM could not be reached (check --llm-url; see the server log)", 0
	case errors.Is(err, chat.ErrLLMBadResponse), errors.Is(err, chat.ErrUnusable):
		return http.StatusBadGateway, "the LLM's answer was not a usable completion (see the server log)", 0
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "request timed out after " + timeout + " (timeout)", 0
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this, but the access log records 499.
		return 499, "request canceled by the client", 0
	}
	if errors.Is(err, errSearchPanicked) {
		return http.StatusInternalServerError, "internal error: " + err.Error(), 0
	}
	// The server's own failure, whose text may name its files and their paths: the answer
	// says where to look, and the access log holds the error (noteFailure).
	return http.StatusInternalServerError, "internal error; see the server log", 0
}

// noteFailure records err, a 500 that w answers, for the access log, and returns what the
// answer adds to classify's message: the request's id.
func noteFailure(w http.ResponseWriter, status int, err error) string {
	sw, ok := w.(*statusWriter)
	if !ok || status != http.StatusInternalServerError || errors.Is(err, errSearchPanicked) {
		return ""
	}
	sw.failure = err
	return " (request " + sw.rid + ")"
}

// decodeStrict reads exactly one JSON value into v, rejecting unknown fields, fields in another
// case and repeated keys (exactKeys), and trailing data, and turns encoding/json's errors into messages a client can act on.
func decodeStrict(body []byte, v any) error {
	if err := exactKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if name, uerr := strconv.Unquote(f); uerr == nil {
				return unknownField(body, v, name)
			}
		}
		return jsonError(err, reflect.TypeOf(v))
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("malformed JSON: unexpected data after the top-level value")
	}
	return nil
}

// jsonError turns a decoding error into a 400; root is the type decoded into, which places
// a type error's field.
func jsonError(err error, root reflect.Type) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return badRequest("empty request body: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end of input")
	case errors.As(err, &se):
		return badRequest("malformed JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		te.Field = apiFieldPath(root, te.Field)
		if te.Field == "" {
			return badRequest("request body: want %s, got JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		want := jsonKind(te.Type.Kind().String())
		if te.Type == reflect.TypeFor[request.List]() {
			want = "a string or an array of strings"
		}
		return badRequest("field %q: want %s, got JSON %s", te.Field, want, te.Value)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return badRequest("unknown field %s", f)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return badRequest("malformed JSON: %v", err)
}

// apiFieldPath is a type error's field path as the API spells it. encoding/json joins the JSON
// names along the way, but names an embedded struct by its Go name ("WikiChatRequest.num_blocks"
// for WikiChat 2.0's request, which embeds 2.1's; "QueryRequest.k" for the single-query
// shorthand): those segments are no field of the API, and are dropped. The walk follows root's
// fields, so a JSON field that happens to share a Go type's name is kept.
func apiFieldPath(root reflect.Type, path string) string {
	if root == nil || path == "" {
		return path
	}
	t := root
	var out []string
	for seg := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			out = append(out, seg) // beyond what the types say (a map's keys): kept as written
			continue
		}
		f, ok := jsonField(t, seg)
		switch {
		case ok:
			out = append(out, seg)
			t = f.Type
		case embedded(t, seg) != nil:
			t = embedded(t, seg).Type // a Go name, not the API's: dropped
		default:
			out = append(out, seg)
		}
	}
	return strings.Join(out, ".")
}

// jsonField finds the field of struct t, or of a struct it embeds, that JSON calls name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if n, ok := jsonName(f); ok && n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonName is the name encoding/json gives struct field f, and false for a field it leaves
// out (unexported, "-", or an embedded struct whose fields it promotes).
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous && f.Tag.Get("json") == "" {
		return "", false
	}
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "-" {
		return "", false
	}
	if tag == "" {
		tag = f.Name
	}
	return tag, true
}

// embedded is the field of struct t, itself embedded at any depth, whose Go name is name, or nil.
func embedded(t reflect.Type, name string) *reflect.StructField {
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous && f.Name == name && f.Tag.Get("json") == "" {
			return &f
		}
	}
	return nil
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k string) string {
	switch k {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

// readBody reads a request body within the size limit.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	// Go's server does not decode request bodies: a compressed one read as malformed JSON
	// ("invalid character '\x1f'"), which sent the client looking at its JSON.
	if ce := strings.TrimSpace(r.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, &apiError{status: http.StatusUnsupportedMediaType,
			msg: "Content-Encoding " + ce + " is not supported: send the request body uncompressed"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("request body exceeds the limit of %d bytes (max_body_bytes)", limit)}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// The client stalled: its body did not arrive within the read timeout. The write
			// deadline ran out with it, so the answer gets a few seconds of its own (it was
			// never sent, and the log recorded a 400).
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(5 * time.Second))
			return nil, &apiError{status: http.StatusRequestTimeout, msg: "the request body did not arrive in time: send it whole, without pauses"}
		}
		return nil, badRequest("reading request body: %v", err)
	}
	return body, nil
}

// unknownField names an unknown field, where it is ("queries[2]: ", since encoding/json does
// not say) and the field it most likely meant.
func unknownField(body []byte, v any, name string) error {
	msg := fmt.Sprintf("unknown field %q", name)
	if s := request.SuggestField(v, name); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	var doc any
	if json.Unmarshal(body, &doc) == nil {
		if at, ok := keyPath(doc, name, ""); ok && at != "" {
			msg = at + ": " + msg
		}
	}
	return badRequest("%s", msg)
}

// keyPath returns the path ("queries[2]", "filters") of the first object holding key, in
// document order for arrays ("" for the top level).
func keyPath(v any, key, at string) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[key]; ok {
			return at, true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if at != "" {
				p = at + "." + k
			}
			if got, ok := keyPath(x[k], key, p); ok {
				return got, true
			}
		}
	case []any:
		for i, e := range x {
			if got, ok := keyPath(e, key, fmt.Sprintf("%s[%d]", at, i)); ok {
				return got, true
			}
		}
	}
	return "", false
}
