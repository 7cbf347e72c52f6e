package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Message is one chat message of an OpenAI-compatible request.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// CompletionRequest is one LLM call. Zero Temperature and MaxTokens take the client's defaults.
type CompletionRequest struct {
	Stage       string // pipeline stage the call belongs to, for usage accounting and logs
	Messages    []Message
	Temperature *float64
	TopP        *float64 // nil: the server's default
	MaxTokens   int
	Stop        []string
}

// Usage counts tokens as the server reports them, or, for calls whose answer carried no usage,
// as the client estimates them (EstimatedCalls says how many of Calls were estimated), and
// what they cost at the client's prices.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Calls            int `json:"calls"`
	// EstimatedCalls counts the calls whose tokens are estimated from their text (the server
	// sent no usage): their counts are approximate.
	EstimatedCalls int `json:"estimated_calls,omitempty"`
	// Cost is the tokens priced at ClientOptions.PricePrompt and PriceCompletion (per 1,000
	// tokens, in whatever currency they are given); 0 without prices.
	Cost float64 `json:"cost,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.PromptTokens + o.PromptTokens, u.CompletionTokens + o.CompletionTokens,
		u.TotalTokens + o.TotalTokens, u.Calls + o.Calls, u.EstimatedCalls + o.EstimatedCalls, u.Cost + o.Cost}
}

// estimateTokens estimates a text's tokens at four bytes a token, the usual rule of thumb for
// English under GPT-style tokenizers; it is only used when the server reports no usage.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// estimatePromptTokens estimates a request's prompt tokens: its messages' text plus the few
// tokens each message's role and delimiters take in chat formats.
func estimatePromptTokens(msgs []Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + estimateTokens(m.Content)
	}
	return n
}

// Completion is the LLM's answer to one request.
type Completion struct {
	Text     string
	Usage    Usage
	Attempts int           // 1 + retries
	Duration time.Duration // wall time inside the client, retries and waits included
	// FinishReason is the server's finish_reason ("stop", "length", ...; "" when not given).
	FinishReason string
}

// Truncated reports whether the server stopped before the model finished: at the token limit
// ("length") or at its content filter ("content_filter", which cuts the text where the filter
// fired). Either way the text is cut off and must not be parsed as if it were complete.
func (c Completion) Truncated() bool {
	return c.FinishReason == "length" || c.FinishReason == "content_filter"
}

// Completer is what pipelines need from an LLM. *Client implements it; tests use fakes.
type Completer interface {
	Complete(ctx context.Context, req CompletionRequest) (Completion, error)
}

var _ Completer = (*Client)(nil)

// ClientOptions configures a Client. Zero fields take the defaults documented on each.
type ClientOptions struct {
	BaseURL string // e.g. "http://localhost:8000/v1"; "/chat/completions" is appended. Required.
	Model   string // Required.
	// APIKey, or else the environment variable APIKeyEnv, or else the first line of APIKeyFile.
	// All may be empty for local servers that take no key. The key is never logged or put in errors.
	APIKey     string
	APIKeyEnv  string
	APIKeyFile string

	Temperature float64  // default 0 (greedy: the pipelines want reproducible parses)
	MaxTokens   int      // default 512
	Stop        []string // default none

	Timeout time.Duration // per attempt; default 60s
	// MaxRetries is how many retries follow the first attempt on 429/5xx/connection errors;
	// default 4 (zero value); -1 disables. The --llm-retries flag maps 0 to -1: none.
	MaxRetries    int
	BackoffBase   time.Duration // first backoff ceiling, doubled per retry; default 500ms
	BackoffMax    time.Duration // backoff ceiling; default 20s
	MaxRetryAfter time.Duration // longest Retry-After honoured; longer waits fail the call; default 60s
	Concurrency   int           // in-flight requests; default 4

	// PricePrompt and PriceCompletion are the prices of 1,000 prompt and completion tokens,
	// in any currency, for Usage.Cost; 0 (the default) prices nothing.
	PricePrompt     float64
	PriceCompletion float64

	HTTPClient *http.Client // default: a client with no overall timeout (Timeout is per attempt)
	Logger     *slog.Logger // default: discard
	// Sleep waits between retries; tests replace it. Default: a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o *ClientOptions) setDefaults() {
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultLLMTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = 500 * time.Millisecond
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = 20 * time.Second
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = 60 * time.Second
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	o.HTTPClient = withSameOriginCredentials(o.HTTPClient)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
}

func (o *ClientOptions) validate() error {
	if o.BaseURL == "" {
		return errors.New("llm: base URL is required")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("llm: base URL %q is not an http(s) URL", o.BaseURL)
	}
	if o.Model == "" {
		return errors.New("llm: model is required")
	}
	if o.Temperature < 0 || o.Temperature > 2 {
		return fmt.Errorf("llm: temperature %v outside [0, 2]", o.Temperature)
	}
	if o.MaxTokens < 0 || o.Concurrency < 0 || o.Timeout < 0 {
		return errors.New("llm: max tokens, concurrency and timeout must not be negative")
	}
	if o.PricePrompt < 0 || o.PriceCompletion < 0 {
		return errors.New("llm: token prices must not be negative")
	}
	return nil
}

// Client calls an OpenAI-compatible /chat/completions endpoint (OpenAI, vLLM, llama.cpp, Ollama).
// It is safe for concurrent use; at most Options.Concurrency requests are in flight.
type Client struct {
	opts     ClientOptions
	endpoint string
	key      string
	sem      chan struct{}
	usage    *usageMeter
}

// NewClient validates opts and resolves the API key.
func NewClient(opts ClientOptions) (*Client, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	key, err := resolveKey(opts)
	if err != nil {
		return nil, err
	}
	return &Client{
		opts:     opts,
		endpoint: strings.TrimRight(opts.BaseURL, "/") + "/chat/completions",
		key:      key,
		sem:      make(chan struct{}, opts.Concurrency),
		usage:    newUsageMeter(),
	}, nil
}

func resolveKey(o ClientOptions) (string, error) {
	if o.APIKey != "" {
		return o.APIKey, nil
	}
	if o.APIKeyEnv != "" {
		if k := strings.TrimSpace(os.Getenv(o.APIKeyEnv)); k != "" {
			return k, nil
		}
	}
	if o.APIKeyFile != "" {
		b, err := os.ReadFile(o.APIKeyFile)
		if err != nil {
			// The error names the path, never the content.
			return "", fmt.Errorf("llm: reading API key file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if k := strings.TrimSpace(line); k != "" {
			return k, nil
		}
		return "", fmt.Errorf("llm: API key file %s is empty", o.APIKeyFile)
	}
	return "", nil
}

// Usage returns the tokens used so far, per stage name.
func (c *Client) Usage() map[string]Usage { return c.usage.snapshot() }

// Model is the model the client asks for.
func (c *Client) Model() string { return c.opts.Model }

type apiRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        *float64  `json:"top_p,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Stop        []string  `json:"stop,omitempty"`
	Stream      bool      `json:"stream"`
	// StreamOptions asks for a final usage chunk; servers that do not know it ignore it.
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type apiResponse struct {
	Choices []struct {
		Message      Message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// Complete sends req, retrying on 429, 5xx and connection errors with exponential backoff and
// full jitter, or after the server's Retry-After when it gives one.
func (c *Client) Complete(ctx context.Context, req CompletionRequest) (Completion, error) {
	body, err := c.encode(req, false)
	if err != nil {
		return Completion{}, err
	}
	out, err := c.withRetries(ctx, req.Stage, func() (Completion, time.Duration, error) { return c.attempt(ctx, body) })
	if err != nil {
		return out, err
	}
	return c.account(req, out), nil
}

// account completes a successful call's usage: counts the server did not report are estimated
// from the text and marked so (Usage.EstimatedCalls), the cost is priced, and the total is
// added to the client's per-stage meter.
func (c *Client) account(req CompletionRequest, out Completion) Completion {
	u := &out.Usage
	if u.EstimatedCalls > 0 {
		u.PromptTokens, u.CompletionTokens = estimatePromptTokens(req.Messages), estimateTokens(out.Text)
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	u.Cost = (float64(u.PromptTokens)*c.opts.PricePrompt + float64(u.CompletionTokens)*c.opts.PriceCompletion) / 1000
	c.usage.add(req.Stage, out.Usage)
	return out
}

// withRetries runs attempt under the concurrency limit until it succeeds, fails with an error
// that is not a *retryableError, or runs out of retries.
func (c *Client) withRetries(ctx context.Context, stage string, attempt func() (Completion, time.Duration, error)) (Completion, error) {
	start := time.Now()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Completion{}, c.failed(ctx, stage, 0, start, fmt.Errorf("llm %s: waiting for a slot: %w", stage, ctx.Err()))
	}
	defer func() { <-c.sem }()

	for n := 1; ; n++ {
		out, retryAfter, err := attempt()
		if err == nil {
			out.Attempts, out.Duration = n, time.Since(start)
			observe(ctx, CallRecord{Stage: stage, Model: c.opts.Model, Outcome: OutcomeOK, Attempts: n, Duration: out.Duration})
			return out, nil
		}
		var re *retryableError
		if !errors.As(err, &re) || n > c.opts.MaxRetries || ctx.Err() != nil {
			return Completion{}, c.failed(ctx, stage, n, start, fmt.Errorf("llm %s: attempt %d: %w", stage, n, err))
		}
		wait := c.backoff(n)
		if retryAfter > 0 {
			if retryAfter > c.opts.MaxRetryAfter {
				return Completion{}, c.failed(ctx, stage, n, start, fmt.Errorf("llm %s: attempt %d: server asks to retry after %s (limit %s): %w",
					stage, n, retryAfter, c.opts.MaxRetryAfter, err))
			}
			wait = retryAfter
		}
		c.opts.Logger.Warn("llm call failed, retrying", "stage", stage, "attempt", n,
			"wait", wait, "err", err.Error())
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return Completion{}, c.failed(ctx, stage, n, start, fmt.Errorf("llm %s: waiting to retry: %w", stage, err))
		}
	}
}

// failed classifies a call's final error (ErrLLMRateLimited, ...: see Outcome) and reports
// the call to ctx's observer.
func (c *Client) failed(ctx context.Context, stage string, attempts int, start time.Time, err error) error {
	err = classifyLLMError(ctx, err)
	observe(ctx, CallRecord{Stage: stage, Model: c.opts.Model, Outcome: Outcome(err), Attempts: attempts, Duration: time.Since(start)})
	return err
}

func (c *Client) encode(req CompletionRequest, stream bool) ([]byte, error) {
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("llm %s: no messages", req.Stage)
	}
	r := apiRequest{Model: c.opts.Model, Messages: req.Messages, Temperature: c.opts.Temperature,
		MaxTokens: c.opts.MaxTokens, Stop: c.opts.Stop, Stream: stream, TopP: req.TopP}
	if stream {
		r.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	if req.MaxTokens > 0 {
		r.MaxTokens = req.MaxTokens
	}
	if req.Stop != nil {
		r.Stop = req.Stop
	}
	return json.Marshal(r)
}

// backoff is "full jitter": uniform in [0, min(max, base*2^(attempt-1))], so that many clients
// hitting the same rate limit do not retry in lockstep.
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.opts.BackoffBase << (attempt - 1)
	if ceil <= 0 || ceil > c.opts.BackoffMax {
		ceil = c.opts.BackoffMax
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// retryableError marks failures worth another attempt.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// TimeoutError is an LLM call attempt that ran past ClientOptions.Timeout (--llm-timeout).
type TimeoutError struct {
	Timeout time.Duration
	Err     error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("LLM call timed out after %s (llm timeout): %v", e.Timeout, e.Err)
}
func (e *TimeoutError) Unwrap() error { return e.Err }

// StatusError is a non-2xx answer. Body is truncated and has the API key redacted: it is for
// logs, never for an end user (it may hold anything the LLM server wrote, addresses included).
type StatusError struct {
	Status int
	Body   string
	// RetryAfter is the server's Retry-After on a 429 or 5xx, 0 when it gave none.
	RetryAfter time.Duration
}

// Answered is ": it answered HTTP <status>" for an LLM's non-2xx answer in err's chain, else
// "": the status only, never its body, which may say anything about the LLM's side.
func Answered(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return ": it answered HTTP " + strconv.Itoa(se.Status)
	}
	return ""
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

func (c *Client) attempt(ctx context.Context, body []byte) (Completion, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	resp, retryAfter, err := c.post(ctx, actx, body)
	if err != nil {
		return Completion{}, retryAfter, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return Completion{}, 0, c.transportErr(ctx, actx, fmt.Errorf("reading response: %w", err))
	}
	return c.decode(raw)
}

// post sends one request. On success the caller owns resp.Body; a non-2xx answer is returned
// as a *StatusError (retryable for 429 and 5xx, with the server's Retry-After).
func (c *Client) post(ctx, actx context.Context, body []byte) (*http.Response, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("building request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.opts.HTTPClient.Do(hreq)
	if err != nil {
		return nil, 0, c.transportErr(ctx, actx, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	se := &StatusError{Status: resp.StatusCode, Body: truncate(c.redact(string(raw)), 300)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return nil, se.RetryAfter, &retryableError{se}
	}
	return nil, 0, se
}

// transportErr classifies a connection or read failure: retryable unless the caller gave up.
func (c *Client) transportErr(ctx, actx context.Context, err error) error {
	err = c.redactErr(err)
	if ctx.Err() != nil {
		return err
	}
	if actx.Err() != nil {
		// The attempt's own timeout, not the caller's deadline: the error names the LLM
		// timeout and does not wrap context.DeadlineExceeded, so that a caller reporting "timed
		// out after <its own timeout>" for a deadline error does not misstate which one fired.
		return &retryableError{&TimeoutError{Timeout: c.opts.Timeout, Err: errors.New(strings.ReplaceAll(err.Error(), context.DeadlineExceeded.Error(), "deadline exceeded"))}}
	}
	return &retryableError{err}
}

func (c *Client) decode(raw []byte) (Completion, time.Duration, error) {
	var ar apiResponse
	if err := json.Unmarshal(raw, &ar); err != nil {
		return Completion{}, 0, fmt.Errorf("decoding response (%s): %w", truncate(c.redact(string(raw)), 120), err)
	}
	if len(ar.Choices) == 0 {
		return Completion{}, 0, errors.New("response has no choices")
	}
	out := Completion{Text: ar.Choices[0].Message.Content, FinishReason: ar.Choices[0].FinishReason}
	if ar.Usage != nil {
		out.Usage = *ar.Usage
	} else {
		out.Usage.EstimatedCalls = 1 // account estimates it
	}
	out.Usage.Calls = 1
	return out, 0, nil
}

// redact removes the API key from text that came from outside (a server may echo headers).
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[REDACTED]")
}

func (c *Client) redactErr(err error) error {
	if c.key == "" || !strings.Contains(err.Error(), c.key) {
		return err
	}
	return errors.New(c.redact(err.Error()))
}

// withSameOriginCredentials returns a copy of hc whose redirects never carry the Authorization
// header to another origin (scheme, host and port). net/http itself strips it only when the host
// name changes, so a redirect to another port of the same host would receive the API key. The
// caller's own CheckRedirect, if any, still runs after.
func withSameOriginCredentials(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// sameOrigin compares scheme, host and port (default ports made explicit).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// maxRetryAfterHeader is the longest wait parseRetryAfter reports: longer asks are reported as
// this, which no sane MaxRetryAfter reaches, so the call fails instead of waiting.
const maxRetryAfterHeader = 365 * 24 * time.Hour

// parseRetryAfter reads delay-seconds or an HTTP date, capped at maxRetryAfterHeader; 0 means
// absent or unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0) { // negative, zero or NaN
			return 0
		}
		// A huge value ("1e12", "Inf") would overflow time.Duration into a negative wait, that
		// is an immediate retry: it is capped, and the cap is beyond any MaxRetryAfter.
		if secs >= maxRetryAfterHeader.Seconds() {
			return maxRetryAfterHeader
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfterHeader)
		}
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
