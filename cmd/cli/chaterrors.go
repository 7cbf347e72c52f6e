package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/kairos-rag/kairos/chat"
)

// pipelineError is the error of a pipeline that could not be built, naming the flag that
// gives it what it lacks: the chat library lists what is missing ("needs: [example bank]"),
// not how to provide it.
func pipelineError(name string, d chat.Deps, err error) error {
	if (name == "msdp" || name == "sicl") && d.Bank == nil {
		return fmt.Errorf("pipeline %s needs an example bank: add --bank FILE; kairos bank topical --dir ../shared/data/topical-chat --out examples.jsonl, then kairos bank build --input examples.jsonl --out bank.kb, makes one (docs/chat.md)", name)
	}
	return fmt.Errorf("pipeline %s: %w", name, err)
}

// turnError is a failed turn's error as the CLI shows it: the kind of LLM failure and the flag
// that bears on it, as the server answers it. What the LLM wrote (an error body, a completion
// that could not be read) is unverified text and goes to the log at debug level only: printed
// in the error, it reached the user unchecked.
func turnError(err error, log *slog.Logger) error {
	var te *chat.TimeoutError
	var msg string
	switch {
	case errors.Is(err, chat.ErrLLMRateLimited):
		msg = "the LLM is rate limiting (it answered 429 Too Many Requests); retry later (--llm-concurrency bounds the calls in flight)"
	case errors.As(err, &te):
		msg = "the LLM did not answer within its timeout of " + te.Timeout.String() + " (--llm-timeout)"
	case errors.Is(err, chat.ErrLLMUpstream):
		msg = "the LLM server failed" + chat.Answered(err)
	case errors.Is(err, chat.ErrLLMRejected):
		msg = "the LLM server refused the request" + chat.Answered(err) + " (check --llm-url, --llm-model and the LLM key)"
	case errors.Is(err, chat.ErrLLMUnreachable):
		msg = "the LLM could not be reached (check --llm-url)"
	case errors.Is(err, chat.ErrLLMBadResponse), errors.Is(err, chat.ErrUnusable):
		msg = "the LLM's answer was not a usable completion"
	default:
		return fmt.Errorf("chat: %w", err)
	}
	if log != nil {
		log.Debug("chat turn failed", "err", err)
	}
	return fmt.Errorf("chat: %s; --log-level debug logs what it answered", msg)
}
