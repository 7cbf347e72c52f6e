package document

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// Document is one article, FAQ entry or abstract, as text split into sections.
type Document struct {
	ID string // stable id from the dump (page id, _id, row number)
	// IDFromPosition says ID is the record's number in its file, given because the record had
	// no id: it is unique within the file only, so another input may use the same one.
	IDFromPosition bool
	Title          string    // article title, FAQ question, abstract title
	URL            string    // canonical URL when known
	Date           time.Time // revision timestamp, date_modified, FAQ last_update; zero when unknown
	Source         string    // name of the input the document came from (see corpus.Options.Source)
	// Sections in reading order. The lead section has an empty Name.
	Sections []Section
	// Meta holds extra string fields kept from the input (FAQ category, language, ...).
	Meta map[string]string
	// Pos locates the record in its input as RecordError.Pos does ("line 17", "row 8"), so
	// that an error about a valid record (a repeated id) can point at it; empty where the
	// reader cannot tell.
	Pos string
}

// Section is a titled run of clean text (no markup). Paragraphs are separated by "\n\n".
type Section struct {
	Name string
	Text string
	// Block is the kind of block the text is, corpus.Passage.BlockType's values: "" for
	// prose, "table" or "infobox" for a table's or an infobox's rows (HTML input only).
	Block string
}

// Reader streams documents from one input.
type Reader interface {
	// Next returns the next document, or io.EOF after the last one. A malformed record yields a
	// *RecordError; the reader stays usable and the caller may call Next again to skip it.
	Next(ctx context.Context) (Document, error)
	// Stats counts what the reader has seen so far, including what it skipped and why.
	Stats() ReadStats
	Close() error
}

// ReadStats counts records by outcome. Documents + sum(Skipped) + Bad = records seen.
type ReadStats struct {
	Documents int            // records returned as documents
	Skipped   map[string]int // records deliberately not returned, by reason: SkipRedirect, ...
	Bad       int            // records returned as *RecordError
	Repaired  int            // records whose invalid UTF-8 was replaced with U+FFFD
	BytesRead int64          // bytes consumed from the (compressed) input, for progress
	Format    string         // the input's format, detected or forced (set by corpus.Open's readers)
	// Columns says which input column fills each role (FAQ CSV: "question" -> "Question", ...).
	Columns map[string]string
	// Languages counts the documents returned per language the reader detected: a MediaWiki
	// dump's <siteinfo> (dbname, else base URL) for all its pages, an Enterprise record's
	// in_language. Readers that cannot tell leave it empty.
	Languages map[string]int
	// URLsRemoved counts the documents whose url was not an absolute http(s) URL (WebURL):
	// a javascript: or data: link, a relative one. The document is kept without it. Counted
	// by corpus.PassageReader, where every format's documents pass.
	URLsRemoved int
}

// Clone returns a copy of s whose maps are its own: a reader hands out its stats while it
// keeps counting. Skipped is never nil in the copy; Columns and Languages stay nil if nil.
func (s ReadStats) Clone() ReadStats {
	c := s
	c.Skipped = make(map[string]int, len(s.Skipped))
	maps.Copy(c.Skipped, s.Skipped)
	if s.Columns != nil {
		c.Columns = maps.Clone(s.Columns)
	}
	if s.Languages != nil {
		c.Languages = maps.Clone(s.Languages)
	}
	return c
}

// Reasons a reader skips a well-formed record.
const (
	SkipRedirect  = "redirect"
	SkipNamespace = "namespace" // MediaWiki page outside the main namespace
	SkipEmpty     = "empty"     // no text left after cleaning
)

// RecordError is a malformed record, located precisely enough to find it in the file.
type RecordError struct {
	File string
	// Pos locates the record: "line 17", "byte 123456", "row 8", "page 42 (line 1180)".
	Pos string
	Err error
}

func (e *RecordError) Error() string { return fmt.Sprintf("%s: %s: %v", e.File, e.Pos, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// IsRecordError reports whether err is a skippable malformed-record error.
func IsRecordError(err error) bool {
	var re *RecordError
	return errors.As(err, &re)
}
