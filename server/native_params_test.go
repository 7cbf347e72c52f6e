package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestSearchGET: GET /v1/search?q=... answers as POST /v1/search with the same query as a
// body does (it answered 405): same hits, same defaults, same refusals, through the same
// validator. Each row is a URL query and the POST body it means.
func TestSearchGET(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct {
		name, query, body string
	}{
		{"q only", "q=" + url.QueryEscape(newbornQuery), `{"text":"` + newbornQuery + `"}`},
		{"text and k", "text=" + url.QueryEscape(newbornQuery) + "&k=3", `{"text":"` + newbornQuery + `","k":3}`},
		{"every kind of field", "q=malaria+vaccine&k=4&mode=bm25&explain=true&per_doc=1&rerank=time&time=recent&now=2020-01-01&recent_half_life_years=2.5&candidates=50",
			`{"text":"malaria vaccine","k":4,"mode":"bm25","explain":true,"per_doc":1,"rerank":"time","time":"recent","now":"2020-01-01","recent_half_life_years":2.5,"candidates":50}`},
		{"filters at the top level, lists repeated", "q=malaria&source=scifact&source=other&date_from=1990-01-01",
			`{"text":"malaria","filters":{"source":["scifact","other"],"date_from":"1990-01-01"}}`},
		{"a filter matching nothing", "q=malaria&source=nowhere", `{"text":"malaria","filters":{"source":"nowhere"}}`},
		{"min_score", "q=malaria&min_score=2", `{"text":"malaria","min_score":2}`},
		// The validator's refusals are the POST body's, word for word.
		{"k 0", "q=malaria&k=0", `{"text":"malaria","k":0}`},
		{"k over max_k", "q=malaria&k=301", `{"text":"malaria","k":301}`},
		{"unknown mode", "q=malaria&mode=sparse", `{"text":"malaria","mode":"sparse"}`},
		{"mode the index lacks", "q=malaria&mode=dense", `{"text":"malaria","mode":"dense"}`},
		{"empty text", "q=&k=3", `{"text":"","k":3}`},
		{"reversed dates", "q=malaria&date_from=2001-01-01&date_to=2000-01-01", `{"text":"malaria","filters":{"date_from":"2001-01-01","date_to":"2000-01-01"}}`},
		{"empty source", "q=malaria&source=", `{"text":"malaria","filters":{"source":""}}`},
	}
	strip := func(b []byte) string { // took_ms differs between two requests
		var v map[string]any
		if json.Unmarshal(b, &v) != nil {
			return string(b)
		}
		delete(v, "took_ms")
		out, _ := json.Marshal(v)
		return string(out)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			get := do(s, "GET", "/v1/search?"+tc.query, "")
			post := do(s, "POST", "/v1/search", tc.body)
			if get.Code != post.Code || strip(get.Body.Bytes()) != strip(post.Body.Bytes()) {
				t.Errorf("GET: %d %s\nPOST: %d %s", get.Code, get.Body, post.Code, post.Body)
			}
			for _, c := range []string{"/v1/collections/default/search?" + tc.query} {
				if w := do(s, "GET", c, ""); w.Code != post.Code || strip(w.Body.Bytes()) != strip(post.Body.Bytes()) {
					t.Errorf("%s: %d %s, want POST's", c, w.Code, w.Body)
				}
			}
		})
	}
	if w := do(s, "GET", "/v1/search?q="+url.QueryEscape(newbornQuery)+"&k=1", ""); w.Code != 200 || !strings.Contains(w.Body.String(), newbornID) {
		t.Errorf("GET finds nothing: %d %s", w.Code, w.Body)
	}
}

// TestSearchGETRefusals: what only a URL can get wrong is refused by the parameter's name.
func TestSearchGETRefusals(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	tests := []struct{ name, query, msg string }{
		{"no query", "", `missing the query: GET /v1/search?q=TEXT (or text=TEXT), with any field of POST /v1/search's query as a parameter`},
		{"q and text", "q=a&text=b", `parameters "q" and "text" are the same field: give one`},
		{"unknown parameter", "q=a&limit=3", `unknown parameter "limit" (did you mean "k"?)`},
		{"misspelt filter", "q=a&date_form=2001-01-01", `unknown parameter "date_form" (did you mean "date_from"?)`},
		{"a filter under its JSON path", "q=a&filters=x", `unknown parameter "filters"`},
		{"repeated single value", "q=a&k=1&k=2", `parameter "k" is given 2 times: want it once`},
		{"not an integer", "q=a&k=ten", `parameter "k": want an integer, got "ten"`},
		{"not a number", "q=a&alpha=NaN", `parameter "alpha": want a number, got "NaN"`},
		{"not a boolean", "q=a&explain=yes", `parameter "explain": want true or false, got "yes"`},
		{"a bad escape", "q=cats&source=%ZZ", `malformed query string: invalid URL escape "%ZZ"`},
		{"a semicolon", "q=cats&block_type=table;x", `malformed query string: invalid semicolon separator in query`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "GET", "/v1/search?"+tc.query, "")
			if w.Code != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", w.Code, w.Body)
			}
			wantError(t, w.Body.Bytes(), tc.msg)
		})
	}
}

// TestSearchGETParametersAreDocumented: every field of the query, and every filter, is a
// parameter of GET /v1/search, and openapi.json lists exactly those parameters.
func TestSearchGETParametersAreDocumented(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range doc.Components.Schemas["Query"].Properties {
		switch name {
		case "filters":
		case "text":
			want = append(want, "q")
		default:
			want = append(want, name)
		}
	}
	for name := range doc.Components.Schemas["Filters"].Properties {
		want = append(want, name)
	}
	slices.Sort(want)
	var accepted []string
	for name := range searchParams {
		if name != "text" { // q's other name
			accepted = append(accepted, name)
		}
	}
	slices.Sort(accepted)
	if !slices.Equal(accepted, want) {
		t.Errorf("parameters accepted %v,\nthe query's fields %v", accepted, want)
	}
	for _, path := range []string{"/v1/search", "/v1/collections/{collection}/search"} {
		var documented []string
		for _, p := range doc.Paths[path]["get"].Parameters {
			if p.In == "query" {
				documented = append(documented, p.Name)
			}
		}
		slices.Sort(documented)
		if !slices.Equal(documented, want) {
			t.Errorf("GET %s documents %v, want %v", path, documented, want)
		}
	}
}

func FuzzSearchParams(f *testing.F) {
	for _, s := range []string{"q=a", "q=a&k=3&mode=bm25", "text=x&source=a&source=b&date_from=2001", "q=a&k=1&k=2",
		"q=%zz", "q=a&explain=true&alpha=0.5&min_score=-1", "limit=3", "q=a&text=b", "q=a&rrf_k=99999999999999999999"} {
		f.Add(s)
	}
	o := Options{Index: (&fakeLoader{}).index()}
	o.SetDefaults()
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http answers a malformed query before the handler
		}
		qs, err := decodeSearchParams(v, o.limits())
		if err == nil && len(qs) != 1 {
			t.Fatalf("%q: %d queries", raw, len(qs))
		}
		checkDecoded(t, qs, err, o.limits())
	})
}
