package synthcorpus_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kairos-rag/kairos/corpus/synthcorpus"
)

func Example() {
	// Learn from real text (here a toy one; kairos bench scale learns from SciFact, SQuAD and
	// a Wikipedia sample), then stream passages as JSON lines.
	var l synthcorpus.Learner
	text := strings.Fields(strings.Repeat("the cat sat on the mat and the dog ate the bone ", 100) + "zebra")
	for i := 0; i+10 <= len(text); i += 10 {
		l.AddDocument([]string{"Pets"}, [][]string{text[i : i+10]}, []int{12})
	}
	m, err := l.Model()
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := synthcorpus.Generate(context.Background(), os.Stdout, m, synthcorpus.Options{Passages: 2, Seed: 1, MaxWords: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Passages, "passages,", st.Words, "words")
	// Output:
	// {"id":"s1-0","title":"on","text":"the the the the dog the"}
	// {"id":"s2-0","title":"mat","text":"the on the and dog bone"}
	// 2 passages, 16 words
}
