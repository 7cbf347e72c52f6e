package server

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/rerank"
)

var fuzzSeeds = []string{
	`{"text":"` + newbornQuery + `","k":3}`,
	`{"queries":[{"text":"a","k":2,"mode":"hybrid","time":"1990..1998","rerank":["cross","time"],"explain":true,
	  "candidates":40,"filters":{"date_from":"2020-01-01","date_to":"2021-02-03T04:05:06Z","source":["x"]}}]}`,
	`{"queries":[]}`, `{"text":"a","rerank":5}`, `{"text": "x",}`, `[1]`, ``, `{"queries":null,"text":"é"}`,
	`{"query":["What is GPT-4?"],"num_blocks":3,"rerank":true,"num_blocks_to_rerank":10,
	  "search_filters":[{"field_name":"last_edit_date","filter_type":"gt","field_value":"2024-10-14T00:00:00"}]}`,
	`{"query":"What is GPT-4?","evi_num":5}`,
}

// checkDecoded holds for every accepted request: the limits the server promises hold.
func checkDecoded(t *testing.T, qs []rerank.Query, err error, l limits) {
	if err != nil {
		// classify is what answers: a request.Error (the validator's) or an apiError.
		if status, msg := classify(err, ""); status != 400 || msg == "" {
			t.Fatalf("error is not a 400 with a message: %#v", err)
		}
		return
	}
	if len(qs) < 1 || len(qs) > l.maxQueries {
		t.Fatalf("accepted %d queries", len(qs))
	}
	for i, q := range qs {
		n := utf8.RuneCountInString(q.Text)
		if strings.TrimSpace(q.Text) == "" || n > l.MaxChars || !utf8.ValidString(q.Text) {
			t.Fatalf("query %d: accepted text %q", i, q.Text)
		}
		if q.K < 1 || q.K > l.MaxK || q.Candidates < 0 || q.Candidates > l.MaxCandidates {
			t.Fatalf("query %d: accepted k=%d candidates=%d", i, q.K, q.Candidates)
		}
		if !q.Filters.DateFrom.IsZero() && !q.Filters.DateTo.IsZero() && q.Filters.DateTo.Before(q.Filters.DateFrom) {
			t.Fatalf("query %d: accepted reversed dates", i)
		}
	}
}

func FuzzDecodeSearchRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	o := Options{Index: (&fakeLoader{}).index()}
	o.SetDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		qs, _, err := decodeSearchRequest(body, o.limits())
		checkDecoded(t, qs, err, o.limits())
	})
}

func FuzzDecodeWikiChatRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	o := Options{Index: (&fakeLoader{}).index()}
	o.SetDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeWikiChatRequest(body, o)
		checkDecoded(t, req.qs, err, o.limits())
		if err == nil && req.shape == shapeV1 && len(req.qs) != 1 {
			t.Fatalf("v1 request gave %d queries", len(req.qs))
		}
	})
}

func FuzzDecodeWikiChatV20Request(f *testing.F) {
	for _, s := range append(fuzzSeeds, `{"query":["a","b"],"num_blocks":3,"languages":["en","fr"]}`,
		`{"query":["a"],"num_blocks":3,"languages":"fr"}`, `{"query":["a"],"num_blocks":3,"languages":[1]}`) {
		f.Add([]byte(s))
	}
	o := Options{Index: (&fakeLoader{}).index()}
	o.SetDefaults()
	o.Language = "en"
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeWikiChatV20(body, o)
		checkDecoded(t, req.qs, err, o.limits())
		if err == nil && req.shape != shapeV20 {
			t.Fatalf("shape %d", req.shape)
		}
	})
}
