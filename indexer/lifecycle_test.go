package indexer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend/blevebm25"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// countingEncoder is a deterministic stand-in for a sentence encoder (hashed bag of words,
// as search's bowEncoder) that counts the passages it embeds.
type countingEncoder struct {
	dim   int
	texts atomic.Int64
}

func (e *countingEncoder) Identity() ModelIdentity {
	return ModelIdentity{Name: "bow", ONNXSHA256: "bow-test", Dim: e.dim, Pooling: "mean", Normalize: true, MaxSeqLen: 256}
}

func (e *countingEncoder) EncodePassages(_ context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dim)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(e.dim)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(max(n, 1)))
		}
		out[i] = v
	}
	return out, nil
}

var fastHNSW = hnsw.Options{M: 8, EfConstruction: 32, Seed: 1, Workers: 1}

// scifactRevisions derives two revisions of the SciFact corpus: the older lacks every 100th
// abstract, has ~1% of texts edited, and holds every 101st (offset 50) abstract, which the
// newer (otherwise the original) has dropped. It returns the paths and the expected ids.
func scifactRevisions(t testing.TB) (older, newer string, added, changed, deleted map[string]bool) {
	t.Helper()
	f, err := os.Open(shared(t, "data/beir-scifact/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	older, newer = filepath.Join(dir, "older.jsonl"), filepath.Join(dir, "newer.jsonl")
	ow, _ := os.Create(older)
	nw, _ := os.Create(newer)
	added, changed, deleted = map[string]bool{}, map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for i := 0; sc.Scan(); i++ {
		line := sc.Bytes()
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		id := rec["_id"].(string)
		switch {
		case i%101 == 50: // dropped by the newer revision
			deleted[id] = true
			fmt.Fprintf(ow, "%s\n", line)
			continue
		case i%100 == 0: // new in the newer revision
			added[id] = true
		case i%97 == 1: // edited between revisions: the older one has the earlier text
			changed[id] = true
			old := rec
			old["text"] = "Earlier draft. " + strings.Replace(rec["text"].(string), " the ", " a ", 2)
			b, _ := json.Marshal(old)
			fmt.Fprintf(ow, "%s\n", b)
		default:
			fmt.Fprintf(ow, "%s\n", line)
		}
		fmt.Fprintf(nw, "%s\n", line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	ow.Close()
	nw.Close()
	return older, newer, added, changed, deleted
}

// livePassages returns the live passages of the index at dir: id -> text.
func livePassages(t testing.TB, dir string) map[string]string {
	t.Helper()
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out := map[string]string{}
	err = g.Passages.Each(t.Context(), func(_ uint32, p corpus.Passage) error {
		if _, dup := out[p.ID]; dup {
			return fmt.Errorf("passage id %s live twice", p.ID)
		}
		out[p.ID] = p.Text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bm25Top returns the passage ids and scores of the top hits of q in a generation built with
// bleve (Options.Build.Lexical LexicalBleve), searched through bleve directly. bleve orders equal scores
// by its internal document numbers, which depend on segment layout, so hits are sorted by
// (score, id) and the lowest score of the list, whose tie group the cut may split, is left out.
func bm25Top(t testing.TB, g *Generation, q string) []string {
	t.Helper()
	mq := bleve.NewMatchQuery(q)
	mq.SetField(blevebm25.FieldText)
	res, err := bleveIdx(g).SearchInContext(statsCtx(g), bleve.NewSearchRequestOptions(mq, 10, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	type hit struct {
		id    string
		score float64
	}
	var hits []hit
	for _, h := range res.Hits {
		var key uint32
		fmt.Sscan(h.ID, &key)
		p, err := g.Passages.Get(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if isDead(t, g, key) {
			t.Errorf("query %q: hit %s (key %d) is tombstoned", q, p.ID, key)
		}
		hits = append(hits, hit{p.ID, math.Round(h.Score*1e9) / 1e9})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id < hits[j].id
	})
	var out []string
	for _, h := range hits {
		if len(hits) > 0 && h.score > hits[len(hits)-1].score {
			out = append(out, fmt.Sprintf("%s %.6f", h.id, h.score))
		}
	}
	return out
}

func verifyOK(t testing.TB, gen string) {
	t.Helper()
	rep, err := verifyGenDir(context.Background(), gen)
	if err != nil || !rep.OK() {
		t.Fatalf("verify %s: %v %v", gen, err, rep.Problems)
	}
}

func TestUpdateEqualsFreshBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds SciFact twice and compares them (TestConformance updates under -short)")
	}
	older, newer, added, changed, deleted := scifactRevisions(t)
	ctx := context.Background()
	dir, fresh := t.TempDir(), t.TempDir()
	enc := &countingEncoder{dim: 64}
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: older, Options: corpus.Options{Source: "scifact"}}}, EmbedInline: true, Encoder: enc, HNSW: fastHNSW, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
		t.Fatal(err)
	}
	oldGen, _ := manifest.Current(dir)
	oldPassages := livePassages(t, dir)
	built := enc.texts.Load()

	sum, err := updateIndex(ctx, UpdateOptions{
		Options:       Options{Dir: dir, Inputs: []InputSpec{{Path: newer, Options: corpus.Options{Source: "scifact"}}}, Encoder: enc, HNSW: fastHNSW},
		DeleteMissing: true, CompactRatio: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	embedded := enc.texts.Load() - built

	freshEnc := &countingEncoder{dim: 64}
	if _, err := Build(ctx, Options{Dir: fresh, Inputs: []InputSpec{{Path: newer, Options: corpus.Options{Source: "scifact"}}}, EmbedInline: true, Encoder: freshEnc, HNSW: fastHNSW, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
		t.Fatal(err)
	}
	want := livePassages(t, fresh)
	got := livePassages(t, dir)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("updated index has %d live passages, fresh build %d; they differ", len(got), len(want))
	}
	// Only the passages of added and changed documents were embedded.
	wantEmbedded := 0
	for id := range want {
		if doc := id[:strings.LastIndex(id, "#")]; added[doc] || changed[doc] {
			wantEmbedded++
		}
	}
	u := sum.Update
	if u.Added != len(added) || u.Changed != len(changed) || u.Deleted != len(deleted) ||
		u.Unchanged != sum.Counts.Documents-len(added)-len(changed) {
		t.Errorf("update counts %+v, want added %d changed %d deleted %d", *u, len(added), len(changed), len(deleted))
	}
	if embedded != int64(wantEmbedded) || u.Embedded != wantEmbedded || wantEmbedded == 0 || wantEmbedded > len(want)/20 {
		t.Errorf("embedded %d passages (summary %d), want %d of %d", embedded, u.Embedded, wantEmbedded, len(want))
	}
	if sum.Counts.Passages != len(want) || sum.Tombstones != len(oldPassages)+wantEmbedded-len(want) {
		t.Errorf("summary: %d passages %d tombstones; want %d passages, %d tombstones", sum.Counts.Passages, sum.Tombstones, len(want), len(oldPassages)+wantEmbedded-len(want))
	}

	// Both generations verify, the old one unchanged by the update (it shares files by link).
	verifyOK(t, oldGen)
	newGen, _ := manifest.Current(dir)
	verifyOK(t, newGen)

	// BM25 results are those of the fresh build, scores included: bleve's statistics
	// exclude deleted documents.
	gu, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer gu.Close()
	gf, err := openDir(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer gf.Close()
	if *gu.Manifest.BM25 != *gf.Manifest.BM25 {
		t.Errorf("BM25 statistics: updated %+v, fresh %+v", *gu.Manifest.BM25, *gf.Manifest.BM25)
	}
	for _, q := range []string{"0-dimensional biomaterials lack inductive properties", "abnormal PrP positivity",
		"colorectal cancer patients metastases", "diffusion tensor white matter newborn", "Earlier draft"} {
		a, b := bm25Top(t, gu, q), bm25Top(t, gf, q)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("query %q:\nupdated %v\nfresh   %v", q, a, b)
		}
	}
	// Dense: no tombstoned key is ever returned, and every live passage finds itself.
	q, _ := enc.EncodePassages(ctx, []string{"colorectal cancer patients metastases"})
	res, err := graphOf(gu).SearchExact(q[0], 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if isDead(t, gu, uint32(r.Key)) {
			t.Errorf("dense hit %d is tombstoned", r.Key)
		}
	}
	if graphOf(gu).Live() != len(want) {
		t.Errorf("graph has %d live vectors, want %d", graphOf(gu).Live(), len(want))
	}

	// A second update with the same input changes nothing and embeds nothing.
	before := enc.texts.Load()
	sum2, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: newer, Options: corpus.Options{Source: "scifact"}}}, Encoder: enc, HNSW: fastHNSW}, DeleteMissing: true, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	if u := sum2.Update; u.Added+u.Changed+u.Deleted != 0 || enc.texts.Load() != before || u.Unchanged != sum.Counts.Documents {
		t.Errorf("idempotent update: %+v, embedded %d", *u, enc.texts.Load()-before)
	}
	if cur, _ := manifest.Current(dir); cur != newGen || sum2.Generation != sum.Generation {
		t.Errorf("an update without changes committed generation %s (summary %d), want %s to stay live", cur, sum2.Generation, newGen)
	}
}

func TestDeleteDocuments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: shared(t, "data/faq-covid-deepset/faq_covidbert.csv")}}, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
		t.Fatal(err)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	victims := map[string]corpus.Passage{}
	g.Passages.Each(t.Context(), func(k uint32, p corpus.Passage) error {
		if len(victims) < 3 && p.Ordinal == 0 && k%20 == 0 {
			victims[p.DocID] = p
		}
		return nil
	})
	before := g.Passages.Live()
	g.Close()
	ids := []string{"no-such-doc"}
	for id := range victims {
		ids = append(ids, id)
	}
	sum, err := deleteDocs(ctx, UpdateOptions{Options: Options{Dir: dir}, CompactRatio: -1}, ids)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Deleted != 3 || !reflect.DeepEqual(sum.NotFound, []string{"no-such-doc"}) || sum.Update.Embedded != 0 {
		t.Fatalf("delete summary %+v not found %v", *sum.Update, sum.NotFound)
	}
	g, err = openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Passages.Live() != before-sum.Update.PassagesDeleted || sum.Update.PassagesDeleted < 3 {
		t.Fatalf("live %d, before %d, deleted %d", g.Passages.Live(), before, sum.Update.PassagesDeleted)
	}
	g.Passages.Each(t.Context(), func(k uint32, p corpus.Passage) error {
		if _, ok := victims[p.DocID]; ok {
			t.Errorf("passage %s of a deleted document is live", p.ID)
		}
		return nil
	})
	for doc, p := range victims {
		// Search by the exact document id and by the passage text: nothing of it comes back.
		tq := query.NewTermQuery(doc)
		tq.SetField(blevebm25.FieldDoc)
		res, err := bleveIdx(g).Search(bleve.NewSearchRequest(tq))
		if err != nil || res.Total != 0 {
			t.Errorf("doc %s: %d BM25 hits after delete (%v)", doc, res.Total, err)
		}
		for _, hit := range bm25Top(t, g, p.Text) {
			if strings.HasPrefix(hit, p.ID+" ") {
				t.Errorf("deleted passage %s still found", p.ID)
			}
		}
	}
	verifyOK(t, g.Dir)
}

