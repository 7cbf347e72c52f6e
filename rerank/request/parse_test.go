package request

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

var testLimits = Limits{MaxChars: 20, MaxK: 50, MaxCandidates: 100}

func rng(f, t int) timex.Spec { return timex.Spec{Kind: timex.KindRange, From: f, To: t} }

var (
	none = timex.Spec{Kind: timex.KindNone}
	auto = timex.Spec{Kind: timex.KindAuto}
)

// base is what Parse makes of a query with text only: every default.
func base(text string) rerank.Query {
	return rerank.Query{Request: search.Request{Text: text, K: DefaultK}, Time: none}
}

func TestParseFields(t *testing.T) {
	day := func(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	endOf := func(y, m, d int) time.Time { return day(y, m, d).Add(24*time.Hour - time.Nanosecond) }
	tests := []struct {
		name string
		q    Query
		want func(*rerank.Query)
	}{
		{"defaults", Query{Text: "x"}, func(*rerank.Query) {}},
		{"k", Query{Text: "x", K: Int(50)}, func(q *rerank.Query) { q.K = 50 }},
		{"mode", Query{Text: "x", Mode: "hybrid"}, func(q *rerank.Query) { q.Mode = search.ModeHybrid }},
		{"time year", Query{Text: "x", Time: "1994"}, func(q *rerank.Query) { q.Time = rng(1994, 1994) }},
		{"time auto", Query{Text: "x", Time: "auto"}, func(q *rerank.Query) { q.Time = auto }},
		// The one time default: a stage that uses time, and no time, means auto.
		{"rerank time implies auto", Query{Text: "x", Rerank: List{"time"}}, func(q *rerank.Query) {
			q.Rerank, q.Time = []rerank.Stage{rerank.StageTime}, auto
		}},
		{"rerank wikichat implies auto", Query{Text: "x", Rerank: List{"wikichat"}}, func(q *rerank.Query) {
			q.Rerank, q.Time = []rerank.Stage{rerank.StageWikiChat}, auto
		}},
		{"rerank cross keeps none", Query{Text: "x", Rerank: List{"cross"}}, func(q *rerank.Query) {
			q.Rerank = []rerank.Stage{rerank.StageCross}
		}},
		{"explicit time none wins", Query{Text: "x", Time: "none", Rerank: List{"time"}}, func(q *rerank.Query) {
			q.Rerank = []rerank.Stage{rerank.StageTime}
		}},
		{"rerank as list", Query{Text: "x", Rerank: List{"cross", "time"}, Time: "recent"}, func(q *rerank.Query) {
			q.Rerank, q.Time = []rerank.Stage{rerank.StageCross, rerank.StageTime}, timex.Spec{Kind: timex.KindRecent}
		}},
		{"rerank none", Query{Text: "x", Rerank: List{"none"}}, func(*rerank.Query) {}},
		{"candidates", Query{Text: "x", Candidates: 100}, func(q *rerank.Query) { q.Candidates = 100 }},
		{"explain exact per_doc", Query{Text: "x", Explain: true, Exact: true, PerDoc: 1}, func(q *rerank.Query) {
			q.Explain, q.Exact, q.PerDoc = true, true, 1
		}},
		{"min_score", Query{Text: "x", MinScore: new(-0.5)}, func(q *rerank.Query) { q.MinScore = new(-0.5) }},
		{"fusion", Query{Text: "x", Fusion: "convex", Alpha: 0.25, RRFK: 7}, func(q *rerank.Query) {
			q.Fusion, q.Alpha, q.RRFK = search.FusionConvex, 0.25, 7
		}},
		{"now date", Query{Text: "x", Now: "2005-06-01"}, func(q *rerank.Query) { q.Now = day(2005, 6, 1) }},
		{"now RFC 3339", Query{Text: "x", Now: "2005-06-01T12:00:00+02:00"}, func(q *rerank.Query) {
			q.Now = time.Date(2005, 6, 1, 10, 0, 0, 0, time.UTC)
		}},
		{"half-life", Query{Text: "x", RecentHalfLifeYears: 0.25}, func(q *rerank.Query) { q.RecentHalfLifeYears = 0.25 }},
		{"filters", Query{Text: "x", Filters: Filters{DateFrom: "2020-01-01", DateTo: "2020-12-31", Source: List{"a", "b"}}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateFrom: day(2020, 1, 1), DateTo: endOf(2020, 12, 31), Sources: []string{"a", "b"}}
		}},
		{"block type filter", Query{Text: "x", Filters: Filters{BlockType: List{"table", "infobox"}}}, func(q *rerank.Query) {
			q.Filters = search.Filters{BlockTypes: []string{"table", "infobox"}}
		}},
		{"same-day filter", Query{Text: "x", Filters: Filters{DateFrom: "2020-01-01", DateTo: "2020-01-01"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateFrom: day(2020, 1, 1), DateTo: endOf(2020, 1, 1)}
		}},
		// A bound at Go's zero instant is a bound (DateBounds), not the zero value's "none":
		// a lower one passes the dated passages, an upper one none.
		{"date_from at the zero instant", Query{Text: "x", Filters: Filters{DateFrom: "0001-01-01"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateFrom: time.Time{}.Add(time.Nanosecond)}
		}},
		{"date_to at the zero instant", Query{Text: "x", Filters: Filters{DateTo: "0001-01-01T00:00:00Z"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{None: true}
		}},
		{"date_from before the zero instant", Query{Text: "x", Filters: Filters{DateFrom: "0000-06-30T00:00:00Z"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateFrom: time.Time{}.Add(time.Nanosecond)}
		}},
		{"date_to before the zero instant", Query{Text: "x", Filters: Filters{DateTo: "0000-12-31T00:00:00Z"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateTo: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), None: true}
		}},
		{"date_to, a bare year 1", Query{Text: "x", Filters: Filters{DateTo: "0001-01-01"}}, func(q *rerank.Query) {
			q.Filters = search.Filters{DateTo: endOf(1, 1, 1)}
		}},
		{"rerank blank is none", Query{Text: "x", Rerank: List{""}}, func(*rerank.Query) {}},
		{"text at the limit", Query{Text: strings.Repeat("é", 20)}, func(q *rerank.Query) { q.Text = strings.Repeat("é", 20) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.q, testLimits)
			if err != nil {
				t.Fatal(err)
			}
			want := base("x")
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		q     Query
		field string
		msg   string
	}{
		{"empty text", Query{Text: "  "}, "text", "empty query"},
		{"bad utf-8", Query{Text: "a\xff"}, "text", "not valid UTF-8"},
		{"long text", Query{Text: strings.Repeat("é", 21)}, "text", "21 characters, over the limit of 20 (max_query_chars)"},
		{"k zero", Query{Text: "x", K: Int(0)}, "k", "0: want a positive number of hits"},
		{"k negative", Query{Text: "x", K: Int(-1)}, "k", "-1: want a positive number of hits"},
		{"k over", Query{Text: "x", K: Int(51)}, "k", "51 is over the limit of 50 (max_k)"},
		{"mode", Query{Text: "x", Mode: "fuzzy"}, "mode", `"fuzzy": want bm25, dense or hybrid`},
		{"time", Query{Text: "x", Time: "soon"}, "time", `invalid time spec "soon": want none, recent, auto, year=YYYY, YYYY..YYYY or from YYYY to YYYY`},
		{"time reversed", Query{Text: "x", Time: "1998..1990"}, "time", `invalid time spec "1998..1990": range is reversed (1998 > 1990)`},
		{"rerank unknown", Query{Text: "x", Rerank: List{"llm"}}, "rerank", `unknown rerank "llm" (want none, time, cross, cross,time or wikichat)`},
		{"rerank order", Query{Text: "x", Rerank: List{"time", "cross"}}, "rerank", `rerank "time,cross": the cross-encoder must run first (write cross,time): a time signal applied before it is erased`},
		{"rerank empty item", Query{Text: "x", Rerank: List{"cross", " "}}, "rerank[1]", "empty string"},
		{"candidates negative", Query{Text: "x", Candidates: -1}, "candidates", "-1 is negative"},
		{"candidates over", Query{Text: "x", Candidates: 101}, "candidates", "101 is over the limit of 100 (max_candidates)"},
		{"per_doc negative", Query{Text: "x", PerDoc: -2}, "per_doc", "-2 is negative"},
		{"min_score NaN", Query{Text: "x", MinScore: new(math.NaN())}, "min_score", "NaN: want a finite number"},
		{"min_score infinite", Query{Text: "x", MinScore: new(math.Inf(1))}, "min_score", "+Inf: want a finite number"},
		{"fusion", Query{Text: "x", Fusion: "sum"}, "fusion", `"sum": want rrf or convex`},
		{"alpha over", Query{Text: "x", Alpha: 1.5}, "alpha", "1.5: want a weight in (0,1]"},
		{"alpha negative", Query{Text: "x", Alpha: -0.1}, "alpha", "-0.1: want a weight in (0,1]"},
		{"rrf_k", Query{Text: "x", RRFK: -3}, "rrf_k", "-3 is negative"},
		{"now", Query{Text: "x", Now: "June 2005"}, "now", `"June 2005" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{"half-life negative", Query{Text: "x", RecentHalfLifeYears: -1}, "recent_half_life_years", "-1: want a number of years in (0, 1000]"},
		{"half-life huge", Query{Text: "x", RecentHalfLifeYears: 1e9}, "recent_half_life_years", "1e+09: want a number of years in (0, 1000]"},
		{"date_from", Query{Text: "x", Filters: Filters{DateFrom: "01/02/2020"}}, "filters.date_from", `"01/02/2020" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{"date_to", Query{Text: "x", Filters: Filters{DateTo: "2020-02-30"}}, "filters.date_to", `"2020-02-30" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{"dates reversed", Query{Text: "x", Filters: Filters{DateFrom: "2021-01-01", DateTo: "2020-01-01"}}, "filters.date_to", "2020-01-01 is before date_from 2021-01-01"},
		{"empty source", Query{Text: "x", Filters: Filters{Source: List{"a", ""}}}, "filters.source[1]", "empty string"},
		{"source written as \"\"", Query{Text: "x", Filters: Filters{Source: List{""}}}, "filters.source[0]", "empty string"},
		{"language written as \"\"", Query{Text: "x", Filters: Filters{Language: List{""}}}, "filters.language[0]", "empty string"},
		{"block_type written as \"\"", Query{Text: "x", Filters: Filters{BlockType: List{""}}}, "filters.block_type[0]", `"" is not a block type (want text, table, infobox)`},
		{"date_to at the zero instant before date_from", Query{Text: "x", Filters: Filters{DateFrom: "2020-01-01", DateTo: "0001-01-01T00:00:00Z"}}, "filters.date_to", "0001-01-01T00:00:00Z is before date_from 2020-01-01"},
		{"block type", Query{Text: "x", Filters: Filters{BlockType: List{"text", "Table"}}}, "filters.block_type[1]", `"Table" is not a block type (want text, table, infobox)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.q, testLimits)
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if re.Field != tc.field || re.Msg != tc.msg {
				t.Errorf("error %s: %s\n want %s: %s", re.Field, re.Msg, tc.field, tc.msg)
			}
			if got := re.In("queries[2].").Error(); got != "queries[2]."+tc.field+": "+tc.msg {
				t.Errorf("In: %s", got)
			}
		})
	}
}

