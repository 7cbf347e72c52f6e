package backend

import (
	"testing"
	"time"
)

func TestFilterMatch(t *testing.T) {
	d := func(s string) time.Time { v, _ := time.Parse("2006-01-02", s); return v }
	tests := []struct {
		name   string
		f      Filter
		date   time.Time
		source string
		want   bool
	}{
		{"no filter, undated", Filter{}, time.Time{}, "", true},
		{"from, on the day", Filter{DateFrom: d("2005-01-01")}, d("2005-01-01"), "", true},
		{"from, before", Filter{DateFrom: d("2005-01-01")}, d("2004-12-31"), "", false},
		{"from, undated fails", Filter{DateFrom: d("2005-01-01")}, time.Time{}, "", false},
		{"to, on the day", Filter{DateTo: d("2005-01-01")}, d("2005-01-01"), "", true},
		{"to, after", Filter{DateTo: d("2005-01-01")}, d("2005-01-02"), "", false},
		{"to, undated fails", Filter{DateTo: d("2005-01-01")}, time.Time{}, "", false},
		{"source listed", Filter{Sources: []string{"a", "b"}}, time.Time{}, "b", true},
		{"source not listed", Filter{Sources: []string{"a", "b"}}, time.Time{}, "c", false},
		{"source is case-sensitive", Filter{Sources: []string{"a"}}, time.Time{}, "A", false},
		{"both, both pass", Filter{DateFrom: d("2000-01-01"), Sources: []string{"a"}}, d("2001-01-01"), "a", true},
		{"both, date fails", Filter{DateFrom: d("2000-01-01"), Sources: []string{"a"}}, d("1999-01-01"), "a", false},
	}
	for _, tc := range tests {
		if got := tc.f.Match(tc.date, tc.source); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
		if tc.f.Empty() != (tc.f.DateFrom.IsZero() && tc.f.DateTo.IsZero() && len(tc.f.Sources) == 0) {
			t.Errorf("%s: Empty = %v", tc.name, tc.f.Empty())
		}
	}
}
