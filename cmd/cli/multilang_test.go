package cli

import (
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/server"
)

// TestMultilingualCLI: `kairos index --input dewiki --input frwiki` builds one index, stats
// lists its languages with their passage counts, `kairos search --language` selects one, and
// `kairos serve` answers WikiChat's language filters (2.1's search_filters, 2.0's languages)
// with the blocks of that language, each reporting its own. The fixtures are search's
// (search/testdata/multilang), whose tests cover the engines.
func TestMultilingualCLI(t *testing.T) {
	fixtures := filepath.Join("..", "..", "search", "testdata", "multilang")
	de, fr := filepath.Join(fixtures, "dewiki.xml"), filepath.Join(fixtures, "frwiki.xml")
	idx := filepath.Join(t.TempDir(), "index")
	out, errOut, err := runCLI(t, "index", "--input", de, "--input", fr, "--index", idx)
	if err != nil {
		t.Fatalf("index: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "multilingual") {
		t.Errorf("index summary does not say the index is multilingual:\n%s", out)
	}
	out, _, err = runCLI(t, "stats", "--index", idx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"de: 3 passages (analyzer de)", "fr: 3 passages (analyzer fr)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string // the one passage found ("" for none)
	}{
		{[]string{"Haus"}, "de:1#0"},
		{[]string{"cheval"}, "fr:1#0"},
		{[]string{"--language", "de", "cheval"}, ""},
		{[]string{"--language", "fr", "Paris"}, "fr:2#0"},
		{[]string{"--language", "de", "Paris"}, "de:3#0"},
	} {
		out, errOut, err := runCLI(t, append([]string{"search", "--index", idx, "--json"}, tc.args...)...)
		if err != nil {
			t.Fatalf("search %v: %v\n%s", tc.args, err, errOut)
		}
		var res struct {
			Hits []struct {
				ID       string `json:"passage_id"`
				Language string `json:"language"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search %v: %v\n%s", tc.args, err, out)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID+"/"+h.Language)
		}
		if want := tc.want + "/" + tc.want[:min(2, len(tc.want))]; tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("search %v: %v, want %q", tc.args, got, tc.want)
		}
	}

	ctx := context.Background()
	s, err := server.New(server.Options{
		Index:          newLiveIndex(indexer.Location{Dir: idx}, "", retrievalOptions{}),
		WikiChatRerank: []rerank.Stage{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	resp, body := call(t, ts, "GET", "/v1/stats", "")
	var st struct {
		Index struct {
			Analyzer  string         `json:"analyzer"`
			Languages map[string]int `json:"languages"`
		} `json:"index"`
	}
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("stats: %d %v %s", resp.StatusCode, err, body)
	}
	if st.Index.Analyzer != "multilingual" || !maps.Equal(st.Index.Languages, map[string]int{"de": 3, "fr": 3}) {
		t.Errorf("GET /v1/stats: analyzer %q, languages %v", st.Index.Analyzer, st.Index.Languages)
	}
	filter := func(typ, lang string) string {
		return `,"search_filters":[{"field_name":"language","filter_type":"` + typ + `","field_value":"` + lang + `"}]`
	}
	for _, tc := range []struct {
		name, body string
		want       []string // languages of the blocks, sorted
	}{
		{"no filter", `{"query":"Paris","num_blocks":5}`, []string{"de", "fr"}},
		{"eq fr", `{"query":"Paris","num_blocks":5` + filter("eq", "fr") + `}`, []string{"fr"}},
		{"eq de", `{"query":"Paris","num_blocks":5` + filter("eq", "de") + `}`, []string{"de"}},
		{"ne fr", `{"query":"Paris","num_blocks":5` + filter("ne", "fr") + `}`, []string{"de"}},
		{"eq it", `{"query":"Paris","num_blocks":5` + filter("eq", "it") + `}`, nil},
		{"German query, eq de", `{"query":"Häuser","num_blocks":5` + filter("eq", "de") + `}`, []string{"de"}},
		{"German query, eq fr", `{"query":"Häuser","num_blocks":5` + filter("eq", "fr") + `}`, nil},
	} {
		resp, body := call(t, ts, "POST", "/search", tc.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
		var blocks []struct {
			Results []struct {
				Meta map[string]any `json:"block_metadata"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &blocks); err != nil || len(blocks) != 1 {
			t.Fatalf("%s: %v %s", tc.name, err, body)
		}
		var got []string
		for _, b := range blocks[0].Results {
			got = append(got, b.Meta["language"].(string))
		}
		if slices.Sort(got); !slices.Equal(got, tc.want) {
			t.Errorf("%s: block languages %v, want %v", tc.name, got, tc.want)
		}
	}
	// WikiChat 2.0: "languages", and the parallel "language" list of each query.
	for _, tc := range []struct {
		languages string
		want      []string
	}{{`"fr"`, []string{"fr"}}, {`["de", "fr"]`, []string{"de", "fr"}}, {`["it"]`, nil}} {
		resp, body := call(t, ts, "POST", "/v2/search", `{"query":["Paris"],"num_blocks":5,"languages":`+tc.languages+`}`)
		if resp.StatusCode != 200 {
			t.Fatalf("v2 %s: %d %s", tc.languages, resp.StatusCode, body)
		}
		var res []struct {
			Language []string `json:"language"`
		}
		if err := json.Unmarshal(body, &res); err != nil || len(res) != 1 {
			t.Fatalf("v2 %s: %v %s", tc.languages, err, body)
		}
		got := res[0].Language
		if slices.Sort(got); !slices.Equal(got, tc.want) {
			t.Errorf("v2 languages %s: %v, want %v", tc.languages, got, tc.want)
		}
	}
}
