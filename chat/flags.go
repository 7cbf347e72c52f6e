package chat

import (
	"flag"
	"strconv"
	"time"
)

// Defaults of ClientOptions, WikiChatOptions and MSDPOptions that command lines show, written
// once here and applied by the options' setDefaults.
const (
	DefaultMaxTokens   = 512              // ClientOptions.MaxTokens
	DefaultLLMTimeout  = 60 * time.Second // ClientOptions.Timeout, per attempt
	DefaultMaxRetries  = 4                // ClientOptions.MaxRetries
	DefaultConcurrency = 4                // ClientOptions.Concurrency
	// DefaultAPIKeyEnv is the variable command lines read the LLM API key from unless told
	// another (ClientOptions.APIKeyEnv; the library reads none by default).
	DefaultAPIKeyEnv        = "OPENAI_API_KEY"
	DefaultPassagesPerQuery = 3 // WikiChatOptions.PassagesPerQuery
	DefaultEvidencePerClaim = 2 // WikiChatOptions.EvidencePerClaim
	// DefaultMaxClaims is WikiChatOptions.MaxClaims: a reply of a few sentences holds a few
	// claims; more is a model repeating itself, and each one costs a retrieval and a call.
	DefaultMaxClaims = 10
)

// MSDP knowledge sources (MSDPOptions.Knowledge).
const (
	MSDPGenerate = "generate" // the knowledge prompt (default)
	MSDPRetrieve = "retrieve" // the top retrieved passage
)

// ConnectionFlags registers where the LLM is and how to authenticate: --llm-url, --llm-model,
// --llm-key-env (default DefaultAPIKeyEnv) and --llm-key-file. The key itself is never a flag:
// a command line is visible to every user of the machine.
func (o *ClientOptions) ConnectionFlags(fs *flag.FlagSet) {
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = DefaultAPIKeyEnv
	}
	fs.StringVar(&o.BaseURL, "llm-url", o.BaseURL, "OpenAI-compatible base `URL`, e.g. http://localhost:8000/v1")
	fs.StringVar(&o.Model, "llm-model", o.Model, "LLM model `name`")
	fs.StringVar(&o.APIKeyEnv, "llm-key-env", o.APIKeyEnv, "environment `variable` holding the LLM API key")
	fs.StringVar(&o.APIKeyFile, "llm-key-file", o.APIKeyFile, "`file` holding the LLM API key (used when the variable is empty)")
}

// Flags registers ConnectionFlags and the call settings, with their defaults: --temperature,
// --max-tokens, --llm-timeout, --llm-retries, --llm-concurrency, and the token prices of the
// cost estimate, --llm-price-prompt and --llm-price-completion. kairos chat and kairos serve
// both register them.
func (o *ClientOptions) Flags(fs *flag.FlagSet) {
	o.ConnectionFlags(fs)
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultLLMTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	fs.Float64Var(&o.Temperature, "temperature", o.Temperature, "sampling temperature")
	fs.IntVar(&o.MaxTokens, "max-tokens", o.MaxTokens, "max tokens per LLM call")
	fs.DurationVar(&o.Timeout, "llm-timeout", o.Timeout, "per-call timeout")
	fs.Var((*retriesFlag)(&o.MaxRetries), "llm-retries", "retries on 429/5xx/connection errors (0: none)")
	fs.IntVar(&o.Concurrency, "llm-concurrency", o.Concurrency, "LLM calls in flight")
	fs.Float64Var(&o.PricePrompt, "llm-price-prompt", o.PricePrompt, "`price` of 1,000 prompt tokens, any currency, for the cost estimate in traces and /metrics (0: none)")
	fs.Float64Var(&o.PriceCompletion, "llm-price-completion", o.PriceCompletion, "`price` of 1,000 completion tokens, as --llm-price-prompt")
}

