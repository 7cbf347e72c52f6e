package timex

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"", Spec{Kind: KindNone}},
		{"none", Spec{Kind: KindNone}},
		{"  NONE ", Spec{Kind: KindNone}},
		{"recent", Spec{Kind: KindRecent}},
		{"Recent", Spec{Kind: KindRecent}},
		{"auto", Spec{Kind: KindAuto}},
		{"year=1994", Spec{Kind: KindRange, From: 1994, To: 1994}},
		{"YEAR= 1994", Spec{Kind: KindRange, From: 1994, To: 1994}},
		{"1994", Spec{Kind: KindRange, From: 1994, To: 1994}},
		{"887", Spec{Kind: KindRange, From: 887, To: 887}},
		{"1990..1998", Spec{Kind: KindRange, From: 1990, To: 1998}},
		{"1990 .. 1998", Spec{Kind: KindRange, From: 1990, To: 1998}},
		{"year=1990..1998", Spec{Kind: KindRange, From: 1990, To: 1998}},
		{"1990..1990", Spec{Kind: KindRange, From: 1990, To: 1990}},
		{"from 1990 to 1998", Spec{Kind: KindRange, From: 1990, To: 1998}},
		{"From 880 To 887", Spec{Kind: KindRange, From: 880, To: 887}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("Parse(%q) gave an invalid spec: %v", tc.in, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"soon", `invalid time spec "soon": want none, recent, auto, year=YYYY, YYYY..YYYY or from YYYY to YYYY`},
		{"year=", `invalid time spec "year=": year= needs a year, e.g. year=1994`},
		{"year=19x0", `invalid time spec "year=19x0": year "19x0" is not a number`},
		{"19x0", `invalid time spec "19x0": year "19x0" is not a number`},
		{"year=20201", `invalid time spec "year=20201": year "20201" has more than 4 digits`},
		{"0", `invalid time spec "0": year 0 is before year 1`},
		{"1998..1990", `invalid time spec "1998..1990": range is reversed (1998 > 1990)`},
		{"1990..", `invalid time spec "1990..": range end: missing year`},
		{"..1990", `invalid time spec "..1990": range start: missing year`},
		{"1990..19x8", `invalid time spec "1990..19x8": range end: year "19x8" is not a number`},
		{"1990...1998", `invalid time spec "1990...1998": range end: year ".1998" is not a number`},
		{"from 1990", `invalid time spec "from 1990": "from" needs "to", e.g. from 1990 to 1998`},
		{"from 1998 to 1990", `invalid time spec "from 1998 to 1990": range is reversed (1998 > 1990)`},
		{"from x to 1990", `invalid time spec "from x to 1990": range start: year "x" is not a number`},
		{"-1990", `invalid time spec "-1990": want none, recent, auto, year=YYYY, YYYY..YYYY or from YYYY to YYYY`},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", tc.in, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q) error\n got %q\nwant %q", tc.in, err.Error(), tc.want)
		}
		if !errors.Is(err, ErrSpec) {
			t.Errorf("Parse(%q) error does not wrap ErrSpec", tc.in)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, s := range []Spec{
		{}, {Kind: KindNone}, {Kind: KindRecent}, {Kind: KindAuto},
		{Kind: KindRange, From: 1994, To: 1994}, {Kind: KindRange, From: 880, To: 1998},
	} {
		got, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", s.String(), err)
		}
		want := s
		if want.Kind == "" {
			want.Kind = KindNone
		}
		if got != want {
			t.Errorf("Parse(%+v.String() = %q) = %+v", s, s.String(), got)
		}
	}
	if got := (Spec{Kind: KindRange, From: 1990, To: 1998}).String(); got != "1990..1998" {
		t.Errorf("String = %q", got)
	}
	if got := (Spec{Kind: KindRange, From: 1994, To: 1994}).String(); got != "year=1994" {
		t.Errorf("String = %q", got)
	}
}

func TestValidate(t *testing.T) {
	bad := []Spec{
		{Kind: "later"},
		{Kind: KindRecent, From: 1990},
		{Kind: KindRange, From: 1998, To: 1990},
		{Kind: KindRange, From: 0, To: 1990},
		{Kind: KindRange, From: 1990, To: 10000},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil || !errors.Is(err, ErrSpec) {
			t.Errorf("Validate(%+v) = %v, want an ErrSpec", s, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "none", "recent", "auto", "year=1994", "1994", "1990..1998",
		"from 1990 to 1998", "1998..1990", "year=", "from 1990", "9999..9999", "year=0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrSpec", s, err)
			}
			return
		}
		if err := sp.Validate(); err != nil {
			t.Fatalf("Parse(%q) = %+v, invalid: %v", s, sp, err)
		}
		again, err := Parse(sp.String())
		if err != nil || again != sp {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, sp, sp.String(), again, err)
		}
	})
}
