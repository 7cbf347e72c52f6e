// Package mediawiki reads MediaWiki pages-articles XML dumps (the Wikipedia export format) into
// documents, one main-namespace article at a time, cleaning each page's wikitext with package
// wikitext.
//
// The Reader never hands the whole dump to an XML decoder: one bad byte would end the stream.
// It scans the bytes for <page>...</page> chunks, tracking line numbers, and decodes each chunk
// on its own, so a malformed page becomes a *document.RecordError and the next page is read
// normally. Memory is bounded by the largest page (and Options.MaxPageBytes caps that).
package mediawiki