// A damaged tombstone file is caught by verify (file sum and the file's own checksum) and
// refused by Open.
func TestVerifyDetectsTamperedTombstones(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	build(t, dir, shared(t, "data/faq-covid-deepset/faq_covidbert.csv"))
	if _, err := deleteDocs(ctx, UpdateOptions{Options: Options{Dir: dir}, CompactRatio: -1}, []string{"1", "2"}); err != nil {
		t.Fatal(err)
	}
	gen, _ := manifest.Current(dir)
	verifyOK(t, gen)
	path := filepath.Join(gen, tombstones.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[16] ^= 1 // the first tombstoned key: another passage now looks deleted
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := verifyIndex(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var sha, crc bool
	for _, p := range rep.Problems {
		sha = sha || p.Path == path && strings.Contains(p.What, "sha256")
		crc = crc || strings.Contains(p.What, "tombstones") && strings.Contains(p.What, "checksum mismatch")
	}
	if !sha || !crc {
		t.Fatalf("problems %v: want the tombstone file's sha256 and checksum", rep.Problems)
	}
	if _, err := openDir(dir); err == nil {
		t.Fatal("Open accepted a damaged tombstone file")
	}
}

// denseTop returns the passage ids of the exact nearest neighbours of q.
func denseTop(t testing.TB, g *Generation, enc PassageEncoder, q string) []string {
	t.Helper()
	v, _ := enc.EncodePassages(context.Background(), []string{q})
	res, err := graphOf(g).SearchExact(v[0], 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		p, err := g.Passages.Get(t.Context(), uint32(r.Key))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %.5f", p.ID, r.Score))
	}
	return out
}

func TestCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and updates SciFact, then compares the compaction (TestConformance compacts under -short)")
	}
	older, newer, _, _, _ := scifactRevisions(t)
	ctx := context.Background()
	dir := t.TempDir()
	enc := &countingEncoder{dim: 64}
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: older}}, EmbedInline: true, Encoder: enc, HNSW: fastHNSW, Build: BuildOptions{Lexical: LexicalBleve}}); err != nil {
		t.Fatal(err)
	}
	if _, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: newer}}, Encoder: enc, HNSW: fastHNSW}, DeleteMissing: true, CompactRatio: -1}); err != nil {
		t.Fatal(err)
	}
	queries := []string{"abnormal PrP positivity", "colorectal cancer patients metastases", "diffusion tensor white matter newborn"}
	snapshot := func() (map[string]string, []string) {
		g, err := openDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		var tops []string
		for _, q := range queries {
			tops = append(tops, bm25Top(t, g, q)...)
			tops = append(tops, denseTop(t, g, enc, q)...)
		}
		return livePassages(t, dir), tops
	}
	wantLive, wantTops := snapshot()
	updated, _ := manifest.Current(dir)
	m, _ := manifest.Read(updated)
	if m.Tombstones == 0 || len(m.Segments) != 2 {
		t.Fatalf("update left %d tombstones in %d segments; the test needs some", m.Tombstones, len(m.Segments))
	}
	before := enc.texts.Load()
	var prog bytes.Buffer
	sum, err := onIndex(ctx, dir, func(ix *Index) (*Summary, error) { return ix.Compact(ctx, CompactOptions{Progress: &prog}) })
	if err != nil {
		t.Fatal(err)
	}
	// The last progress line counts every live passage copied, indexed and its vector added.
	n := len(wantLive)
	if want := fmt.Sprintf("copied %d of %d passages (100%%), indexed %d (done), vectors %d (done)", n, n, n, n); !strings.Contains(prog.String(), want) {
		t.Errorf("compaction's progress %q lacks %q", prog.String(), want)
	}
	if enc.texts.Load() != before {
		t.Error("compaction called the encoder")
	}
	gotLive, gotTops := snapshot()
	if !reflect.DeepEqual(gotLive, wantLive) {
		t.Errorf("compaction changed the live passages: %d vs %d", len(gotLive), len(wantLive))
	}
	if !reflect.DeepEqual(gotTops, wantTops) {
		t.Errorf("compaction changed results:\n%v\n%v", gotTops, wantTops)
	}
	cur, _ := manifest.Current(dir)
	cm, _ := manifest.Read(cur)
	if cm.Tombstones != 0 || len(cm.Segments) != 1 || cm.Segments[0].Count != len(wantLive) || sum.Counts.Passages != len(wantLive) {
		t.Errorf("compacted manifest: %d tombstones, segments %+v", cm.Tombstones, cm.Segments)
	}
	verifyOK(t, cur)
	verifyOK(t, updated) // the previous generation is intact

	// An update past the tombstone threshold compacts on its own, showing the compaction's
	// progress only: the deletion reads no input.
	prog.Reset()
	sum, err = deleteDocs(ctx, UpdateOptions{Options: Options{Dir: dir, Encoder: enc, HNSW: fastHNSW, Progress: &prog}, CompactRatio: 0.0001}, []string{"4983"})
	if err != nil {
		t.Fatal(err)
	}
	if got := prog.String(); !strings.HasPrefix(got, "copied ") || !strings.Contains(got, fmt.Sprintf("copied %d of %d passages (100%%)", n-4, n-4)) {
		t.Errorf("a deletion's progress %q: want the compaction's lines only", got)
	}
	cur, _ = manifest.Current(dir)
	if cm, _ := manifest.Read(cur); !sum.Compacted || cm.Tombstones != 0 || sum.Counts.Passages != len(wantLive)-4 {
		t.Errorf("auto compaction: compacted %v, %d tombstones, %d passages", sum.Compacted, cm.Tombstones, sum.Counts.Passages)
	}
	verifyOK(t, cur)
}

