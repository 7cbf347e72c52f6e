package corpus

import (
	"io"

	"github.com/kairos-rag/kairos/corpus/document"
	"github.com/kairos-rag/kairos/corpus/mediawiki"
	"github.com/kairos-rag/kairos/corpus/wikitext"
)

// The document model lives in corpus/document, below the format packages that produce it;
// these aliases keep corpus's API.
type (
	// Document is one article, FAQ entry or abstract, as text split into sections.
	Document = document.Document
	// Section is a titled run of clean text (no markup). Paragraphs are separated by "\n\n".
	Section = document.Section
	// Reader streams documents from one input.
	Reader = document.Reader
	// ReadStats counts records by outcome. Documents + sum(Skipped) + Bad = records seen.
	ReadStats = document.ReadStats
	// RecordError is a malformed record, located precisely enough to find it in the file.
	RecordError = document.RecordError
	// MediaWikiReader streams main-namespace articles from a MediaWiki XML dump.
	MediaWikiReader = mediawiki.Reader
)

// Reasons a reader skips a well-formed record.
const (
	SkipRedirect  = document.SkipRedirect
	SkipNamespace = document.SkipNamespace // MediaWiki page outside the main namespace
	SkipEmpty     = document.SkipEmpty     // no text left after cleaning
)

// IsRecordError reports whether err is a skippable malformed-record error.
func IsRecordError(err error) bool { return document.IsRecordError(err) }

// CleanWikitext turns one page's wikitext into clean sections: see wikitext.Clean.
func CleanWikitext(title, text string) []Section { return wikitext.Clean(title, text) }

// NewMediaWikiReader reads an already-decompressed MediaWiki XML dump: see mediawiki.NewReader.
func NewMediaWikiReader(r io.Reader, file, source string) *MediaWikiReader {
	return mediawiki.NewReader(r, file, source)
}

// WebURL returns u when it is an absolute http(s) URL: see document.WebURL.
func WebURL(u string) (string, bool) { return document.WebURL(u) }

// sectionPath and countingReader are shared with the format packages.
type (
	sectionPath    = document.SectionPath
	countingReader = document.CountingReader
)

// StageClock is document.StageClock: the busy time of one stage of reading.
type StageClock = document.StageClock
