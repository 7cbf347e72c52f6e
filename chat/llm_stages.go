package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// StageLLM is one stage's LLM: where it is, which model, and how it samples. A zero field
// keeps the default client's setting (--llm-url, --llm-model, ...); the sampling fields, when
// set, win over the pipeline's own settings for the stage (DefaultStageOptions), since the
// operator asked for them.
type StageLLM struct {
	URL         string   `json:"url,omitempty"`
	Model       string   `json:"model,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// APIKeyEnv and APIKeyFile say where this stage's key is. A stage on another origin than
	// the default client's (scheme, host, port) never receives the default key: it is another
	// provider, and the key is a secret of the first. Without either it sends no key.
	APIKeyEnv  string `json:"api_key_env,omitempty"`
	APIKeyFile string `json:"api_key_file,omitempty"`
}

// merge returns s with o's set fields over it.
func (s StageLLM) merge(o StageLLM) StageLLM {
	if o.URL != "" {
		s.URL = o.URL
	}
	if o.Model != "" {
		s.Model = o.Model
	}
	if o.Temperature != nil {
		s.Temperature = o.Temperature
	}
	if o.TopP != nil {
		s.TopP = o.TopP
	}
	if o.MaxTokens != 0 {
		s.MaxTokens = o.MaxTokens
	}
	if o.APIKeyEnv != "" {
		s.APIKeyEnv = o.APIKeyEnv
	}
	if o.APIKeyFile != "" {
		s.APIKeyFile = o.APIKeyFile
	}
	return s
}

// validate checks the fields that are set; field names are the config file's.
func (s StageLLM) validate() error {
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url: %q is not an http(s) URL", s.URL)
		}
	}
	if s.Temperature != nil && !(*s.Temperature >= 0 && *s.Temperature <= 2) {
		return fmt.Errorf("temperature: %v outside [0, 2]", *s.Temperature)
	}
	if s.TopP != nil && !(*s.TopP > 0 && *s.TopP <= 1) {
		return fmt.Errorf("top_p: %v outside (0, 1]", *s.TopP)
	}
	if s.MaxTokens < 0 {
		return fmt.Errorf("max_tokens: %d is negative", s.MaxTokens)
	}
	return nil
}

// LLMStageNames are the stages that call the LLM, by the names CompletionRequest.Stage and
// traces give them: the stages StageLLM settings may name.
func LLMStageNames() []string {
	return []string{StageQuery, StageSummarize, StageGenerate, StageClaims, StageVerify, StageDraft, StageRefine,
		StageCSTopic, StageCSDirect, StageCSQuery, StageMPCClarify, StageMPCMemory, StageMPCRespond, StageMPCSummary,
		StageMSDPKnow, StageMSDPResp, StageSICL}
}

// promptStages maps each prompt name (PromptNames) to the stage that renders it, so that a
// setting may name either.
var promptStages = map[string]string{
	PromptQuery: StageQuery, PromptSummarize: StageSummarize, PromptGenerate: StageGenerate, PromptClaims: StageClaims,
	PromptVerify: StageVerify, PromptDraft: StageDraft, PromptRefine: StageRefine, PromptCSTopic: StageCSTopic,
	PromptCSDirective: StageCSDirect, PromptCSQuery: StageCSQuery, PromptMPCClarify: StageMPCClarify,
	PromptMPCMemory: StageMPCMemory, PromptMPCRespond: StageMPCRespond, PromptMPCSummary: StageMPCSummary,
	PromptMSDPKnow: StageMSDPKnow, PromptMSDPResp: StageMSDPResp, PromptSICL: StageSICL,
}

// stageName resolves a stage or prompt name to its stage name.
func stageName(name string) (string, error) {
	if slices.Contains(LLMStageNames(), name) {
		return name, nil
	}
	if st, ok := promptStages[name]; ok {
		return st, nil
	}
	return "", fmt.Errorf("unknown stage %q (stages that call the LLM: %s; or their prompt names)", name, strings.Join(LLMStageNames(), ", "))
}

// ReadLLMConfig reads and validates an --llm-config file, the JSON
// {"stages": {"draft": {"model": "big", ...}, ...}} keyed by stage (or prompt) name, with
// StageLLM's fields. Every error names the file and the
// field ("stages.draft.temperature"); an unknown field is an error, so a misspelt setting is
// not silently ignored.
func ReadLLMConfig(path string) (map[string]StageLLM, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	st, err := parseLLMConfig(b)
	if err != nil {
		return nil, fmt.Errorf("llm config %s: %w", path, err)
	}
	return st, nil
}

// parseLLMConfig decodes a config's JSON, resolving prompt names to stage names. Each stage
// is decoded on its own, so that an error names its path ("stages.draft.temperature").
func parseLLMConfig(b []byte) (map[string]StageLLM, error) {
	var c struct {
		Stages map[string]json.RawMessage `json:"stages"`
	}
	if err := decodeConfig(b, &c); err != nil {
		return nil, configJSONError(b, "", err)
	}
	out := map[string]StageLLM{}
	for _, name := range slices.Sorted(maps.Keys(c.Stages)) {
		st, err := stageName(name)
		if err != nil {
			return nil, fmt.Errorf("stages.%s: %w", name, err)
		}
		if _, dup := out[st]; dup {
			return nil, fmt.Errorf("stages.%s: stage %s is given twice (by its stage and its prompt name)", name, st)
		}
		var s StageLLM
		if err := decodeConfig(c.Stages[name], &s); err != nil {
			return nil, configJSONError(b, "stages."+name, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("stages.%s.%w", name, err)
		}
		out[st] = s
	}
	return out, nil
}

// decodeConfig decodes exactly one JSON value into v, refusing unknown fields.
func decodeConfig(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// configJSONError says where a config's JSON went wrong: the field (under at) of a type
// error or an unknown field, or the line of a syntax error in the file b.
func configJSONError(b []byte, at string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	path := func(f string) string {
		if at == "" {
			return f
		}
		if f == "" {
			return at
		}
		return at + "." + f
	}
	switch {
	case errors.As(err, &te):
		want := map[string]string{"float64": "a number", "int": "an integer", "string": "a string", "map": "an object", "struct": "an object"}[te.Type.Kind().String()]
		return fmt.Errorf("%s: want %s, got JSON %s", path(te.Field), want, te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("line %d: %v", 1+bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n")), err)
	case strings.HasPrefix(err.Error(), "json: unknown field ") && at == "":
		return fmt.Errorf("unknown field %s: want {\"stages\": {\"STAGE\": {...}}}", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%s: unknown field %s (fields: url, model, temperature, top_p, max_tokens, api_key_env, api_key_file)",
			at, strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.Is(err, io.EOF):
		return errors.New("empty file: want a JSON object")
	}
	if at != "" {
		return fmt.Errorf("%s: %w", at, err)
	}
	return err
}

// ParseStageFlag reads one --llm-stage value: STAGE:FIELD=VALUE[,FIELD=VALUE...], with the
// config file's field names (url, model, temperature, top_p, max_tokens, api_key_env,
// api_key_file). A URL holding a comma goes in the config file.
func ParseStageFlag(v string) (stage string, s StageLLM, err error) {
	name, fields, ok := strings.Cut(v, ":")
	if !ok || name == "" || strings.TrimSpace(fields) == "" {
		return "", s, fmt.Errorf("%q: want STAGE:FIELD=VALUE[,FIELD=VALUE...], e.g. draft:model=big,temperature=0.2", v)
	}
	if stage, err = stageName(name); err != nil {
		return "", s, err
	}
	seen := map[string]bool{}
	for f := range strings.SplitSeq(fields, ",") {
		k, val, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || val == "" {
			return "", s, fmt.Errorf("%s: %q: want FIELD=VALUE", name, f)
		}
		if seen[k] {
			return "", s, fmt.Errorf("%s: %s is given twice", name, k)
		}
		seen[k] = true
		if err := s.set(k, val); err != nil {
			return "", s, fmt.Errorf("%s: %s: %w", name, k, err)
		}
	}
	if err := s.validate(); err != nil {
		return "", s, fmt.Errorf("%s: %w", name, err)
	}
	return stage, s, nil
}

// set sets one field by its config name.
func (s *StageLLM) set(field, v string) error {
	float := func() (*float64, error) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return &x, nil
	}
	var err error
	switch field {
	case "url":
		s.URL = v
	case "model":
		s.Model = v
	case "temperature":
		s.Temperature, err = float()
	case "top_p":
		s.TopP, err = float()
	case "max_tokens":
		s.MaxTokens, err = strconv.Atoi(v)
		if err != nil {
			err = fmt.Errorf("%q is not an integer", v)
		}
	case "api_key_env":
		s.APIKeyEnv = v
	case "api_key_file":
		s.APIKeyFile = v
	default:
		return errors.New("unknown field (fields: url, model, temperature, top_p, max_tokens, api_key_env, api_key_file)")
	}
	return err
}

// Router is a Completer that sends each call to its stage's LLM (CompletionRequest.Stage),
// with the stage's sampling settings, and every other stage's to the default client. Stages
// of the same URL, model and key share one Client, and so its concurrency limit. Pipelines
// take it as Deps.LLM like any Completer.
type Router struct {
	def    *Client
	stages map[string]route
}

// route is one configured stage: its client and the settings that override the request's.
type route struct {
	c *Client
	s StageLLM
}

var (
	_ Completer = (*Router)(nil)
	_ Streamer  = (*Router)(nil)
)

// NewRouter builds the default client from base and one client per distinct endpoint of
// stages (keyed by stage name, as ReadLLMConfig and ParseStageFlag return them).
func NewRouter(base ClientOptions, stages map[string]StageLLM) (*Router, error) {
	def, err := NewClient(base)
	if err != nil {
		return nil, err
	}
	r := &Router{def: def, stages: map[string]route{}}
	shared := map[[4]string]*Client{}
	for _, name := range slices.Sorted(maps.Keys(stages)) {
		s := stages[name]
		if _, err := stageName(name); err != nil {
			return nil, err
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("stage %s: %w", name, err)
		}
		c := def
		if s.URL != "" || s.Model != "" || s.APIKeyEnv != "" || s.APIKeyFile != "" {
			o := base
			if s.URL != "" && s.URL != base.BaseURL {
				o.BaseURL = s.URL
				if !sameOrigin(mustParse(s.URL), mustParse(base.BaseURL)) {
					o.APIKey, o.APIKeyEnv, o.APIKeyFile = "", "", "" // the default key stays with its provider
				}
			}
			if s.Model != "" {
				o.Model = s.Model
			}
			if s.APIKeyEnv != "" || s.APIKeyFile != "" {
				o.APIKey, o.APIKeyEnv, o.APIKeyFile = "", s.APIKeyEnv, s.APIKeyFile
			}
			k := [4]string{o.BaseURL, o.Model, o.APIKeyEnv, o.APIKeyFile}
			if c = shared[k]; c == nil {
				if c, err = NewClient(o); err != nil {
					return nil, fmt.Errorf("stage %s: %w", name, err)
				}
				shared[k] = c
			}
		}
		r.stages[name] = route{c: c, s: s}
	}
	return r, nil
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{}
	}
	return u
}

// pick returns the client of req's stage and req with the stage's sampling settings.
func (r *Router) pick(req CompletionRequest) (*Client, CompletionRequest) {
	rt, ok := r.stages[req.Stage]
	if !ok {
		return r.def, req
	}
	if rt.s.Temperature != nil {
		req.Temperature = rt.s.Temperature
	}
	if rt.s.TopP != nil {
		req.TopP = rt.s.TopP
	}
	if rt.s.MaxTokens > 0 {
		req.MaxTokens = rt.s.MaxTokens
	}
	return rt.c, req
}

// Complete sends req to its stage's client.
func (r *Router) Complete(ctx context.Context, req CompletionRequest) (Completion, error) {
	c, req := r.pick(req)
	return c.Complete(ctx, req)
}

// Stream streams req from its stage's client.
func (r *Router) Stream(ctx context.Context, req CompletionRequest, onDelta func(string)) (Completion, error) {
	c, req := r.pick(req)
	return c.Stream(ctx, req, onDelta)
}

// Default is the client of the stages no setting names.
func (r *Router) Default() *Client { return r.def }

// Endpoints describes where each configured stage goes, for the log at start: stage -> "model
// at URL"; the default client's stages are not listed.
func (r *Router) Endpoints() map[string]string {
	out := make(map[string]string, len(r.stages))
	for name, rt := range r.stages {
		out[name] = rt.c.opts.Model + " at " + rt.c.opts.BaseURL
	}
	return out
}

// Usage sums the clients' usage per stage.
func (r *Router) Usage() map[string]Usage {
	seen := map[*Client]bool{r.def: true}
	out := r.def.Usage()
	names := make([]string, 0, len(r.stages))
	for name := range r.stages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := r.stages[name].c
		if seen[c] {
			continue
		}
		seen[c] = true
		for st, u := range c.Usage() {
			out[st] = out[st].Add(u)
		}
	}
	return out
}
