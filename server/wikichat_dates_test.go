package server

import (
	"testing"
	"time"
)

func TestParseWikiChatDate(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		// A date alone is its midnight UTC, as in Qdrant (not the whole day).
		{"2016-04-22", utc(2016, 4, 22, 0, 0, 0, 0), true},
		{"2016-04-22 00:00:00", utc(2016, 4, 22, 0, 0, 0, 0), true},
		{"2016-04-22T10:49", utc(2016, 4, 22, 10, 49, 0, 0), true},
		{"2016-04-22 10:49", utc(2016, 4, 22, 10, 49, 0, 0), true},
		{"2016-04-22t10:49:05", utc(2016, 4, 22, 10, 49, 5, 0), true},
		{"2016-04-22T10:49:05Z", utc(2016, 4, 22, 10, 49, 5, 0), true},
		{"2016-04-22T10:49:05.5Z", utc(2016, 4, 22, 10, 49, 5, 500000000), true},
		{"2016-04-22T10:49:05.123456789", utc(2016, 4, 22, 10, 49, 5, 123456789), true},
		{"2016-04-22T12:49:05+02:00", utc(2016, 4, 22, 10, 49, 5, 0), true},
		{"2016-04-22T12:49:05+0200", utc(2016, 4, 22, 10, 49, 5, 0), true},
		{"2016-04-22T08:49:05-02", utc(2016, 4, 22, 10, 49, 5, 0), true},
		{"2016-04-22T00:30+01:00", utc(2016, 4, 21, 23, 30, 0, 0), true},
		{"2016-02-29", utc(2016, 2, 29, 0, 0, 0, 0), true},
		{"2015-02-29", time.Time{}, false},
		{"2016-13-01", time.Time{}, false},
		{"2016-04-31", time.Time{}, false},
		{"2016-04-22T24:00", time.Time{}, false},
		{"2016-04-22T10", time.Time{}, false},
		{"2016-04-22T10:49:05.", time.Time{}, false},
		{"2016-04-22T10:49:05.1234567891", time.Time{}, false},
		{"2016-04-22T10:49:05+25:00", time.Time{}, false},
		{"2016-04-22T10:49:05 UTC", time.Time{}, false},
		{"2016-04-22X10:49", time.Time{}, false},
		{"2016-4-22", time.Time{}, false},
		{"16-04-22", time.Time{}, false},
		{"last week", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tc := range tests {
		got, err := parseWikiChatDate(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (!got.Equal(tc.want) || got.Location() != time.UTC) {
			t.Errorf("%q = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzParseWikiChatDate: the parser never panics, returns UTC, and what it accepts agrees
// with Go's RFC 3339 parser wherever that one also accepts the text.
func FuzzParseWikiChatDate(f *testing.F) {
	for _, s := range []string{"2016-04-22", "2016-04-22 00:00:00", "2016-04-22T10:49", "2016-04-22T10:49:05.5Z",
		"2016-04-22T12:49:05+02:00", "2016-04-22T12:49:05+0200", "9999-12-31T23:59:59.999999999-23:59", "2016-04-22T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseWikiChatDate(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("%q: %s is not UTC", s, got)
		}
		if ref, rerr := time.Parse(time.RFC3339Nano, s); rerr == nil && !ref.Equal(got) {
			t.Fatalf("%q = %s, RFC 3339 says %s", s, got, ref)
		}
	})
}

// TestWikiChatDateFilterBounds: a date alone is the instant of its midnight, so gt moves past
// that instant only (not past the whole day) and lte stops at it; crossed bounds pass nothing.
func TestWikiChatDateFilterBounds(t *testing.T) {
	mid := time.Date(2016, 4, 22, 0, 0, 0, 0, time.UTC)
	ns := time.Nanosecond
	tests := []struct {
		name     string
		filters  []WikiChatFilter
		from, to time.Time
		none     bool
	}{
		{"gt", []WikiChatFilter{{"last_edit_date", "gt", []byte(`"2016-04-22"`)}}, mid.Add(ns), time.Time{}, false},
		{"gte", []WikiChatFilter{{"last_edit_date", "gte", []byte(`"2016-04-22"`)}}, mid, time.Time{}, false},
		{"lte", []WikiChatFilter{{"last_edit_date", "lte", []byte(`"2016-04-22"`)}}, time.Time{}, mid, false},
		{"lt", []WikiChatFilter{{"last_edit_date", "lt", []byte(`"2016-04-22 00:00:00"`)}}, time.Time{}, mid.Add(-ns), false},
		{"eq", []WikiChatFilter{{"last_edit_date", "eq", []byte(`"2016-04-22T00:00"`)}}, mid, mid, false},
		{"eq and gt cross", []WikiChatFilter{{"last_edit_date", "eq", []byte(`"2016-04-22"`)},
			{"last_edit_date", "gt", []byte(`"2016-04-22"`)}}, mid.Add(ns), mid, true},
		// Bounds at Go's zero instant, which search.Filters reads as none: a lower one passes
		// the dated passages (after the zero instant, an undated passage's), an upper one none.
		{"gte zero instant", []WikiChatFilter{{"last_edit_date", "gte", []byte(`"0001-01-01"`)}}, time.Time{}.Add(ns), time.Time{}, false},
		{"gt just before the zero instant", []WikiChatFilter{{"last_edit_date", "gt", []byte(`"0000-12-31T23:59:59.999999999Z"`)}}, time.Time{}.Add(ns), time.Time{}, false},
		{"lte zero instant", []WikiChatFilter{{"last_edit_date", "lte", []byte(`"0001-01-01T00:00:00Z"`)}}, time.Time{}, time.Time{}, true},
		{"lt just after the zero instant", []WikiChatFilter{{"last_edit_date", "lt", []byte(`"0001-01-01T00:00:00.000000001Z"`)}}, time.Time{}, time.Time{}, true},
		{"eq zero instant", []WikiChatFilter{{"last_edit_date", "eq", []byte(`"0001-01-01 00:00"`)}}, time.Time{}.Add(ns), time.Time{}, true},
		{"gte zero instant and lte", []WikiChatFilter{{"last_edit_date", "gte", []byte(`"0001-01-01"`)},
			{"last_edit_date", "lte", []byte(`"2016-04-22"`)}}, time.Time{}.Add(ns), mid, false},
	}
	for _, tc := range tests {
		f, err := wikiChatFilters(tc.filters, "en")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !f.DateFrom.Equal(tc.from) || !f.DateTo.Equal(tc.to) || f.None != tc.none {
			t.Errorf("%s: filters %+v, want from %s to %s none %v", tc.name, f, tc.from, tc.to, tc.none)
		}
	}
}

// TestZeroInstantDateBound: a date bound at Go's zero instant is a bound, on /search and on
// /v1/search: the SciFact passages are undated, so any bound keeps none of them (it had
// read as no bound, and kept them all).
func TestZeroInstantDateBound(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	wiki := func(op, v string) string {
		return `{"query":"malaria","num_blocks":3,"search_filters":[{"field_name":"last_edit_date","filter_type":"` + op + `","field_value":"` + v + `"}]}`
	}
	v1 := func(filters string) string { return `{"text":"malaria","k":3,"filters":` + filters + `}` }
	tests := []struct {
		name, path, body string
		status           int
		hits             int // -1: an error
		msg              string
	}{
		{"wikichat no bound", "/search", `{"query":"malaria","num_blocks":3}`, 200, 3, ""},
		{"wikichat gte", "/search", wiki("gte", "0001-01-01"), 200, 0, ""},
		{"wikichat lte", "/search", wiki("lte", "0001-01-01T00:00:00Z"), 200, 0, ""},
		{"wikichat eq", "/search", wiki("eq", "0001-01-01"), 200, 0, ""},
		{"v1 no bound", "/v1/search", `{"text":"malaria","k":3}`, 200, 3, ""},
		{"v1 date_from date", "/v1/search", v1(`{"date_from":"0001-01-01"}`), 200, 0, ""},
		{"v1 date_from instant", "/v1/search", v1(`{"date_from":"0001-01-01T00:00:00Z"}`), 200, 0, ""},
		{"v1 date_to instant", "/v1/search", v1(`{"date_to":"0001-01-01T00:00:00Z"}`), 200, 0, ""},
		{"v1 date_to instant in a batch", "/v1/search", `{"queries":[{"text":"malaria","k":3},{"text":"malaria","k":3,"filters":{"date_to":"0001-01-01T00:00:00+00:00"}}]}`, 200, 0, ""},
		{"v1 date_to instant before date_from", "/v1/search", v1(`{"date_from":"2020-01-01","date_to":"0001-01-01T00:00:00Z"}`), 400, -1,
			"filters.date_to: 0001-01-01T00:00:00Z is before date_from 2020-01-01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "POST", tc.path, tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if tc.hits < 0 {
				wantError(t, w.Body.Bytes(), tc.msg)
				return
			}
			var n int
			if tc.path == "/search" {
				var out []WikiChatQueryResult
				mustJSON(t, w.Body.Bytes(), &out)
				n = len(out[len(out)-1].Results)
			} else {
				var out SearchResponse
				mustJSON(t, w.Body.Bytes(), &out)
				n = len(out.Results[len(out.Results)-1].Hits)
			}
			if n != tc.hits {
				t.Errorf("%d hits, want %d: %.300s", n, tc.hits, w.Body)
			}
		})
	}
}
