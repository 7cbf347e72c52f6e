package indexer

import "github.com/blevesearch/bleve/v2/analysis/lang/en"

// Analyzer is the default analyzer, of indexes in English and of manifests that record none:
// bleve's English analyzer: unicode tokens, possessives, lower case, English stop words,
// Porter stemming (the original Porter algorithm, bleve's analysis/token/porter; bleve's
// Snowball English stemmer is a separate filter this analyzer does not use). Other languages
// get theirs from internal/langanalysis (BuildOptions.Language).
const Analyzer = en.AnalyzerName
