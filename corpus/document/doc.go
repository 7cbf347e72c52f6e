// Package document holds what every corpus reader shares, below the readers themselves: the
// Document and Section model, the Reader contract with its stats and record errors, the
// record size cap, the heading path that names sections, and a byte counter for progress.
//
// It exists so that the format packages (corpus/wikitext, corpus/mediawiki) and corpus itself
// can all use these types without importing one another: corpus imports the format packages,
// and they import only this one. corpus re-exports every name here under its old name.
package document
