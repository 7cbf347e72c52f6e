package server

import (
	"errors"
	"strconv"
	"time"
)

// parseWikiChatDate reads a last_edit_date filter value as Qdrant reads a datetime payload
// (WikiChat's own retriever filters in Qdrant, so its clients write what Qdrant accepts):
// RFC 3339 with a 'T', 't' or space between date and time, seconds and their fraction
// optional, the zone optional (then UTC), and a date alone meaning its midnight UTC. A date
// alone is an instant, not a day: "gt 2016-04-22" passes a passage dated 10:00 that day.
//
// Accepted: 2016-04-22, 2016-04-22T10:49, 2016-04-22 10:49:00, 2016-04-22T10:49:00.123Z,
// 2016-04-22T12:49:00+02:00 (also +0200 and +02).
func parseWikiChatDate(s string) (time.Time, error) {
	p := dateParser{s: s}
	y := p.digits(4)
	p.sep('-')
	mo := p.digits(2)
	p.sep('-')
	d := p.digits(2)
	if p.err != nil {
		return time.Time{}, p.err
	}
	var h, mi, sec, nsec int
	loc := time.UTC
	if !p.done() {
		if c := p.s[p.i]; c != 'T' && c != 't' && c != ' ' {
			return time.Time{}, p.fail("want 'T' or a space after the date")
		}
		p.i++
		h = p.digits(2)
		p.sep(':')
		mi = p.digits(2)
		if p.err == nil && !p.done() && p.s[p.i] == ':' {
			p.i++
			sec = p.digits(2)
			if p.err == nil && !p.done() && p.s[p.i] == '.' {
				p.i++
				nsec = p.fraction()
			}
		}
		if p.err == nil && !p.done() {
			loc = p.zone()
		}
	}
	if p.err == nil && !p.done() {
		p.fail("unexpected text after the datetime")
	}
	if p.err != nil {
		return time.Time{}, p.err
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, errors.New("date or time out of range")
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, nsec, loc).UTC(), nil
}

// daysIn is the number of days of month mo of year y.
func daysIn(y, mo int) int {
	return time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// dateParser walks a datetime string; the first error sticks and later steps do nothing.
type dateParser struct {
	s   string
	i   int
	err error
}

func (p *dateParser) done() bool { return p.i >= len(p.s) }

func (p *dateParser) fail(msg string) error {
	if p.err == nil {
		p.err = errors.New(msg + " at byte " + strconv.Itoa(p.i))
	}
	return p.err
}

// digits reads exactly n decimal digits.
func (p *dateParser) digits(n int) int {
	if p.err != nil {
		return 0
	}
	v := 0
	for range n {
		if p.done() || p.s[p.i] < '0' || p.s[p.i] > '9' {
			p.fail("want a digit")
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
	}
	return v
}

// sep reads the byte c.
func (p *dateParser) sep(c byte) {
	if p.err == nil {
		if p.done() || p.s[p.i] != c {
			p.fail("want " + strconv.QuoteRune(rune(c)))
		} else {
			p.i++
		}
	}
}

// fraction reads 1 to 9 digits of a second as nanoseconds.
func (p *dateParser) fraction() int {
	v, n := 0, 0
	for !p.done() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if n == 9 {
			p.fail("more than 9 digits of a second")
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		n++
		p.i++
	}
	if n == 0 {
		p.fail("want a digit after '.'")
		return 0
	}
	for ; n < 9; n++ {
		v *= 10
	}
	return v
}

// zone reads Z, or an offset +HH:MM, +HHMM or +HH (or -).
func (p *dateParser) zone() *time.Location {
	switch c := p.s[p.i]; c {
	case 'Z', 'z':
		p.i++
		return time.UTC
	case '+', '-':
		p.i++
		h, m := p.digits(2), 0
		if p.err == nil && !p.done() {
			if p.s[p.i] == ':' {
				p.i++
			}
			m = p.digits(2)
		}
		if p.err != nil {
			return time.UTC
		}
		if h > 23 || m > 59 {
			p.fail("time zone offset out of range")
			return time.UTC
		}
		off := (h*60 + m) * 60
		if c == '-' {
			off = -off
		}
		return time.FixedZone("", off)
	}
	p.fail("want Z or a time zone offset")
	return time.UTC
}
