// Package kpst is Kairos's passage store: the passages of a generation (text, title, ids,
// date, source, time mentions) in binary segment files addressed by passage key, and the
// tombstones that mark keys deleted or superseded. It is the local implementation of the
// passage side of the backend seam (indexer/backend): searches read passages through it, and
// the local vector engine asks it for the dates and sources of passages to filter.
package kpst
