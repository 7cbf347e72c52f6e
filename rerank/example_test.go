package rerank_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// fixed is a Searcher over a few passages in a fixed BM25-like order.
type fixed []search.Hit

func (f fixed) Search(ctx context.Context, req search.Request) ([]search.Hit, error) {
	return f[:min(req.K, len(f))], nil
}

func ExampleRetriever_Search() {
	var hits fixed
	for i, text := range []string{
		"Paul Sturrock | Sturrock joined Dundee United in 1974 .",
		"Paul Sturrock | In 2000 he became manager of Plymouth Argyle .",
		"Paul Sturrock | From 1977 to 1989 he played for Scotland .",
		"Paul Sturrock | He was born in Ellon , Aberdeenshire .",
		"Paul Sturrock | In 2004 he managed Southampton .",
		"Paul Sturrock | He won the Scottish league with Dundee United .",
	} {
		hits = append(hits, search.Hit{Score: float64(10 - i),
			Passage: corpus.Passage{ID: fmt.Sprintf("p%d", i), Text: text, Years: timex.Extract(text)}})
	}
	opts := rerank.DefaultOptions()
	opts.Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	eng, err := rerank.NewRetriever(hits, rerank.RetrieverOptions{Time: opts})
	if err != nil {
		panic(err)
	}
	stages, _ := rerank.ParseStages("time")
	auto, _ := timex.Parse("auto")
	res, err := eng.Search(context.Background(), rerank.Query{
		Request: search.Request{Text: "Who did Paul Sturrock play for from 1977 to 1989?", K: 3},
		Time:    auto, Rerank: stages, Explain: true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("time:", res.Time)
	for _, h := range res.Hits {
		fmt.Printf("%d %s %.3f %s\n", h.Rank, h.ID, h.Score, h.Explain.Notes[0])
	}
	// Output:
	// time: 1977..1989
	// 1 p2 0.767 mentions 1977..1989, within 1977..1989; names both 1977 and 1989; 1 of 1 mentions close
	// 2 p0 0.725 nearest mention 1974 is 3 years from 1977..1989; 0 of 1 mentions close
	// 3 p1 0.583 nearest mention 2000 is 11 years from 1977..1989; 0 of 1 mentions close
}
