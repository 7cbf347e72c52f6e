package server

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// openAPIDoc is what the contract tests read of openapi.json.
type openAPIDoc struct {
	Paths map[string]map[string]struct {
		Responses map[string]any `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// jsonFields lists the JSON names of t's fields (embedded structs' included), and those that
// are always sent (no omitempty).
func jsonFields(t reflect.Type) (all, always []string) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") {
			always = append(always, name)
		}
	}
	sort.Strings(all)
	sort.Strings(always)
	return all, always
}

// The chat API's types and openapi.json name the same fields, and the fields always sent are
// the schema's required ones; every status the chat routes answer with is documented.
func TestOpenAPIChatSchemasMatchTypes(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	var doc openAPIDoc
	mustJSON(t, do(s, "GET", "/openapi.json", "").Body.Bytes(), &doc)
	for name, v := range map[string]any{
		"ChatRequest": ChatRequest{}, "ChatResponse": ChatResponse{}, "ChatCitation": ChatCitation{}, "ChatUsage": ChatUsage{},
		"ChatConversation": ChatConversation{}, "ChatTurn": ChatTurn{}, "ChatStreamError": ChatStreamError{},
	} {
		sc, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s is not in openapi.json", name)
			continue
		}
		all, always := jsonFields(reflect.TypeOf(v))
		var props []string
		for p := range sc.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		if !slices.Equal(all, props) {
			t.Errorf("%s: the type's fields %v, the schema's %v", name, all, props)
		}
		req := slices.Sorted(slices.Values(sc.Required))
		if name != "ChatRequest" && !slices.Equal(always, req) {
			t.Errorf("%s: always sent %v, required %v", name, always, req)
		}
	}
	for _, tt := range []struct {
		path, method string
		statuses     []string
	}{
		{"/v1/chat", "post", []string{"200", "400", "404", "429", "501", "502", "503", "504"}},
		{"/v1/chat/{id}", "get", []string{"200", "400", "404", "501"}},
		{"/v1/chat/{id}", "delete", []string{"200", "400", "404", "501"}},
	} {
		op, ok := doc.Paths[tt.path][tt.method]
		if !ok {
			t.Errorf("%s %s is not documented", tt.method, tt.path)
			continue
		}
		for _, st := range tt.statuses {
			if _, ok := op.Responses[st]; !ok {
				t.Errorf("%s %s: status %s is not documented", tt.method, tt.path, st)
			}
		}
	}
}
