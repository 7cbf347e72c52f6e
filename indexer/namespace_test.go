package indexer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
)

// TestPositionIDsNamespaced: with several inputs, ids derived from a record's position are
// prefixed with the input's source name, so two FAQs (both numbered from 1) and a wiki share
// one index; ids a record carries (wiki page ids) and a single input's ids stay as they are.
func TestPositionIDsNamespaced(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the ids of several inputs, checked after whole builds")
	}
	faq := shared(t, "data/faq-covid-deepset/faq_covidbert.csv")
	other := filepath.Join(t.TempDir(), "other_faq.csv")
	data, err := os.ReadFile(faq)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	wiki := shared(t, enwiki)
	for _, tc := range []struct {
		name     string
		inputs   []string
		want     []string // passage ids that must exist
		prefixes map[string]int
	}{
		{"single FAQ keeps row ids", []string{faq}, []string{"1#0", "213#1"}, map[string]int{"": 213}},
		{"two FAQs", []string{faq, other}, []string{"faq_covidbert:1#0", "other_faq:1#0"}, map[string]int{"faq_covidbert": 213, "other_faq": 213}},
		{"FAQ and wiki", []string{faq, wiki}, []string{"faq_covidbert:132#0"}, map[string]int{"faq_covidbert": 213, "": -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var in []InputSpec
			for _, p := range tc.inputs {
				in = append(in, InputSpec{Path: p})
			}
			if _, err := Build(context.Background(), Options{Dir: dir, Inputs: in}); err != nil {
				t.Fatal(err)
			}
			g, err := openDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			ids, docs := map[string]bool{}, map[string]map[string]bool{}
			err = g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
				ids[p.ID] = true
				ns, _, ok := strings.Cut(p.DocID, ":")
				if !ok {
					ns = ""
				}
				if docs[ns] == nil {
					docs[ns] = map[string]bool{}
				}
				docs[ns][p.DocID] = true
				if !strings.HasPrefix(p.ID, p.DocID+"#") {
					t.Errorf("passage %s of document %s", p.ID, p.DocID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tc.want {
				if !ids[id] {
					t.Errorf("no passage %s", id)
				}
			}
			for ns, n := range tc.prefixes {
				if n >= 0 && len(docs[ns]) != n {
					t.Errorf("namespace %q: %d documents, want %d", ns, len(docs[ns]), n)
				}
				if n < 0 && len(docs[ns]) == 0 {
					t.Errorf("namespace %q: no documents", ns)
				}
			}
		})
	}
}
