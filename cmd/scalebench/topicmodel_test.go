package scalebench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus/synthcorpus"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// sameDocumentGap embeds passages of a corpus with topics and returns the mean cosine of two
// passages of one document (which share their topics) minus that of two passages of different
// documents.
func sameDocumentGap(t *testing.T, modelDir string, texts, docs []string) float64 {
	t.Helper()
	enc, err := embed.OpenEncoder(context.Background(), embed.Options{ModelDir: modelDir})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	vecs, err := enc.Encode(context.Background(), embed.Passage, texts)
	if err != nil {
		t.Fatal(err)
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	var same, other float64
	var nSame, nOther int
	for i := 1; i < len(vecs); i++ {
		if docs[i] == docs[i-1] {
			same += cos(vecs[i], vecs[i-1])
			nSame++
		}
		if j := (i * 7919) % len(vecs); docs[j] != docs[i] {
			other += cos(vecs[i], vecs[j])
			nOther++
		}
	}
	if nSame < 100 || nOther < 100 {
		t.Fatalf("%d same-document and %d other pairs: too few", nSame, nOther)
	}
	return same/float64(nSame) - other/float64(nOther)
}

// TestTopicModelClusters: the topic model embeds two passages of one document (same topics)
// much closer than two of different documents; the random-weight fixture, over the same
// passages, barely tells them apart. That gap is what the topic model is for.
func TestTopicModelClusters(t *testing.T) {
	ctx := context.Background()
	m, err := LearnModel(ctx, sharedtest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	const topics = 100
	dir := t.TempDir()
	err = WriteTopicModel(ctx, dir, m, TopicModelOptions{Topics: topics, Dim: 64, Seed: 1, Tokenizer: sharedtest.Join(TopicTokenizer)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := synthcorpus.Generate(ctx, &buf, m, synthcorpus.Options{Passages: 3000, Seed: 5, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	var texts, docs []string
	for line := range bytes.Lines(buf.Bytes()) {
		var rec synthcorpus.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		doc, _, _ := strings.Cut(rec.ID, "-")
		texts, docs = append(texts, rec.Title+" | "+rec.Text), append(docs, doc)
	}
	topic := sameDocumentGap(t, dir, texts, docs)
	random := sameDocumentGap(t, sharedtest.Join("models/synthetic/static-model2vec"), texts, docs)
	t.Logf("same-document minus other-document mean cosine: topic model %.3f, random-weight fixture %.3f", topic, random)
	if topic < 0.15 || topic < 3*random {
		t.Errorf("topic model's gap %.3f: want at least 0.15 and 3 times the random fixture's %.3f", topic, random)
	}
}

// TestWriteTopicModelRefuses: options that make no model are refused before anything is written.
func TestWriteTopicModelRefuses(t *testing.T) {
	m := &synthcorpus.Model{Words: []string{"a"}, Counts: []int64{1}}
	tok := sharedtest.Join(TopicTokenizer)
	for _, tc := range []struct {
		o    TopicModelOptions
		want string
	}{
		{TopicModelOptions{Tokenizer: tok}, "0 topics"},
		{TopicModelOptions{Topics: 3, Dim: -1, Tokenizer: tok}, "dimension -1"},
		{TopicModelOptions{Topics: 3, Noise: -0.5, Tokenizer: tok}, "noise -0.5"},
		{TopicModelOptions{Topics: 3, Tokenizer: filepath.Join(t.TempDir(), "no.json")}, "no.json"},
	} {
		dir := filepath.Join(t.TempDir(), "model")
		err := WriteTopicModel(context.Background(), dir, m, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.o, err, tc.want)
		}
		if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("%+v: the folder was made (%v)", tc.o, serr)
		}
	}
}