// Zero limits bound nothing: the CLI's case.
// A blank rerank asks for nothing, so a query of it alone sets no field: a batch may carry
// "rerank": "" at its top level, as it could before "" was kept.
func TestIsZeroBlankRerank(t *testing.T) {
	for _, l := range []List{nil, {""}, {" "}} {
		if !(Query{Rerank: l}).IsZero() {
			t.Errorf("rerank %q: not zero", l)
		}
	}
	if (Query{Rerank: List{"cross"}}).IsZero() {
		t.Error("rerank cross: zero")
	}
}

func TestParseNoLimits(t *testing.T) {
	q, err := Parse(Query{Text: strings.Repeat("word ", 1000), K: Int(100000), Candidates: 100000}, Limits{})
	if err != nil || q.K != 100000 || q.Candidates != 100000 {
		t.Fatalf("%v %d %d", err, q.K, q.Candidates)
	}
}

func TestListJSON(t *testing.T) {
	tests := []struct {
		in   string
		want List
		err  string
	}{
		{`{"rerank":"cross,time"}`, List{"cross,time"}, ""},
		{`{"rerank":["cross","time"]}`, List{"cross", "time"}, ""},
		// "" is kept (Parse reads a blank rerank as none and refuses a blank filter), not
		// dropped: "source": "" read as no list had let every source through.
		{`{"rerank":""}`, List{""}, ""},
		{`{"rerank":null}`, nil, ""},
		{`{"rerank":5}`, nil, "json: cannot unmarshal number into Go struct field Query.rerank of type request.List"},
		{`{"rerank":[1]}`, nil, "json: cannot unmarshal array with a non-string into Go struct field Query.rerank of type request.List"},
		{`{"rerank":{}}`, nil, "json: cannot unmarshal object into Go struct field Query.rerank of type request.List"},
	}
	for _, tc := range tests {
		var q Query
		err := json.Unmarshal([]byte(tc.in), &q)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(q.Rerank, tc.want) {
			t.Errorf("%s: %#v %v, want %#v", tc.in, q.Rerank, err, tc.want)
		}
	}
}

