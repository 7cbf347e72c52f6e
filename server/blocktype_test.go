package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
)

// TestBlockTypeInResponses: every shape that returns passages says which block each came
// from (/v1/search, /v1/passages, WikiChat 2.1's block_metadata, WikiChat 2.0's block_type
// list, which used to say "text" whatever the passage), and the block_type filters of
// /v1/search and of WikiChat's search_filters select the passages of those types.
func TestBlockTypeInResponses(t *testing.T) {
	ps := []corpus.Passage{
		{ID: "1#0", DocID: "1", Title: "Squirrel", Text: "Squirrel | Squirrels are rodents.", Source: "w"},
		{ID: "1#1", DocID: "1", Title: "Squirrel", Text: "Squirrel | Squirrel; Kingdom: Animalia", Source: "w", BlockType: corpus.BlockInfobox},
		{ID: "1#2", DocID: "1", Title: "Squirrel", Section: "Species", Text: "Squirrel > Species | Squirrel species; Africa; 40", Source: "w", BlockType: corpus.BlockTable},
		{ID: "1#3", DocID: "1", Title: "Squirrel", Section: "Diet", Text: "Squirrel > Diet | A squirrel eats nuts.", Source: "w", BlockType: corpus.BlockText},
	}
	want := map[string]string{"1#0": "text", "1#1": "infobox", "1#2": "table", "1#3": "text"}
	l := &fakeLoader{passages: ps}
	s, err := New(Options{Index: l.index()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	post := func(path, body string, out any) {
		t.Helper()
		w := do(s, "POST", path, body)
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, body, w.Code, w.Body)
		}
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatalf("%s: %v: %s", path, err, w.Body)
		}
	}
	type result struct{ ids, types []string }
	tests := []struct {
		name, path, body string
		ids              []string // the passages expected, in any order
	}{
		{"v1 search", "/v1/search", `{"text": "squirrel", "k": 10}`, []string{"1#0", "1#1", "1#2", "1#3"}},
		{"v1 search, filter", "/v1/search", `{"text": "squirrel", "k": 10, "filters": {"block_type": ["table", "infobox"]}}`, []string{"1#1", "1#2"}},
		{"v1 search, filter text", "/v1/search", `{"text": "squirrel", "k": 10, "filters": {"block_type": "text"}}`, []string{"1#0", "1#3"}},
		{"wikichat 2.1", "/search", `{"query": "squirrel", "num_blocks": 10}`, []string{"1#0", "1#1", "1#2", "1#3"}},
		{"wikichat 2.1, filter", "/search", `{"query": "squirrel", "num_blocks": 10, "search_filters": [{"field_name": "block_type", "filter_type": "eq", "field_value": "infobox"}]}`, []string{"1#1"}},
		{"wikichat 2.0", "/v2/search", `{"query": ["squirrel"], "num_blocks": 10}`, []string{"1#0", "1#1", "1#2", "1#3"}},
		{"wikichat 2.0, filter", "/v2/search", `{"query": ["squirrel"], "num_blocks": 10, "search_filters": [{"field_name": "block_type", "filter_type": "ne", "field_value": "text"}]}`, []string{"1#1", "1#2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			switch tc.path {
			case "/v1/search":
				var r SearchResponse
				post(tc.path, tc.body, &r)
				for _, h := range r.Results[0].Hits {
					got.ids, got.types = append(got.ids, h.PassageID), append(got.types, h.BlockType)
				}
			case "/search":
				var r []WikiChatQueryResult
				post(tc.path, tc.body, &r)
				for _, b := range r[0].Results {
					id, _ := b.BlockMetadata["passage_id"].(string)
					typ, _ := b.BlockMetadata["block_type"].(string)
					got.ids, got.types = append(got.ids, id), append(got.types, typ)
				}
			case "/v2/search":
				// 2.0's blocks carry no passage id: the text identifies them here.
				var r []WikiChatV20Result
				post(tc.path, tc.body, &r)
				for i, text := range r[0].Text {
					for _, p := range ps {
						if body(p) == text {
							got.ids = append(got.ids, p.ID)
						}
					}
					got.types = append(got.types, r[0].BlockType[i])
				}
			}
			if len(got.ids) != len(got.types) {
				t.Fatalf("%d passages, %d block types", len(got.ids), len(got.types))
			}
			for i, id := range got.ids {
				if got.types[i] != want[id] {
					t.Errorf("%s: block type %q, want %q", id, got.types[i], want[id])
				}
			}
			slices.Sort(got.ids)
			if !slices.Equal(got.ids, tc.ids) {
				t.Errorf("passages %v, want %v", got.ids, tc.ids)
			}
		})
	}
	t.Run("v1 passage", func(t *testing.T) {
		w := do(s, "GET", "/v1/passages/1%232", "")
		var p PassageResponse
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.BlockType != "table" {
			t.Errorf("GET /v1/passages/1#2: %d %s", w.Code, w.Body)
		}
	})
}