// Flags registers --passages, --evidence, --max-claims and --commonsense-response with their
// defaults (setDefaults).
func (o *WikiChatOptions) Flags(fs *flag.FlagSet) {
	o.setDefaults()
	fs.IntVar(&o.PassagesPerQuery, "passages", o.PassagesPerQuery, "wikichat: passages per query")
	fs.IntVar(&o.EvidencePerClaim, "evidence", o.EvidencePerClaim, "wikichat: evidence passages per claim")
	fs.StringVar(&o.CommonsenseResponse, "commonsense-response", o.CommonsenseResponse, "commonsense: how it answers: paper (one call on the top search result, section 3.1) or wikichat (WikiChat's stages 2-7 on its query); every sentence is checked either way")
	fs.IntVar(&o.MaxClaims, "max-claims", o.MaxClaims, "wikichat: claims of the LLM's own reply checked per turn, after duplicates are dropped (the rest are not used)")
}

// Flags registers --sicl-approach (default SICLTop3).
func (o *SICLOptions) Flags(fs *flag.FlagSet) {
	if o.Approach == "" {
		o.Approach = SICLTop3
	}
	fs.StringVar(&o.Approach, "sicl-approach", o.Approach, "sicl: search (the most similar sample's answer, no LLM call), none, fixed, top1 or top3")
}

// Flags registers --msdp-knowledge (default MSDPGenerate).
func (o *MSDPOptions) Flags(fs *flag.FlagSet) {
	if o.Knowledge == "" {
		o.Knowledge = MSDPGenerate
	}
	fs.StringVar(&o.Knowledge, "msdp-knowledge", o.Knowledge, "msdp: generate or retrieve")
}

// retriesFlag is --llm-retries: the number a user types is the number of retries, 0 included.
// ClientOptions.MaxRetries reads 0 as "default" and -1 as "none", so 0 is stored as -1.
type retriesFlag int

func (f *retriesFlag) String() string {
	if f == nil || *f < 0 {
		return "0"
	}
	return strconv.Itoa(int(*f))
}

func (f *retriesFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if n < -1 {
		return strconv.ErrRange
	}
	if n == 0 {
		n = -1
	}
	*f = retriesFlag(n)
	return nil
}

// LLMStageOptions are the per-stage LLM settings of a command line: an --llm-config file,
// then each --llm-stage over it, field by field. kairos chat and kairos serve both take them;
// NewRouter builds the Completer.
type LLMStageOptions struct {
	ConfigFile string              // --llm-config
	Stages     map[string]StageLLM // --llm-stage, by stage name; a stage given twice merges field by field
}

// Flags registers --llm-config and the repeatable --llm-stage.
func (o *LLMStageOptions) Flags(fs *flag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "llm-config", o.ConfigFile, "JSON `file` of per-stage LLM settings: {\"stages\": {\"draft\": {\"url\": ..., \"model\": ..., \"temperature\": 0.2, \"top_p\": ..., \"max_tokens\": 300, \"api_key_env\": ..., \"api_key_file\": ...}}}")
	fs.Func("llm-stage", "one stage's LLM settings, `STAGE:FIELD=VALUE[,...]` with the --llm-config fields, e.g. draft:model=big,temperature=0.2 (repeatable; wins over --llm-config)", func(v string) error {
		stage, s, err := ParseStageFlag(v)
		if err != nil {
			return err
		}
		if o.Stages == nil {
			o.Stages = map[string]StageLLM{}
		}
		o.Stages[stage] = o.Stages[stage].merge(s)
		return nil
	})
}

// Resolve reads the config file, if any, and lays the --llm-stage settings over it.
func (o *LLMStageOptions) Resolve() (map[string]StageLLM, error) {
	out := map[string]StageLLM{}
	if o.ConfigFile != "" {
		st, err := ReadLLMConfig(o.ConfigFile)
		if err != nil {
			return nil, err
		}
		out = st
	}
	for name, s := range o.Stages {
		out[name] = out[name].merge(s)
	}
	return out, nil
}
