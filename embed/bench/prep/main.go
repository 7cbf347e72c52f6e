// Command prep builds the inputs of the embedding benchmark (embed/bench/run.sh):
//
//	a.jsonl / a.ids.json: N texts of exactly T tokens ([CLS] and [SEP] included), made from
//	                      SciFact abstracts cut at a word boundary (texts that cannot hit T
//	                      exactly are skipped);
//	b.jsonl / b.ids.json: the passages of SciFact as `kairos passages` makes them (real length
//	                      mix), optionally only the first --b-limit.
//
// The *.ids.json files hold the token ids Kairos's tokenizer produces (truncated at the model's
// max_seq_length), so the onnxruntime-node reference runs exactly the same inputs.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kairos-rag/kairos/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "prep:", err)
		os.Exit(1)
	}
}

func run() error {
	model := flag.String("model", "", "model folder")
	scifact := flag.String("scifact", "", "SciFact corpus.jsonl (for set a)")
	passages := flag.String("passages", "", "`kairos passages` JSONL of SciFact (for set b)")
	out := flag.String("out", "", "output directory")
	aN := flag.Int("a-n", 320, "texts in set a")
	aTokens := flag.Int("a-tokens", 149, "tokens per text in set a")
	bLimit := flag.Int("b-limit", 0, "passages in set b (0: all)")
	flag.Parse()
	if *model == "" || *scifact == "" || *passages == "" || *out == "" {
		return errors.New("need --model, --scifact, --passages and --out")
	}
	cfg, err := embed.LoadFolderConfig(*model)
	if err != nil {
		return err
	}
	tok, err := embed.LoadTokenizer(filepath.Join(*model, "tokenizer.json"), cfg.MaxSeqLen)
	if err != nil {
		return err
	}
	a, err := fixedLength(tok, *scifact, *aN, *aTokens)
	if err != nil {
		return err
	}
	b, err := readPassages(*passages, *bLimit)
	if err != nil {
		return err
	}
	for name, texts := range map[string][]string{"a": a, "b": b} {
		if err := write(tok, filepath.Join(*out, name), texts); err != nil {
			return err
		}
	}
	return nil
}

// fixedLength cuts SciFact abstracts (title, then text) to exactly want tokens.
func fixedLength(tok *embed.Tokenizer, path string, n, want int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var out []string
	for sc.Scan() && len(out) < n {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		words := strings.Fields(d.Title + " " + d.Text)
		// Token count grows monotonically with the number of words: binary search the prefix.
		k := sort.Search(len(words)+1, func(k int) bool {
			return len(tok.Encode(strings.Join(words[:k], " ")).IDs) >= want
		})
		if k <= len(words) {
			s := strings.Join(words[:k], " ")
			if l := len(tok.Encode(s).IDs); l == want && l < tok.MaxLen() {
				out = append(out, s)
			}
		}
	}
	if len(out) < n {
		return nil, fmt.Errorf("only %d abstracts give exactly %d tokens", len(out), want)
	}
	return out, sc.Err()
}

func readPassages(path string, limit int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var out []string
	for sc.Scan() && (limit == 0 || len(out) < limit) {
		var p struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !embed.IsBlank(p.Text) {
			out = append(out, p.Text)
		}
	}
	return out, sc.Err()
}

// write stores base.jsonl ({"id","text"}) and base.ids.json (token ids, one array per text),
// and prints the length distribution.
func write(tok *embed.Tokenizer, base string, texts []string) error {
	jf, err := os.Create(base + ".jsonl")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(jf)
	ids := make([][]int64, len(texts))
	lens := make([]int, len(texts))
	total := 0
	for i, t := range texts {
		b, _ := json.Marshal(map[string]any{"id": i, "text": t})
		w.Write(append(b, '\n'))
		ids[i] = tok.Encode(t).IDs
		lens[i] = len(ids[i])
		total += lens[i]
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".ids.json", b, 0o644); err != nil {
		return err
	}
	sort.Ints(lens)
	fmt.Fprintf(os.Stderr, "%s: %d texts, %d tokens, mean %.1f, min %d, p50 %d, p90 %d, max %d\n", filepath.Base(base),
		len(texts), total, float64(total)/float64(len(texts)), lens[0], lens[len(lens)/2], lens[len(lens)*9/10], lens[len(lens)-1])
	return nil
}
