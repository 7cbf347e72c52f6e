// Package kpst is Kairos's passage store: the passages of a generation (text, title, ids,
// date, source, time mentions, language, block type) in binary segment files addressed by
// passage key, which skips the keys a generation's tombstones (indexer/backend/tombstones) mark
// deleted or superseded. It is the local
// implementation of the passage side of the backend seam (indexer/backend): searches read
// passages through it, and the local engines ask it for the dates, sources, languages and
// block types of passages to filter. Its file format, and the versions it reads, are
// described in store.go.
package kpst
