package timex

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Year bounds an explicit specification may name. Years below 1 (BC) are not supported; the
// upper bound only catches typos such as "year=20201".
const (
	MinYear = 1
	MaxYear = 9999
)

// ErrSpec is wrapped by every error Parse returns, so callers can tell a bad specification
// (a client mistake, HTTP 400) from other failures.
var ErrSpec = errors.New("invalid time spec")

// Parse reads a time specification. Accepted forms (case-insensitive, surrounding space ignored):
//
//	""  or "none"           no time need
//	"recent"                the newest information
//	"auto"                  infer from the query text (see Spec.Resolve)
//	"year=1994" or "1994"   one year
//	"1990..1998"            a closed range of years ("year=1990..1998" too)
//	"from 1990 to 1998"     the same range, as a person writes it
//
// Errors wrap ErrSpec and name the offending part: `invalid time spec "1998..1990": range is reversed
// (1998 > 1990)`.
func Parse(s string) (Spec, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "", string(KindNone):
		return Spec{Kind: KindNone}, nil
	case string(KindRecent):
		return Spec{Kind: KindRecent}, nil
	case string(KindAuto):
		return Spec{Kind: KindAuto}, nil
	}
	sp, err := parseRange(t)
	if err != nil {
		return Spec{}, fmt.Errorf("%w %q: %s", ErrSpec, s, err.Error())
	}
	return sp, nil
}

// parseRange reads the year and range forms; t is trimmed and lower-cased.
func parseRange(t string) (Spec, error) {
	body := t
	if rest, ok := strings.CutPrefix(t, "year="); ok {
		body = strings.TrimSpace(rest)
		if body == "" {
			return Spec{}, errors.New("year= needs a year, e.g. year=1994")
		}
	}
	var lo, hi string
	switch {
	case strings.Contains(body, ".."):
		lo, hi, _ = strings.Cut(body, "..")
	case strings.HasPrefix(body, "from "):
		var ok bool
		lo, hi, ok = strings.Cut(strings.TrimPrefix(body, "from "), " to ")
		if !ok {
			return Spec{}, errors.New(`"from" needs "to", e.g. from 1990 to 1998`)
		}
	default:
		y, err := parseYear(body)
		if err != nil {
			if body == t && !startsWithDigit(body) {
				return Spec{}, errors.New("want none, recent, auto, year=YYYY, YYYY..YYYY or from YYYY to YYYY")
			}
			return Spec{}, err
		}
		return Spec{Kind: KindRange, From: y, To: y}, nil
	}
	from, err := parseYear(strings.TrimSpace(lo))
	if err != nil {
		return Spec{}, fmt.Errorf("range start: %w", err)
	}
	to, err := parseYear(strings.TrimSpace(hi))
	if err != nil {
		return Spec{}, fmt.Errorf("range end: %w", err)
	}
	if from > to {
		return Spec{}, fmt.Errorf("range is reversed (%d > %d)", from, to)
	}
	return Spec{Kind: KindRange, From: from, To: to}, nil
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// parseYear accepts 1 to 4 ASCII digits naming a year in [MinYear, MaxYear].
func parseYear(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing year")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("year %q is not a number", s)
		}
	}
	if len(s) > 4 {
		return 0, fmt.Errorf("year %q has more than 4 digits", s)
	}
	y, _ := strconv.Atoi(s) // at most 4 digits: cannot fail
	if y < MinYear {
		return 0, fmt.Errorf("year %d is before year %d", y, MinYear)
	}
	return y, nil
}

// String formats s so that Parse(s.String()) == s for every Spec Parse returns:
// "none", "recent", "auto", "year=1994" or "1990..1998". The zero Spec prints as "none".
func (s Spec) String() string {
	switch s.Kind {
	case KindRecent, KindAuto:
		return string(s.Kind)
	case KindRange:
		if s.From == s.To {
			return "year=" + strconv.Itoa(s.From)
		}
		return strconv.Itoa(s.From) + ".." + strconv.Itoa(s.To)
	}
	return string(KindNone)
}

// IsNone reports whether s expresses no time need (the zero Spec or KindNone).
func (s Spec) IsNone() bool { return s.Kind == "" || s.Kind == KindNone }

// Validate reports whether s is a Spec Parse could have returned, for Specs built in code or
// decoded from JSON.
func (s Spec) Validate() error {
	switch s.Kind {
	case "", KindNone, KindRecent, KindAuto:
		if s.From != 0 || s.To != 0 {
			return fmt.Errorf("%w: kind %s takes no years", ErrSpec, s.Kind)
		}
		return nil
	case KindRange:
		if s.From < MinYear || s.To > MaxYear {
			return fmt.Errorf("%w: range %d..%d outside years %d..%d", ErrSpec, s.From, s.To, MinYear, MaxYear)
		}
		if s.From > s.To {
			return fmt.Errorf("%w: range is reversed (%d > %d)", ErrSpec, s.From, s.To)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown kind %q", ErrSpec, s.Kind)
}
