// Package timex is Kairos's vocabulary of time: the time specification a query carries
// (none, recent, a year, a range, auto) and the years a passage mentions. It sits under corpus
// because years are extracted when passages are made, and every later layer (search, rerank,
// chat, cmd) parses specifications through this one package.
package timex

// Mention is a year or a closed range of years found in a text, e.g. "1990 to 1998" gives
// {From: 1990, To: 1998}; "March 2019" gives {From: 2019, To: 2019}.
type Mention struct {
	From int `json:"from"`
	To   int `json:"to"`
	Pos  int `json:"pos"` // byte offset of the mention in the text it was found in
}
