// Package corpus turns dumps (MediaWiki XML, Wikimedia Enterprise NDJSON, JSON lines, FAQ files)
// into documents, and documents into title-prefixed passages of at most 120 words.
//
// Readers stream: they hold one record at a time, so a 100 GB dump costs the memory of its
// largest page. Every record a reader does not turn into a Document is counted in its Stats
// under a reason, so the counts a caller reports always add up.
//
// Open detects an input's format and compression and returns its reader. The formats with a
// package of their own live below corpus: corpus/mediawiki (XML dumps), corpus/wikitext (the
// wikitext cleaner), and corpus/document (the Document model and Reader contract they share,
// re-exported here under the same names).
package corpus
