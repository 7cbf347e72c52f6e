package request

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/internal/nearest"
)

// fieldAliases are the names clients of other search APIs use for a Kairos field: too far
// from the right name for an edit distance to find it.
var fieldAliases = map[string]string{
	"query": "text", "q": "text", "question": "text", "prompt": "text", "input": "text",
	"top_k": "k", "topk": "k", "top_n": "k", "limit": "k", "n": "k", "size": "k",
	"threshold": "min_score", "score_threshold": "min_score", "filter": "filters",
}

// SuggestField names the field of v's JSON form that an unknown field most likely meant: an
// alias, or the one nearest by edit distance (nearest.Name: at most 2, and less than half the
// name), or "" when none is close. Nested objects' fields count, since encoding/json does not say where
// the unknown field was. The server and the CLI's batch lines both ask it, so a wrong name
// gets the same answer everywhere.
func SuggestField(v any, unknown string) string {
	names := map[string]bool{}
	jsonNames(reflect.TypeOf(v), names, 0)
	u := strings.ToLower(unknown)
	if a, ok := fieldAliases[u]; ok && names[a] {
		return a
	}
	return nearest.Name(u, slices.Collect(maps.Keys(names)))
}

func jsonNames(t reflect.Type, out map[string]bool, depth int) {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || depth > 4 {
		return
	}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			jsonNames(f.Type, out, depth+1)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = true
		jsonNames(f.Type, out, depth+1)
	}
}
