package corpus

import (
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// Passage is the unit of retrieval: a title-prefixed chunk of one document section.
//
// Text is the full passage as indexed and shown, prefix included:
// "Title | body" for a lead section, "Title > Section | body" otherwise. Its word count
// (strings.Fields) is at most the splitter's MaxWords (120 by default).
type Passage struct {
	ID      string    `json:"passage_id"` // "<doc id>#<ordinal>", stable across re-indexing
	DocID   string    `json:"doc_id"`
	Title   string    `json:"title"`
	Section string    `json:"section,omitempty"`
	Text    string    `json:"text"`
	URL     string    `json:"url,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	Source  string    `json:"source,omitempty"`
	// Language is the language code the passage is in and was analysed as (its document's,
	// else its input's; see indexer's language.go). Empty in indexes built before passages
	// carried it: those are in the language of the index.
	Language string `json:"language,omitempty"`
	Ordinal  int    `json:"ordinal"` // 0-based position of the passage within its document
	// Years the passage (title, section, text) mentions, extracted when the passage is made so
	// that reranking never re-parses text. Pos is a byte offset into Text.
	Years []timex.Mention `json:"years,omitempty"`
}
