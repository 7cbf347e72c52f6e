package corpus

import (
	"time"

	"github.com/kairos-rag/kairos/corpus/timex"
)

// Passage is the unit of retrieval: a title-prefixed chunk of one document section.
//
// Text is the full passage as indexed and shown, prefix included:
// "Title | body" for a lead section, "Title > Section | body" otherwise. Its word count
// (strings.Fields) is at most the splitter's MaxWords (120 by default). Two Han or kana
// characters count as a word (Chinese and Japanese have no spaces to count), and a passage
// weighs at most MaxWords so counted, unless its title prefix alone weighs over half of it
// (a title of more than MaxWords such characters: the prefix is charged half).
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
	// BlockType is what kind of block of its document the passage was cut from: BlockText
	// (prose), BlockTable or BlockInfobox, as WikiChat's blocks carry it. Empty means prose:
	// inputs that have no tables (plain text, JSONL, FAQs) and indexes built before passages
	// carried it leave it so, and Block reads it.
	BlockType string `json:"block_type,omitempty"`
	// Years the passage (title, section, text) mentions, extracted when the passage is made so
	// that reranking never re-parses text. Pos is a byte offset into Text.
	Years []timex.Mention `json:"years,omitempty"`
}

// Block types of passages (Passage.BlockType), WikiChat's names for the blocks of an article.
const (
	BlockText    = "text"    // prose paragraphs
	BlockTable   = "table"   // a table's rows, cells separated by "; "
	BlockInfobox = "infobox" // an infobox's "label: value" rows
)

// BlockTypes lists the block types a passage can have, for validating filters: a closed set,
// so that a filter can say "text" by excluding the others, which is how engines match the
// passages of indexes built before passages carried a type.
func BlockTypes() []string { return []string{BlockText, BlockTable, BlockInfobox} }

// Block returns p's block type, BlockText when it has none recorded.
func (p *Passage) Block() string {
	if p.BlockType == "" {
		return BlockText
	}
	return p.BlockType
}
