// Package langanalysis maps a language code (a Wikipedia language, "bg", "de", "ru") to the
// text analyzer Kairos indexes and queries passages of that language with. It is the one
// table of languages Kairos knows: the indexer records the chosen analyzer's name in the
// manifest, and search rebuilds the same analyzer from that name for its queries.
//
// Analyzers are bleve's: its language analyzers where bleve ships one (stop words and a
// stemmer), a custom chain of bleve's Unicode tokenizer, lower case and the language's stop
// words where bleve ships only stop words, and bleve's standard (Unicode) analyzer for every
// other language. Bulgarian adds a light stemmer of its own (bgstem.go), since bleve has none
// and Bulgarian nouns and adjectives inflect for number and definiteness.
package langanalysis
