package cli

import (
	"fmt"

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
