package scalebench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/synthcorpus"
)

// scaleSources are the real English texts whose statistics the synthetic passages follow:
// scientific abstracts, Wikipedia paragraphs (SQuAD) and Wikipedia articles (the MediaWiki
// sample, cleaned as kairos index cleans it).
var scaleSources = []string{
	"data/beir-scifact/corpus.jsonl",
	"data/squad-v1.1-dev/v1.1-passages.jsonl",
	"data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2",
}

// LearnModel reads the shared texts through the same reader and splitter as kairos
// index, so the learned passage lengths are those of real Kairos passages.
func LearnModel(ctx context.Context, shared string) (*synthcorpus.Model, error) {
	split, err := corpus.NewSplitter(corpus.SplitOptions{})
	if err != nil {
		return nil, err
	}
	var l synthcorpus.Learner
	for _, rel := range scaleSources {
		path := filepath.Join(shared, rel)
		if err := learnFile(ctx, &l, split, path); err != nil {
			return nil, fmt.Errorf("learning term statistics from %s: %w", path, err)
		}
	}
	return l.Model()
}

func learnFile(ctx context.Context, l *synthcorpus.Learner, split *corpus.Splitter, path string) error {
	r, err := corpus.Open(ctx, path, corpus.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		doc, err := r.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		ps := split.Split(doc)
		bodies := make([][]string, 0, len(ps))
		totals := make([]int, 0, len(ps))
		for _, p := range ps {
			words := strings.Fields(p.Text)
			totals = append(totals, len(words))
			bodies = append(bodies, passageBody(words, p.Title != "" || p.Section != ""))
		}
		l.AddDocument(strings.Fields(doc.Title), bodies, totals)
	}
}

// passageBody drops the "Title > Section |" prefix, which ends at the first "|" word.
func passageBody(words []string, prefixed bool) []string {
	if !prefixed {
		return words
	}
	for i, w := range words {
		if w == "|" {
			return words[i+1:]
		}
	}
	return words
}

// RealQueries returns n real queries, alternately SciFact claims and SQuAD questions, in
// file order: the same n gives the same queries.
func RealQueries(shared string, n int) ([]string, error) {
	sci, err := readQueryField(filepath.Join(shared, "data/beir-scifact/queries.jsonl"), "text", n)
	if err != nil {
		return nil, err
	}
	squad, err := readQueryField(filepath.Join(shared, "data/squad-v1.1-dev/v1.1-questions.jsonl"), "question", n)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i := 0; len(out) < n && (i < len(sci) || i < len(squad)); i++ {
		if i < len(sci) {
			out = append(out, sci[i])
		}
		if i < len(squad) && len(out) < n {
			out = append(out, squad[i])
		}
	}
	if len(out) < n {
		return nil, fmt.Errorf("want %d queries, the shared files hold %d", n, len(out))
	}
	return out, nil
}

// readQueryField reads up to n non-empty string values of field from a JSON lines file.
func readQueryField(path, field string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []string
	for line := 1; sc.Scan() && len(out) < n; line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		s, ok := rec[field].(string)
		if !ok {
			return nil, fmt.Errorf("%s: line %d: no string %q field", path, line, field)
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
