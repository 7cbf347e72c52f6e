package chat

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// Example is one dialogue example of a bank: a context (topic and history) and the response
// that followed it, with the knowledge the response used when known.
type Example struct {
	ID      string   `json:"id"`
	Topic   string   `json:"topic"`
	History []string `json:"history"` // earlier turns, oldest first; the last one is answered by Response
	// Knowledge is the sentence the response is grounded in ("" when unknown).
	Knowledge string `json:"knowledge,omitempty"`
	Response  string `json:"response"`
}

// LastTurn is the turn the example's response answers.
func (e Example) LastTurn() string {
	if len(e.History) == 0 {
		return ""
	}
	return e.History[len(e.History)-1]
}

// ContextText is what a bank embeds for an example and for a live query alike: topic plus
// dialogue history, the similarity MSDP and S-ICL select examples by.
func ContextText(topic string, history []string) string {
	return strings.TrimSpace(topic + " | " + strings.Join(history, " \n "))
}

func (e Example) validate() error {
	switch {
	case strings.TrimSpace(e.Response) == "":
		return errors.New("empty response")
	case len(e.History) == 0:
		return errors.New("empty history")
	}
	return nil
}

// BankFormat and BankVersion identify the bank file format owned by this package.
const (
	BankFormat  = "kairos-example-bank"
	BankVersion = 1
)

// BankHeader is the first line of a bank file.
type BankHeader struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Encoder string    `json:"encoder"` // name of the encoder the vectors come from
	Dim     int       `json:"dim"`
	Count   int       `json:"count"`
	SHA256  string    `json:"sha256"` // of every byte after the header line
	Created time.Time `json:"created"`
}

// Bank is an example bank with one unit-length vector per example.
type Bank struct {
	Header   BankHeader
	Examples []Example
	Vectors  [][]float32
}

type bankRecord struct {
	Example Example   `json:"example"`
	Vector  []float32 `json:"vector"`
}

// BankBuildOptions configures BuildBank.
type BankBuildOptions struct {
	Encoder   string // recorded in the header; required
	BatchSize int    // texts per Encode call; default 64
	// Progress, when set, is called after each batch with examples done and total.
	Progress func(done, total int)
}

// BankBuildStats counts what BuildBank read. Examples + len(Skipped) = records read.
type BankBuildStats struct {
	Examples int
	Skipped  []string // one "file:line: reason" per skipped record
}

// BuildBank reads examples as JSON lines from r (named name in errors), embeds their contexts
// with enc, and returns the bank. Malformed or empty records are skipped and listed in the stats.
func BuildBank(ctx context.Context, r io.Reader, name string, enc Encoder, opts BankBuildOptions) (*Bank, BankBuildStats, error) {
	var st BankBuildStats
	if opts.Encoder == "" {
		return nil, st, errors.New("bank: encoder name is required")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	var exs []Example
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Example
		if err := json.Unmarshal(b, &e); err != nil {
			st.Skipped = append(st.Skipped, fmt.Sprintf("%s:%d: %v", name, line, err))
			continue
		}
		if err := e.validate(); err != nil {
			st.Skipped = append(st.Skipped, fmt.Sprintf("%s:%d: %v", name, line, err))
			continue
		}
		if e.ID == "" {
			e.ID = fmt.Sprintf("%s:%d", name, line)
		}
		exs = append(exs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, st, fmt.Errorf("bank: reading %s: %w", name, err)
	}
	if len(exs) == 0 {
		return nil, st, fmt.Errorf("bank: %s has no usable example (%d skipped)", name, len(st.Skipped))
	}
	vecs := make([][]float32, 0, len(exs))
	for i := 0; i < len(exs); i += opts.BatchSize {
		batch := exs[i:min(i+opts.BatchSize, len(exs))]
		texts := make([]string, len(batch))
		for j, e := range batch {
			texts[j] = ContextText(e.Topic, e.History)
		}
		vs, err := enc.Encode(ctx, texts)
		if err != nil {
			return nil, st, fmt.Errorf("bank: encoding examples %d-%d: %w", i+1, i+len(batch), err)
		}
		if len(vs) != len(batch) {
			return nil, st, fmt.Errorf("bank: encoder returned %d vectors for %d texts", len(vs), len(batch))
		}
		for _, v := range vs {
			if len(v) == 0 || len(vecs) > 0 && len(v) != len(vecs[0]) {
				return nil, st, fmt.Errorf("bank: encoder returned a vector of dimension %d", len(v))
			}
			vecs = append(vecs, normalize(v))
		}
		if opts.Progress != nil {
			opts.Progress(len(vecs), len(exs))
		}
	}
	st.Examples = len(exs)
	return &Bank{
		Header:   BankHeader{Format: BankFormat, Version: BankVersion, Encoder: opts.Encoder, Dim: len(vecs[0]), Count: len(exs), Created: time.Now().UTC()},
		Examples: exs, Vectors: vecs,
	}, st, nil
}

// WriteFile writes the bank atomically: a crash leaves any previous file intact.
func (b *Bank) WriteFile(path string) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for i, e := range b.Examples {
		if err := enc.Encode(bankRecord{Example: e, Vector: b.Vectors[i]}); err != nil {
			return fmt.Errorf("bank: encoding example %d: %w", i, err)
		}
	}
	sum := sha256.Sum256(body.Bytes())
	h := b.Header
	h.Count, h.SHA256 = len(b.Examples), hex.EncodeToString(sum[:])
	hb, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("bank: %w", err)
	}
	out := append(append(hb, '\n'), body.Bytes()...)
	if err := atomicfile.WriteFile(path, out, atomicfile.Options{}); err != nil {
		return fmt.Errorf("bank: %w", err)
	}
	b.Header = h
	return nil
}

