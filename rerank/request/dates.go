package request

import (
	"time"

	"github.com/kairos-rag/kairos/search"
)

// DateBounds are a filter's date bounds as a request sets them, with whether each is set
// kept apart from its value: a bound at Go's zero instant (0001-01-01T00:00:00Z) is a bound,
// where search.Filters reads a zero time as none and so would let every passage through.
// Parse fills one from date_from and date_to; the server's WikiChat filters narrow one bound
// by bound.
type DateBounds struct {
	From, To       time.Time
	HasFrom, HasTo bool
}

// Lower narrows the lower bound to t (bounds AND: the later one holds).
func (b *DateBounds) Lower(t time.Time) {
	if !b.HasFrom || t.After(b.From) {
		b.From, b.HasFrom = t, true
	}
}

// Upper narrows the upper bound to t (the earlier one holds).
func (b *DateBounds) Upper(t time.Time) {
	if !b.HasTo || t.Before(b.To) {
		b.To, b.HasTo = t, true
	}
}

// Crossed reports whether both bounds are set and no instant lies between them.
func (b DateBounds) Crossed() bool { return b.HasFrom && b.HasTo && b.To.Before(b.From) }

// Apply writes b into f as the engines read bounds. A passage dated at the zero instant is an
// undated one (corpus.Passage.Date), which fails every bound. So a lower bound at the zero
// instant passes the dated passages, all of which lie after it: it moves on by a nanosecond,
// the resolution of passage dates, and becomes one the engines see; so does one before it,
// which passes the same passages and lies outside the engines' range. An upper bound at or
// before it passes no passage: none is dated before the year 1 (Qdrant's and bleve's dates
// could not hold one), and the undated fail it. Apply does not look at Crossed: Parse refuses crossed
// bounds, WikiChat's filters match nothing with them.
func (b DateBounds) Apply(f *search.Filters) {
	if b.HasFrom {
		f.DateFrom = b.From
		if !b.From.After(time.Time{}) {
			f.DateFrom = time.Time{}.Add(time.Nanosecond)
		}
	}
	if b.HasTo {
		f.DateTo = b.To
		if !b.To.After(time.Time{}) {
			f.None = true // at or before the zero instant: also out of the engines' range
		}
	}
}
