package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
)

// Open detects the format of the COVID FAQ (CSV with a question/answer header), and the
// splitter turns each Q/A into passages prefixed with the question.
func Example() {
	ctx := context.Background()
	r, err := corpus.Open(ctx, "../../shared/data/faq-covid-deepset/faq_covidbert.csv", corpus.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	sp, err := corpus.NewSplitter(corpus.SplitOptions{MaxWords: 40})
	if err != nil {
		log.Fatal(err)
	}
	passages := 0
	for {
		doc, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if corpus.IsRecordError(err) {
			log.Print(err) // a malformed row: report it and go on
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		ps := sp.Split(doc)
		if doc.ID == "1" {
			for _, p := range ps {
				fmt.Printf("%s (%d words) %s\n", p.ID, len(strings.Fields(p.Text)), p.Text)
			}
		}
		passages += len(ps)
	}
	st := r.Stats()
	fmt.Printf("%d documents, %d passages, %d bad rows\n", st.Documents, passages, st.Bad)
	// Output:
	// 1#0 (19 words) What is a novel coronavirus? | A novel coronavirus is a new coronavirus that has not been previously identified.
	// 1#1 (33 words) What is a novel coronavirus? | The virus causing coronavirus disease 2019 (COVID-19), is not the same as the coronaviruses that commonly circulate among humans and cause mild illness, like the common cold.
	// 1#2 (39 words) What is a novel coronavirus? | A diagnosis with coronavirus 229E, NL63, OC43, or HKU1 is not the same as a COVID-19 diagnosis. Patients with COVID-19 will be evaluated and cared for differently than patients with common coronavirus diagnosis.
	// 1#3 (11 words) What is a novel coronavirus? | What is a novel coronavirus?
	// 213 documents, 1296 passages, 0 bad rows
}