// ReadBank reads and verifies a bank file: format, version, checksum, count and dimensions.
func ReadBank(path string) (*Bank, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bank: %w", err)
	}
	nl := bytes.IndexByte(raw, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("bank %s: line 1: no header line", path)
	}
	var h BankHeader
	if err := json.Unmarshal(raw[:nl], &h); err != nil {
		return nil, fmt.Errorf("bank %s: line 1: header: %w", path, err)
	}
	if h.Format != BankFormat {
		return nil, fmt.Errorf("bank %s: format %q, want %q", path, h.Format, BankFormat)
	}
	if h.Version != BankVersion {
		return nil, fmt.Errorf("bank %s: version %d, this build reads version %d", path, h.Version, BankVersion)
	}
	body := raw[nl+1:]
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != h.SHA256 {
		return nil, fmt.Errorf("bank %s: checksum mismatch (file corrupt or truncated)", path)
	}
	b := &Bank{Header: h}
	dec := json.NewDecoder(bytes.NewReader(body))
	for line := 2; dec.More(); line++ {
		var r bankRecord
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("bank %s: line %d: %w", path, line, err)
		}
		if len(r.Vector) != h.Dim {
			return nil, fmt.Errorf("bank %s: line %d: vector dimension %d, header says %d", path, line, len(r.Vector), h.Dim)
		}
		b.Examples = append(b.Examples, r.Example)
		b.Vectors = append(b.Vectors, r.Vector)
	}
	if len(b.Examples) != h.Count {
		return nil, fmt.Errorf("bank %s: %d examples, header says %d", path, len(b.Examples), h.Count)
	}
	return b, nil
}

// Scored is an example index with its cosine similarity to a query.
type Scored struct {
	Index int     `json:"index"`
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// TopN returns the n examples most similar to q (cosine), best first, among those keep accepts
// (nil keeps all). Ties break by index so that selection is deterministic.
func (b *Bank) TopN(q []float32, n int, keep func(i int) bool) ([]Scored, error) {
	if len(q) != b.Header.Dim {
		return nil, fmt.Errorf("bank: query vector dimension %d, bank has %d", len(q), b.Header.Dim)
	}
	q = normalize(q)
	var all []Scored
	for i, v := range b.Vectors {
		if keep != nil && !keep(i) {
			continue
		}
		all = append(all, Scored{Index: i, ID: b.Examples[i].ID, Score: dot(q, v)})
	}
	slices.SortFunc(all, func(a, c Scored) int {
		if a.Score != c.Score {
			if a.Score > c.Score {
				return -1
			}
			return 1
		}
		return a.Index - c.Index
	})
	return all[:min(n, len(all))], nil
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
