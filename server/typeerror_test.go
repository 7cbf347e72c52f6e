package server

import (
	"net/http"
	"testing"
)

// TestTypeErrorNamesAPIField: a value of the wrong JSON type is refused naming the field as
// the API spells it, never a Go struct's name: WikiChat 2.0's request embeds 2.1's, and
// encoding/json had put "WikiChatRequest." before every field it shares.
func TestTypeErrorNamesAPIField(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct{ name, path, body, msg string }{
		{"v2 num_blocks", "/v2/search", `{"query":"a","num_blocks":"3"}`, `field "num_blocks": want an integer, got JSON string`},
		{"v2 rerank", "/v2/search", `{"query":"a","num_blocks":3,"rerank":"yes"}`, `field "rerank": want a boolean, got JSON string`},
		{"v2 num_blocks_to_rerank", "/v2/search", `{"query":"a","num_blocks":3,"num_blocks_to_rerank":1.5}`, `field "num_blocks_to_rerank": want an integer, got JSON number 1.5`},
		{"v2 search_filters", "/v2/search", `{"query":"a","num_blocks":3,"search_filters":{}}`, `field "search_filters": want an array, got JSON object`},
		{"v2 filter field", "/v2/search", `{"query":"a","num_blocks":3,"search_filters":[{"field_name":3,"filter_type":"eq","field_value":"x"}]}`,
			`field "search_filters.field_name": want a string, got JSON number`},
		{"2.1 filter field", "/search", `{"query":"a","num_blocks":3,"search_filters":[{"field_name":"source","filter_type":true,"field_value":"x"}]}`,
			`field "search_filters.filter_type": want a string, got JSON bool`},
		{"v1 shorthand", "/v1/search", `{"text":"a","k":"3"}`, `field "k": want an integer, got JSON string`},
		{"v1 shorthand filter", "/v1/search", `{"text":"a","filters":{"date_from":3}}`, `field "filters.date_from": want a string, got JSON number`},
		{"v1 batch", "/v1/search", `{"queries":[{"text":"a","explain":"yes"}]}`, `field "queries.explain": want a boolean, got JSON string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { postWantError(t, s, tc.path, tc.body, http.StatusBadRequest, tc.msg) })
	}
}
