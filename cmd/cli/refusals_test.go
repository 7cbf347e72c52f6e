package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every refusal names the flag or the command that fixes it, in one line, and names each
// file once. Each row is a mistake a newcomer made in their first hour (issue 54).
func TestRefusalsNameTheFix(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "sf.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), in, 30)
	idx := filepath.Join(root, "sf.idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", in, "--index", idx); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	faq := filepath.Join(root, "faq.idx")
	if _, stderr, err := runCLI(t, "index", "--quiet", "--input", coreShared(t, "data/faq-covid-deepset/faq_covidbert.csv"), "--index", faq); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	typo := filepath.Join(root, "sf.ix")
	bad := filepath.Join(root, "bad.jsonl")
	writeHead(t, in, bad, 3)
	f, err := os.OpenFile(bad, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"_id\": \"bad\", \"text\": \n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mixed := coreShared(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson") // de, en, ru
	queries, qrels := coreShared(t, "data/beir-scifact/queries.jsonl"), coreShared(t, "data/beir-scifact/qrels/train.tsv")
	llm := []string{"--llm-url", "http://127.0.0.1:1/v1", "--llm-model", "m", "--message", "hi"}
	missing := filepath.Join(root, "missing.jsonl")
	otherQrels := filepath.Join(root, "other.tsv") // another dataset's query ids
	zeroQrels := filepath.Join(root, "zero.tsv")   // nothing scored above 0
	lateDense := filepath.Join(root, "late-dense.jsonl")
	lateSource := filepath.Join(root, "late-source.jsonl")
	for path, text := range map[string]string{
		otherQrels: "query-id\tcorpus-id\tscore\nPLAIN-1\tMED-10\t2\n",
		zeroQrels:  "query-id\tcorpus-id\tscore\n1\t31715818\t0\n",
		lateDense:  `{"id":"a","text":"vitamin"}` + "\n" + `{"id":"b","text":"cancer"}` + "\n" + `{"id":"c","text":"fever","mode":"dense"}` + "\n",
		lateSource: `{"id":"a","text":"covid"}` + "\n\n" + `{"id":"b","text":"masks","filters":{"source":"faq"}}` + "\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(root, "run.jsonl")
	tests := []struct {
		name string
		args []string
		want []string // in the error, in this order
		once string   // a path the error names exactly once
	}{
		{"an index location with a typo", []string{"search", "--index", typo, "vitamin"},
			[]string{typo + ": no index: no such directory (did you mean " + idx + "?); kairos index --input FILE --index " + typo + " builds one"}, typo + ":"},
		{"stats of a typo", []string{"stats", "--index", typo},
			[]string{"stats: " + typo + ": no index: no such directory (did you mean " + idx + "?)", "kairos index --input FILE --index " + typo + " builds one"}, typo + ":"},
		{"an update of no index", []string{"index", "--update", "--input", in, "--index", typo},
			[]string{"no such directory (did you mean " + idx + "?); without --update, the same command builds a new index there"}, ""},
		{"a model folder that does not exist", []string{"search", "--index", idx, "--model", filepath.Join(root, "nonexistent", "model"), "vitamin"},
			[]string{"nonexistent/model: not a model folder: no such folder", "kairos models list shows the pulled ones, kairos models pull NAME downloads one"}, "nonexistent/model"},
		{"the parent of model folders", []string{"index", "--input", in, "--index", filepath.Join(root, "dense.idx"), "--model", coreShared(t, "models")},
			[]string{"models: not a model folder: no config.json or model file here; model folders below it: ", "synthetic/ce-tinybert-l2, "}, ""},
		{"a cross rerank without its model", []string{"search", "--index", idx, "--rerank", "cross", "vitamin"},
			[]string{"search: --rerank cross needs a cross-encoder: add --cross-model DIR"}, ""},
		{"an eval with a cross rerank without its model", []string{"eval", "--index", idx, "--queries", queries, "--qrels", qrels, "--rerank", "cross,time"},
			[]string{"eval: --rerank cross,time needs a cross-encoder: add --cross-model DIR"}, ""},
		{"msdp without a bank", append([]string{"chat", "--index", idx, "--pipeline", "msdp"}, llm...),
			[]string{"pipeline msdp needs an example bank: add --bank FILE; kairos bank topical", "kairos bank build"}, ""},
		{"sicl without a bank", append([]string{"chat", "--index", idx, "--pipeline", "sicl"}, llm...),
			[]string{"pipeline sicl needs an example bank: add --bank FILE"}, ""},
		{"a malformed record", []string{"index", "--input", bad, "--index", filepath.Join(root, "bad.idx")},
			[]string{"bad.jsonl: line 4: ", " (--skip-bad skips malformed records, counting and listing them)"}, bad},
		{"a malformed record, previewed", []string{"passages", "--input", bad},
			[]string{"bad.jsonl: line 4: ", " (--skip-bad skips malformed records, counting and listing them)"}, bad},
		{"an input in several languages", []string{"index", "--input", mixed, "--index", filepath.Join(root, "mixed.idx")},
			[]string{"articles.ndjson: document 2 (id ", ") is in en, but this build analyses de (the language of its first document): the build stopped; " +
				"pass --language multilingual to analyse each document in its own language, or --language de to analyse them all as de"}, mixed},
		{"a source the index lacks", []string{"search", "--index", faq, "--source", "faq", "covid symptoms"},
			[]string{"search: --source faq: no passage of the index has that source (did you mean --source faq_covidbert?); its sources: faq_covidbert (kairos stats lists them)"}, ""},
		{"a source with a typo", []string{"eval", "--index", faq, "--queries", queries, "--qrels", qrels, "--source", "faq_covidbrt"},
			[]string{"eval: --source faq_covidbrt: no passage of the index has that source (did you mean --source faq_covidbert?)"}, ""},
		{"a language the index lacks", []string{"search", "--index", faq, "--language", "de", "covid symptoms"},
			[]string{"search: --language de: no passage of the index has that language; its languages: en (kairos stats lists them)"}, ""},
		{"a rescore for an index without an inverted file", []string{"search", "--index", idx, "--rescore", "100", "vitamin"},
			[]string{": --rescore applies to an index whose vectors are an inverted file (kairos index --vector-index ivf)"}, ""},
		{"a language filter of nothing", []string{"search", "--index", idx, "--language", "", "vitamin"},
			[]string{"search: --language: empty string"}, ""},
		{"qrels of another dataset", []string{"eval", "--index", idx, "--queries", queries, "--qrels", otherQrels},
			[]string{"eval: --qrels " + otherQrels + " judges none of the ", " queries of --queries " + queries + ` (its query ids are like "PLAIN-1", the queries' like "0"): another split or dataset?`}, otherQrels},
		{"qrels that judge nothing relevant", []string{"eval", "--index", idx, "--queries", queries, "--qrels", zeroQrels},
			[]string{"eval: --qrels " + zeroQrels + " judges nothing: no line has a score above 0"}, zeroQrels},
		{"--out without --batch", []string{"search", "--index", idx, "--out", run, "vitamin"},
			[]string{"search: --out writes the run of --batch: give --batch FILE, or drop --out"}, ""},
		{"--json with --batch", []string{"search", "--index", idx, "--batch", lateDense, "--json"},
			[]string{"search: --json shapes a single query's output; --batch writes JSON lines: drop --json"}, ""},
		{"a batch whose last line the index cannot answer", []string{"search", "--index", idx, "--batch", lateDense, "--out", run},
			[]string{"search --batch: " + lateDense + ": line 3: query c: mode dense", "kairos index --model DIR"}, lateDense},
		{"a batch line with a source the index lacks", []string{"search", "--index", faq, "--batch", lateSource, "--out", run},
			[]string{"search --batch: " + lateSource + ": line 3: query b: filters.source faq: no passage of the index has that source (did you mean filters.source faq_covidbert?); its sources: faq_covidbert"}, lateSource},
		{"a missing input", []string{"index", "--input", missing, "--index", filepath.Join(root, "new.idx")},
			[]string{"index: open " + missing + ": no such file or directory"}, missing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runCLI(t, tc.args...)
			if err == nil {
				t.Fatalf("no error\n%s", stderr)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error of several lines:\n%s", msg)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q\nlacks %q", msg, w)
				}
				at += i + len(w)
			}
			if tc.once != "" && strings.Count(msg, tc.once) != 1 {
				t.Errorf("error %q names %s %d times", msg, tc.once, strings.Count(msg, tc.once))
			}
		})
	}
	for _, d := range []string{"new.idx", "dense.idx", "sf.ix", "bad.idx", "mixed.idx", "run.jsonl"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			t.Errorf("a refused command left %s behind", d)
		}
	}
}
