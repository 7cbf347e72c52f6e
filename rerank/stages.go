package rerank

import (
	"fmt"
	"strings"
)

// ParseStages reads a --rerank value: "none" (or ""), "time", "cross", "cross,time" or
// "wikichat". Other combinations are refused: time before cross would be erased by the
// cross-encoder, and the WikiChat sort exists to reproduce a published baseline as it was.
func ParseStages(s string) ([]Stage, error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	switch t {
	case "", "none":
		return nil, nil
	case "time":
		return []Stage{StageTime}, nil
	case "cross":
		return []Stage{StageCross}, nil
	case "cross,time":
		return []Stage{StageCross, StageTime}, nil
	case "wikichat":
		return []Stage{StageWikiChat}, nil
	case "time,cross":
		return nil, fmt.Errorf("rerank %q: the cross-encoder must run first (write cross,time): a time signal applied before it is erased", s)
	}
	return nil, fmt.Errorf("unknown rerank %q (want none, time, cross, cross,time or wikichat)", s)
}

// FormatStages is the inverse of ParseStages.
func FormatStages(st []Stage) string {
	if len(st) == 0 {
		return "none"
	}
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// validStages checks a stage list built in code (Query.Rerank) the way ParseStages would.
func validStages(st []Stage) error {
	_, err := ParseStages(FormatStages(st))
	return err
}