// Two writers never interleave: while one holds the index, another update fails at once.
func TestWriterLock(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, shared(t, "data/faq-covid-deepset/faq_covidbert.csv"))
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = deleteDocs(context.Background(), UpdateOptions{Options: Options{Dir: dir}}, []string{"1"})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("delete while locked: %v, want ErrLocked", err)
	}
	if _, err := compactIndex(context.Background(), dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("compact while locked: %v, want ErrLocked", err)
	}
	unlock()
	if _, err := deleteDocs(context.Background(), UpdateOptions{Options: Options{Dir: dir}}, []string{"1"}); err != nil {
		t.Fatalf("delete after unlock: %v", err)
	}
}

// An update with DeleteMissing and SkipBad deletes no document while a record was skipped as
// malformed: the bad record may be a missing document's new copy, and deleting on its
// evidence loses the old one. With every record readable, the missing ones go.
func TestDeleteMissingKeepsDocumentsWhenRecordsWereBad(t *testing.T) {
	ctx := context.Background()
	dir, in := t.TempDir(), filepath.Join(t.TempDir(), "docs.jsonl")
	write := func(lines ...string) {
		if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := `{"id":"a","title":"Apples","text":"Apples grow on trees."}`, `{"id":"b","title":"Bananas","text":"Bananas grow in bunches."}`, `{"id":"c","title":"Cherries","text":"Cherries are small stone fruit."}`
	write(a, b, c)
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: in}}}); err != nil {
		t.Fatal(err)
	}
	write(a, `{"id":"b","title":"Bananas","text":"Bananas grow`, c)
	sum, err := updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: in}}, SkipBad: true}, DeleteMissing: true, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Deleted != 0 || sum.Update.MissingKept != 1 || sum.Counts.Bad != 1 || sum.Counts.Documents != 3 {
		t.Fatalf("update with a bad record: %+v, counts %+v; want b kept and said so", *sum.Update, sum.Counts)
	}
	write(a, c)
	sum, err = updateIndex(ctx, UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: in}}, SkipBad: true}, DeleteMissing: true, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Deleted != 1 || sum.Update.MissingKept != 0 || sum.Counts.Documents != 2 {
		t.Fatalf("update without bad records: %+v, counts %+v; want b deleted", *sum.Update, sum.Counts)
	}
}
