package server

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank/live"
)

// newEngineServer builds the JSON lines corpus of records into an index on the lexical engine
// (bleve or postings) and serves it, as kairos serve does (a live index of its location).
func newEngineServer(t *testing.T, lexical string, records []string) *Server {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(records, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loc := indexer.Location{Dir: filepath.Join(dir, "index")}
	ix, err := indexer.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Build(t.Context(), indexer.Options{Inputs: []indexer.InputSpec{{Path: in}},
		Build: indexer.BuildOptions{Lexical: lexical}}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Index: live.New(live.Opener(loc, live.Options{}), live.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFiltersOnEngines: the WikiChat and /v1 filters the fake engine's tests check pass the
// same passages on real indexes, bleve's and postings': a date bound at Go's zero instant is
// a bound (the dated passages after it, none before), and language codes compare as /v1
// compares them.
func TestFiltersOnEngines(t *testing.T) {
	records := []string{
		`{"id":"a","title":"Alpha","text":"The harbour lighthouse was rebuilt.","date":"2016-04-22"}`,
		`{"id":"b","title":"Beta","text":"The harbour lighthouse keeper retired.","date":"1990-01-01T10:00:00Z"}`,
		`{"id":"c","title":"Gamma","text":"The harbour lighthouse has no date."}`,
	}
	wiki := func(filters ...string) string {
		return `{"query":"harbour lighthouse","num_blocks":5,"search_filters":[` + strings.Join(filters, ",") + `]}`
	}
	f := func(field, op, v string) string {
		return `{"field_name":"` + field + `","filter_type":"` + op + `","field_value":"` + v + `"}`
	}
	v1 := func(filters string) string { return `{"text":"harbour lighthouse","k":5,"filters":` + filters + `}` }
	tests := []struct {
		name, path, body string
		want             []string // the passage ids found, sorted
	}{
		{"wikichat no filter", "/search", wiki(), []string{"a#0", "b#0", "c#0"}},
		{"wikichat gte zero instant", "/search", wiki(f("last_edit_date", "gte", "0001-01-01")), []string{"a#0", "b#0"}},
		{"wikichat lte zero instant", "/search", wiki(f("last_edit_date", "lte", "0001-01-01T00:00:00Z")), nil},
		{"wikichat gte 2000", "/search", wiki(f("last_edit_date", "gte", "2000-01-01")), []string{"a#0"}},
		{"wikichat language eq en-US", "/search", wiki(f("language", "eq", "en-US")), []string{"a#0", "b#0", "c#0"}},
		{"wikichat language ne en-US", "/search", wiki(f("language", "ne", "en-US")), nil},
		{"v1 date_from zero instant", "/v1/search", v1(`{"date_from":"0001-01-01T00:00:00Z"}`), []string{"a#0", "b#0"}},
		{"v1 date_to zero instant", "/v1/search", v1(`{"date_to":"0001-01-01T00:00:00Z"}`), nil},
		{"v1 language en-US", "/v1/search", v1(`{"language":"en-US"}`), []string{"a#0", "b#0", "c#0"}},
	}
	for _, lexical := range []string{indexer.LexicalBleve, indexer.LexicalPostings} {
		t.Run(lexical, func(t *testing.T) {
			s := newEngineServer(t, lexical, records)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					w := do(s, "POST", tc.path, tc.body)
					if w.Code != http.StatusOK {
						t.Fatalf("status %d: %s", w.Code, w.Body)
					}
					var got []string
					if tc.path == "/search" {
						var out []WikiChatQueryResult
						mustJSON(t, w.Body.Bytes(), &out)
						for _, b := range out[0].Results {
							got = append(got, b.BlockMetadata["passage_id"].(string))
						}
					} else {
						var out SearchResponse
						mustJSON(t, w.Body.Bytes(), &out)
						for _, h := range out.Results[0].Hits {
							got = append(got, h.PassageID)
						}
					}
					slices.Sort(got)
					if !slices.Equal(got, tc.want) {
						t.Errorf("found %q, want %q", got, tc.want)
					}
				})
			}
		})
	}
}