// FuzzParse: any JSON body either decodes and parses into a query that keeps every promise
// of the limits, or is refused with an *Error naming a field; nothing panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"text":"vitamin D in 2005","rerank":"time"}`,
		`{"text":"x","k":3,"mode":"hybrid","time":"1990..1998","rerank":["cross","time"],"candidates":40,"explain":true,"exact":true,"per_doc":1,"fusion":"convex","alpha":0.3,"rrf_k":10,"now":"2005-01-01","recent_half_life_years":0.5,"filters":{"date_from":"2020-01-01","date_to":"2021-02-03T04:05:06Z","source":["x"]}}`,
		`{"text":"é","k":0}`, `{"text":"a","rerank":"time,cross"}`, `{"text":"a","time":"from 1811 to 1827"}`,
		`{"text":"a","filters":{"date_to":"2020-01-01","date_from":"2020-01-02"}}`, `{"text":"\u00ff","now":"0001-01-01"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var qr Query
		if json.Unmarshal(body, &qr) != nil {
			return
		}
		q, err := Parse(qr, testLimits)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.Field == "" || re.Msg == "" {
				t.Fatalf("error %#v is not an *Error naming a field", err)
			}
			return
		}
		if strings.TrimSpace(q.Text) == "" || !utf8.ValidString(q.Text) || utf8.RuneCountInString(q.Text) > testLimits.MaxChars {
			t.Fatalf("accepted text %q", q.Text)
		}
		if q.K < 1 || q.K > testLimits.MaxK || q.Candidates < 0 || q.Candidates > testLimits.MaxCandidates || q.PerDoc < 0 {
			t.Fatalf("accepted k=%d candidates=%d per_doc=%d", q.K, q.Candidates, q.PerDoc)
		}
		if err := q.Time.Validate(); err != nil || q.Time.Kind == "" {
			t.Fatalf("accepted time %+v: %v", q.Time, err)
		}
		if _, err := rerank.ParseStages(rerank.FormatStages(q.Rerank)); err != nil {
			t.Fatalf("accepted stages %v", q.Rerank)
		}
		if q.Alpha < 0 || q.Alpha > 1 || q.RRFK < 0 || q.RecentHalfLifeYears < 0 {
			t.Fatalf("accepted fusion %v %v or half-life %v", q.Alpha, q.RRFK, q.RecentHalfLifeYears)
		}
		if f := q.Filters; !f.DateFrom.IsZero() && !f.DateTo.IsZero() && f.DateTo.Before(f.DateFrom) {
			t.Fatal("accepted reversed dates")
		}
		// Parsing is deterministic: the same request gives the same query.
		again, _ := Parse(qr, testLimits)
		if !reflect.DeepEqual(q, again) {
			t.Fatal("Parse is not deterministic")
		}
	})
}

func TestTotalHits(t *testing.T) {
	batch := func(ks ...int) []rerank.Query {
		qs := make([]rerank.Query, len(ks))
		for i, k := range ks {
			qs[i].K = k
		}
		return qs
	}
	reranked := func(k, candidates, n int) []rerank.Query {
		qs := make([]rerank.Query, n)
		for i := range qs {
			qs[i].K, qs[i].Candidates, qs[i].Rerank = k, candidates, []rerank.Stage{rerank.StageCross}
		}
		return qs
	}
	tests := []struct {
		name    string
		limits  Limits
		qs      []rerank.Query
		want    int
		wantErr string // substring of the error; "" means none
	}{
		{"no limit", Limits{}, batch(300, 300, 300), 900, ""},
		{"under", Limits{MaxTotalHits: 1000}, batch(300, 300, 300), 900, ""},
		{"at the limit", Limits{MaxTotalHits: 900}, batch(300, 300, 300), 900, ""},
		{"over names the limit and value", Limits{MaxTotalHits: 899}, batch(300, 300, 300), 900,
			"3 queries ask for 900 hits in all (the sum of their k), over the limit of 899 (max_total_hits)"},
		{"one query", Limits{MaxTotalHits: 10}, batch(11), 11, "over the limit of 10 (max_total_hits)"},
		{"reranked candidates weigh", Limits{MaxTotalHits: 1000}, reranked(10, 1000, 2), 2000,
			"2 queries ask for 2000 hits in all (the sum of their k, or of their candidates where they rerank), over the limit of 1000 (max_total_hits): ask for fewer queries or a smaller k or fewer candidates"},
		{"candidates without a rerank do not", Limits{MaxTotalHits: 20}, func() []rerank.Query {
			qs := reranked(10, 1000, 2)
			for i := range qs {
				qs[i].Rerank = nil
			}
			return qs
		}(), 20, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.limits.TotalHits(tt.qs)
			if got != tt.want {
				t.Errorf("total %d, want %d", got, tt.want)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Field != "queries" || !strings.Contains(re.Msg, tt.wantErr) {
				t.Fatalf("error %v, want a queries *Error containing %q", err, tt.wantErr)
			}
		})
	}
}
