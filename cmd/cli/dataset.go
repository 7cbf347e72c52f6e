package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// cmdDataset converts evaluation sets into a corpus and a query file Kairos can index and
// score. Only TimeQA for now: `kairos dataset timeqa --input FILE --corpus OUT --queries OUT`.
func cmdDataset(ctx context.Context, args []string, stdio IO) error {
	return runGroup(ctx, "dataset", []subcommand{
		{"timeqa", "TimeQA's human-annotated file to a corpus and QA queries", datasetTimeQA},
	}, args, stdio)
}

func datasetTimeQA(ctx context.Context, args []string, stdio IO) error {
	fs := newFlags("dataset timeqa", "--input FILE --corpus OUT.jsonl --queries OUT.jsonl [flags]", stdio.Stderr)
	in := fs.String("input", "", "TimeQA human-annotated `file` (human_annotated_train.json or _test.json)")
	corpusOut := fs.String("corpus", "", "write the pooled paragraphs here as JSONL documents {_id, title, text}")
	queriesOut := fs.String("queries", "", "write the questions here as JSONL {_id, text, time, gold_doc_ids}")
	split := fs.String("split", "all", "questions to write: all, a (pages at even positions) or b (odd positions)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || *corpusOut == "" || *queriesOut == "" {
		return usageErr(fs, "need --input, --corpus and --queries")
	}
	if *split != "all" && *split != "a" && *split != "b" {
		return usageErr(fs, "--split %q: want all, a or b", *split)
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	ds, err := convertTimeQA(data, *split)
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", *in, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeJSONL(*corpusOut, stdio.Stdout, len(ds.docs), func(i int) any { return ds.docs[i] }); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := writeJSONL(*queriesOut, stdio.Stdout, len(ds.queries), func(i int) any { return ds.queries[i] }); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	fmt.Fprintf(stdio.Stderr, "timeqa: %d pages (%d duplicate pages merged), %d paragraphs written (%d empty skipped, %d longer than 120 words will split), %d of %d questions written (split %s)\n",
		ds.pages, ds.dupPages, len(ds.docs), ds.empty, ds.long, len(ds.queries), ds.questions, *split)
	return nil
}

// timeQADoc is one paragraph as a generic JSONL document.
type timeQADoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// timeQAQuery is one question with its gold paragraphs as document ids.
type timeQAQuery struct {
	ID    string   `json:"_id"`
	Text  string   `json:"text"`
	Time  string   `json:"time"`
	Gold  []string `json:"gold_doc_ids"`
	Split string   `json:"split"`
}

type timeQADataset struct {
	docs            []timeQADoc
	queries         []timeQAQuery
	pages, dupPages int
	empty, long     int
	questions       int
}

// convertTimeQA turns TimeQA's page list into one document per paragraph, ids
// "<page>/p<index>", and the questions into queries whose gold is the answer paragraphs.
// A page listed twice (once per Wikidata relation) is pooled once; its questions are kept.
// Split "a" keeps the questions of pages at even positions of the file, "b" the odd ones, so
// a page's questions never straddle the two halves.
func convertTimeQA(data []byte, split string) (*timeQADataset, error) {
	var pages []struct {
		Index     string              `json:"index"`
		Link      string              `json:"link"`
		Paras     []string            `json:"paras"`
		Questions [][]json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(data, &pages); err != nil {
		return nil, fmt.Errorf("not a TimeQA page list: %w", err)
	}
	ds := &timeQADataset{pages: len(pages)}
	seen := map[string]bool{}
	for pi, p := range pages {
		name := strings.TrimPrefix(p.Link, "/wiki/")
		if name == "" {
			return nil, fmt.Errorf("page %d (%s): no link", pi, p.Index)
		}
		if seen[name] {
			ds.dupPages++
		} else {
			seen[name] = true
			title := pageTitle(name)
			for i, para := range p.Paras {
				text := strings.TrimSpace(para)
				if text == "" {
					ds.empty++
					continue
				}
				// The splitter counts the "Title | " prefix against its 120 words.
				if len(strings.Fields(text))+len(strings.Fields(title))+1 > 120 {
					ds.long++
				}
				ds.docs = append(ds.docs, timeQADoc{ID: paraID(name, i), Title: title, Text: text})
			}
		}
		part := "a"
		if pi%2 == 1 {
			part = "b"
		}
		for qi, q := range p.Questions {
			ds.questions++
			var text string
			var golds []struct {
				Para *int `json:"para"`
			}
			if len(q) != 2 || json.Unmarshal(q[0], &text) != nil || json.Unmarshal(q[1], &golds) != nil {
				return nil, fmt.Errorf("page %d (%s) question %d: want [text, [{para, ...}]]", pi, p.Index, qi)
			}
			var gold []string
			for ai, g := range golds {
				if g.Para == nil || *g.Para < 0 || *g.Para >= len(p.Paras) {
					return nil, fmt.Errorf("page %d (%s) question %d answer %d: gold paragraph out of range 0..%d", pi, p.Index, qi, ai, len(p.Paras)-1)
				}
				id := paraID(name, *g.Para)
				if strings.TrimSpace(p.Paras[*g.Para]) == "" {
					return nil, fmt.Errorf("page %d (%s) question %d: gold paragraph %d is empty", pi, p.Index, qi, *g.Para)
				}
				if !containsString(gold, id) {
					gold = append(gold, id)
				}
			}
			if len(gold) == 0 {
				return nil, fmt.Errorf("page %d (%s) question %d: no gold paragraph", pi, p.Index, qi)
			}
			if split != "all" && split != part {
				continue
			}
			ds.queries = append(ds.queries, timeQAQuery{
				ID: "q" + strconv.Itoa(ds.questions), Text: strings.TrimSpace(text), Time: "auto", Gold: gold, Split: part,
			})
		}
	}
	return ds, nil
}

func paraID(page string, i int) string { return page + "/p" + strconv.Itoa(i) }

// pageTitle turns a /wiki/ link name into a title: "Newton_D._Baker_House" -> "Newton D. Baker House".
func pageTitle(name string) string {
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	return strings.ReplaceAll(name, "_", " ")
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func encodeLines(w io.Writer, n int, rec func(i int) any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := 0; i < n; i++ {
		if err := enc.Encode(rec(i)); err != nil {
			return errors.Join(fmt.Errorf("record %d", i+1), err)
		}
	}
	return nil
}
