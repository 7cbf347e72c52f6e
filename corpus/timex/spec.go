package timex

// Kind is the kind of time need a query expresses.
type Kind string

const (
	KindNone   Kind = "none"   // no time need: relevance only
	KindRecent Kind = "recent" // the newest information
	KindRange  Kind = "range"  // a year (From == To) or a closed range of years
	KindAuto   Kind = "auto"   // infer from the query text (see Spec.Resolve)
)

// Spec is a parsed time specification. The zero Spec means none.
type Spec struct {
	Kind Kind `json:"kind"`
	From int  `json:"from,omitempty"` // KindRange only
	To   int  `json:"to,omitempty"`   // KindRange only
}
