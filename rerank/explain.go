package rerank

// Explanation is the per-hit score breakdown returned when Query.Explain is set.
type Explanation struct {
	Retrieval float64 `json:"retrieval"` // score from the retriever
	// Formula says how Retrieval is made of the hit's scores ("retrieval 5.506 = bm25 5.114
	// + doc_evidence 0.392 ..."); empty when it is a plain BM25 score.
	Formula   string   `json:"formula,omitempty"`
	Relevance float64  `json:"relevance"`       // retrieval (or cross) score normalised to [0,1]
	Cross     *float64 `json:"cross,omitempty"` // cross-encoder score, when that stage ran
	TimeScore *float64 `json:"time,omitempty"`  // time score in [0,1], when that stage ran
	Final     float64  `json:"final"`
	Notes     []string `json:"notes,omitempty"` // human-readable reasons ("mentions 1994 in range")
	// Unscored marks a candidate the cross-encoder did not reach within its latency budget: it
	// keeps its retrieval order after every scored candidate.
	Unscored bool `json:"unscored,omitempty"`
	// Key is the WikiChat sort key (latest year mentioned, or whether the query year occurs).
	Key *int `json:"wikichat_key,omitempty"`
}
