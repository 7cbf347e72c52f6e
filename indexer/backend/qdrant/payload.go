package qdrant

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/qdrant/go-client/qdrant"

	"github.com/kairos-rag/kairos/corpus"
)

// passagePayload is p as a payload: every field under its JSON name (so a new Passage field
// travels without a change here), plus the key, the token count and the generation.
func passagePayload(key uint32, p *corpus.Passage, tokens int, gen string) (map[string]*qdrant.Value, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("passage %s: %w", p.ID, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("passage %s: %w", p.ID, err)
	}
	out, err := qdrant.TryValueMap(m)
	if err != nil {
		return nil, fmt.Errorf("passage %s: payload: %w", p.ID, err)
	}
	out[fieldKey] = qdrant.NewValueInt(int64(key))
	out[fieldLen] = qdrant.NewValueInt(int64(tokens))
	out[fieldGen] = qdrant.NewValueString(gen)
	return out, nil
}

// payloadPassage decodes a passage from a payload made by passagePayload.
func payloadPassage(pl map[string]*qdrant.Value) (corpus.Passage, error) {
	m := make(map[string]any, len(pl))
	for k, v := range pl {
		if k == fieldKey || k == fieldLen || k == fieldGen {
			continue
		}
		m[k] = valueAny(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return corpus.Passage{}, err
	}
	var p corpus.Passage
	if err := json.Unmarshal(b, &p); err != nil {
		return corpus.Passage{}, fmt.Errorf("passage payload: %w", err)
	}
	return p, nil
}

func valueAny(v *qdrant.Value) any {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_NullValue:
		return nil
	case *qdrant.Value_BoolValue:
		return k.BoolValue
	case *qdrant.Value_IntegerValue:
		return k.IntegerValue
	case *qdrant.Value_DoubleValue:
		return k.DoubleValue
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_ListValue:
		out := make([]any, len(k.ListValue.GetValues()))
		for i, x := range k.ListValue.GetValues() {
			out[i] = valueAny(x)
		}
		return out
	case *qdrant.Value_StructValue:
		out := make(map[string]any, len(k.StructValue.GetFields()))
		for n, x := range k.StructValue.GetFields() {
			out[n] = valueAny(x)
		}
		return out
	}
	return nil
}

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
