// Package synthcorpus generates reproducible synthetic corpora of Kairos-like passages for
// scale benchmarks (kairos bench scale), where no real corpus of the wanted size is at hand.
//
// A Model is learned from real text through a Learner: the unigram counts of the real
// vocabulary, the lengths of real title-prefixed passages, of titles and the number of
// passages per document. Generate then streams N passages as JSON lines that `kairos index`
// reads ({"id","title","text"}), one record per passage, each at most MaxWords words with its
// "Title |" prefix, so that the indexer's splitter keeps every record as one passage.
// GenerateMediaWiki writes the same kind of documents as the articles of a MediaWiki XML
// export instead, in marked-up wikitext, one passage a section, so that the dump path of
// `kairos index` (cleaning included) can be measured at any size.
//
// Words are drawn from the real unigram distribution (an alias table over the observed
// counts), except for a share of draws equal to the Good–Turing estimate of unseen mass (the
// share of tokens that are hapax legomena), which go to an open-ended Zipf tail of
// synthetic words with the exponent fitted to the real rank-frequency curve. Without that
// tail a large synthetic corpus would have the small vocabulary of its sample, where real
// collections keep growing theirs (Heaps' law).
//
// Output depends only on the Model, the seed and the options: the same inputs give the same
// bytes on every machine. Nothing is held in memory beyond the model.
package synthcorpus
