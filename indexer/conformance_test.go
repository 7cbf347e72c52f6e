package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// The conformance suite: one table of behaviours run over every backend an index can have
// (in the manner of litestream's replica-client suite and bleve's versus tests), so that a
// behaviour is written once and every engine is held to it, instead of pairwise tests that
// cover some engines and drift apart. Each behaviour asserts results (top hits, scores,
// counts, the files verify names), not only the absence of errors. The Qdrant rows run on a
// real server, the child process qdranttest starts; without its binary they skip, naming it,
// unless KAIROS_QDRANT_BIN names it: `make test` does, after its setup fetched the binary,
// so there a missing server fails the column instead of skipping it.

// confBackend is one column of the suite: where an index lives and which of its parts a
// search goes through.
type confBackend struct {
	name    string
	lexical string // Build.Lexical ("" on Qdrant: its BM25 is the cluster's)
	modes   []string
	// exactScores: lexical scores of two indexes of the same live passages agree to 1e-9
	// (local engines score from the manifest's collection statistics).
	exactScores bool
	remote      bool // an index on Qdrant: no files, no tombstones
	// vectorIndex is Options.VectorIndex of a local dense column: the graph or the inverted file.
	vectorIndex string
	// start readies the backend for the behaviours of test t (the Qdrant server, stopped when
	// t ends) and returns loc, which gives a new, empty location named after name.
	start func(t *testing.T) (loc func(t *testing.T, name string) string)
	loc   func(t *testing.T, name string) string
}

// Search modes: BM25 through the generation's lexical reader, or nearest neighbours through
// its vector reader.
const (
	modeBM25  = "bm25"
	modeDense = "dense"
)

// confEncoder embeds every dense index of the suite and its queries.
var confEncoder = &countingEncoder{dim: 32}

// options are the build options of every operation of the suite on b: small batches, so that
// a build passes several commit points.
func (b confBackend) options(loc string, inputs ...InputSpec) Options {
	o := Options{Dir: loc, Inputs: inputs, Build: BuildOptions{BatchSize: 20, Lexical: b.lexical}}
	if slices.Contains(b.modes, modeDense) {
		o.Encoder, o.HNSW, o.EmbedInline, o.VectorIndex = confEncoder, fastHNSW, true, b.vectorIndex
	}
	return o
}

func (b confBackend) update(loc string, inputs ...InputSpec) UpdateOptions {
	return UpdateOptions{Options: b.options(loc, inputs...), CompactRatio: -1}
}

// confBackends are the backends of the suite.
func confBackends() []confBackend {
	local := func(*testing.T) func(t *testing.T, name string) string {
		return func(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }
	}
	remote := func(t *testing.T) func(t *testing.T, name string) string {
		if bin := os.Getenv("KAIROS_QDRANT_BIN"); bin != "" {
			// Named (as `make test` names the one its setup fetched), it must be there:
			// a skip would let the Qdrant column pass unseen.
			if _, ok := qdranttest.Binary(); !ok {
				t.Fatalf("KAIROS_QDRANT_BIN=%s: no such qdrant binary (run `make qdrant`)", bin)
			}
		}
		p := qdranttest.Start(t, 1).Peers[0] // skips, naming the binary, when it is absent
		n := 0
		return func(t *testing.T, name string) string {
			n++ // a collection per index
			return "qdrant://" + p.GRPCAddr() + "/" + strings.ReplaceAll(name, "-", "") + strconv.Itoa(n) + "?shards=1&rest=" + p.HTTPAddr()
		}
	}
	return []confBackend{
		{name: "bleve", lexical: LexicalBleve, modes: []string{modeBM25}, exactScores: true, start: local},
		{name: "postings", lexical: LexicalPostings, modes: []string{modeBM25}, exactScores: true, start: local},
		{name: "hnsw", lexical: LexicalPostings, modes: []string{modeDense}, start: local},
		{name: "ivf", lexical: LexicalPostings, modes: []string{modeDense}, start: local, vectorIndex: VectorIndexIVF},
		{name: "qdrant", modes: []string{modeBM25, modeDense}, remote: true, start: remote},
	}
}

// confFixture are the suite's inputs: the first 60 SciFact abstracts as records.
type confFixture struct {
	recs []map[string]any // in input order
	dir  string
}

func newConfFixture(t *testing.T) *confFixture {
	b, err := os.ReadFile(scifactHead(t, 65))
	if err != nil {
		t.Fatal(err)
	}
	fx := &confFixture{dir: t.TempDir()}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		fx.recs = append(fx.recs, rec)
	}
	if len(fx.recs) != 65 {
		t.Fatalf("scifact head: %d records", len(fx.recs))
	}
	return fx
}

// base returns copies of the first 60 records.
func (fx *confFixture) base() []map[string]any {
	out := make([]map[string]any, 60)
	for i := range out {
		out[i] = map[string]any{}
		for k, v := range fx.recs[i] {
			out[i][k] = v
		}
	}
	return out
}

// extra returns copies of the 5 records after the base.
func (fx *confFixture) extra() []map[string]any {
	var out []map[string]any
	for _, r := range fx.recs[60:] {
		c := map[string]any{}
		for k, v := range r {
			c[k] = v
		}
		out = append(out, c)
	}
	return out
}

func recID(rec map[string]any) string    { return fmt.Sprint(rec["_id"]) }
func recTitle(rec map[string]any) string { return fmt.Sprint(rec["title"]) }

// write writes recs as a JSONL input named name.
func (fx *confFixture) write(t *testing.T, name string, recs []map[string]any) InputSpec {
	t.Helper()
	var sb strings.Builder
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		sb.Write(b)
		sb.WriteByte('\n')
	}
	p := filepath.Join(fx.dir, strconv.Itoa(int(time.Now().UnixNano()))+"-"+name)
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return InputSpec{Path: p}
}

// confHit is one hit of a search, with its passage.
type confHit struct {
	ID, DocID, Text, Source string
	Date                    time.Time
	Score                   float64 // rounded to 1e-9
}

func (h confHit) String() string { return fmt.Sprintf("%s %.9f", h.ID, h.Score) }

// confSearch runs q on the live generation of loc in mode: BM25 over the analysed terms, or
// the nearest neighbours of q's embedding (exact: brute force, which is what two graphs of
// the same vectors agree on).
func confSearch(t *testing.T, loc, mode, q string, n int, exact bool, f backend.Filter) []confHit {
	t.Helper()
	ctx := context.Background()
	g, err := openReader(ctx, loc, ReadOptions{BM25: backend.DefaultBM25()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var hits []backend.Hit
	switch mode {
	case modeBM25:
		var err error
		hits, err = g.Lexical.Search(ctx, backend.LexicalQuery{Terms: confTerms(t, g, q), N: n, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
	case modeDense:
		vs, err := confEncoder.EncodePassages(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		hits, err = g.Vectors.Search(ctx, backend.VectorQuery{Vector: vs[0], K: n, Ef: 4 * n, Exact: exact, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]uint32, len(hits))
	for i, h := range hits {
		keys[i] = h.Key
	}
	ps, err := g.Passages.GetMany(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]confHit, len(hits))
	for i, h := range hits {
		out[i] = confHit{ID: ps[i].ID, DocID: ps[i].DocID, Text: ps[i].Text, Source: ps[i].Source, Date: ps[i].Date, Score: math.Round(h.Score*1e9) / 1e9}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("%s %q: hit %d scores %v above hit %d's %v", mode, q, i, h.Score, i-1, hits[i-1].Score)
		}
	}
	return out
}

// confTerms returns text's distinct terms as g's analyzer makes them.
func confTerms(t *testing.T, g *Generation, text string) []string {
	t.Helper()
	an, err := g.Manifest.TextAnalyzer()
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, tok := range an.Analyze([]byte(text)) {
		if s := string(tok.Term); !slices.Contains(terms, s) {
			terms = append(terms, s)
		}
	}
	return terms
}

// liveDocs returns the document table of the live generation of loc.
func liveDocs(t *testing.T, loc string) (map[string]*doctable.Entry, *Manifest) {
	t.Helper()
	ctx := context.Background()
	g, err := openReader(ctx, loc, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	docs, err := g.docTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := g.Lexical.Docs(ctx); err != nil || n != g.Manifest.Counts.Passages {
		t.Errorf("lexical part holds %d passages (%v), the manifest counts %d", n, err, g.Manifest.Counts.Passages)
	}
	return docs, g.Manifest
}

// mustBuild builds recs at a new location of b.
func mustBuild(t *testing.T, b confBackend, fx *confFixture, name string, recs []map[string]any) (string, *Summary) {
	t.Helper()
	loc := b.loc(t, name)
	sum, err := Build(context.Background(), b.options(loc, fx.write(t, name+".jsonl", recs)))
	if err != nil {
		t.Fatal(err)
	}
	return loc, sum
}

// docQuery is a query that should find rec in mode: its title for BM25; its title and text
// for a bag-of-words embedding, which the passages of rec resemble most.
func docQuery(mode string, rec map[string]any) string {
	if mode == modeDense {
		return recTitle(rec) + " " + fmt.Sprint(rec["text"])
	}
	return recTitle(rec)
}

// confBehaviours are the rows of the suite.
var confBehaviours = []struct {
	name string
	run  func(t *testing.T, b confBackend, fx *confFixture)
}{
	{"build", confBuild},
	{"search", confSearchKnown},
	{"update", confUpdate},
	{"delete", confDelete},
	{"compact", confCompact},
	{"verify", confVerify},
	{"filters", confFilters},
	{"resume", confResume},
	{"duplicate-ids", confDuplicates},
}

// TestConformance runs every behaviour on every backend and logs the table of outcomes.
func TestConformance(t *testing.T) {
	fx := newConfFixture(t)
	backends := confBackends()
	outcome := map[string]string{}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			defer func() { // the backend did not start: its column says why nothing ran
				for _, bh := range confBehaviours {
					if k := b.name + "/" + bh.name; outcome[k] == "" && t.Failed() {
						outcome[k] = "FAIL"
					} else if outcome[k] == "" && t.Skipped() {
						outcome[k] = "skip"
					}
				}
			}()
			b.loc = b.start(t)
			for _, bh := range confBehaviours {
				t.Run(bh.name, func(t *testing.T) {
					defer func() {
						switch {
						case t.Failed():
							outcome[b.name+"/"+bh.name] = "FAIL"
						case t.Skipped():
							outcome[b.name+"/"+bh.name] = "skip"
						default:
							outcome[b.name+"/"+bh.name] = "pass"
						}
					}()
					bh.run(t, b, fx)
				})
			}
		})
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-14s", "behaviour")
	for _, b := range backends {
		fmt.Fprintf(&sb, " %-9s", b.name)
	}
	for _, bh := range confBehaviours {
		fmt.Fprintf(&sb, "\n%-14s", bh.name)
		for _, b := range backends {
			o := outcome[b.name+"/"+bh.name]
			if o == "" {
				o = "not run"
			}
			fmt.Fprintf(&sb, " %-9s", o)
		}
	}
	t.Log(sb.String())
}

// build: every document of the input is in the document table, every passage in the
// lexical part (and with vectors, in the vector part), and the summary counts them.
func confBuild(t *testing.T, b confBackend, fx *confFixture) {
	recs := fx.base()
	loc, sum := mustBuild(t, b, fx, "build", recs)
	if sum.Counts.Documents != len(recs) || sum.Counts.Passages < len(recs) || sum.Counts.Bad != 0 {
		t.Errorf("counts %+v, want %d documents, at least as many passages, none bad", sum.Counts, len(recs))
	}
	docs, man := liveDocs(t, loc)
	keys := 0
	for _, r := range recs {
		if docs[recID(r)] == nil {
			t.Errorf("document %s is not in the document table", recID(r))
			continue
		}
		keys += len(docs[recID(r)].Keys)
	}
	if len(docs) != len(recs) || keys != sum.Counts.Passages || fmt.Sprint(man.Counts) != fmt.Sprint(sum.Counts) {
		t.Errorf("document table: %d documents with %d passages; manifest counts %+v; summary %+v", len(docs), keys, man.Counts, sum.Counts)
	}
	if slices.Contains(b.modes, modeDense) && (man.Dense == nil || man.Dense.Vectors != sum.Counts.Passages) {
		t.Errorf("dense part %+v, want %d vectors", man.Dense, sum.Counts.Passages)
	}
}

// search: a document's own title (BM25) or text (dense) finds it first, with a positive score.
func confSearchKnown(t *testing.T, b confBackend, fx *confFixture) {
	recs := fx.base()
	loc, _ := mustBuild(t, b, fx, "search", recs)
	for _, mode := range b.modes {
		for _, k := range []int{3, 17, 41} {
			q := docQuery(mode, recs[k])
			hits := confSearch(t, loc, mode, q, 10, false, backend.Filter{})
			if len(hits) == 0 || hits[0].DocID != recID(recs[k]) || hits[0].Score <= 0 {
				t.Errorf("%s %q: top hits %v, want document %s first with a positive score", mode, q, hits, recID(recs[k]))
			}
		}
	}
}

// confEdit replaces the text of rec with one no SciFact abstract has.
func confEdit(rec map[string]any) {
	rec["text"] = "Quokka marmalade fermentation alters zebrafish cartilage."
}

// update: a document whose text changed is found by its new text, its old passages are gone,
// and the other documents are kept as they were.
func confUpdate(t *testing.T, b confBackend, fx *confFixture) {
	recs := fx.base()
	loc, built := mustBuild(t, b, fx, "update", recs)
	const k = 11
	old := fmt.Sprint(recs[k]["text"])
	confEdit(recs[k])
	sum, err := updateIndex(context.Background(), b.update(loc, fx.write(t, "update2.jsonl", recs)))
	if err != nil {
		t.Fatal(err)
	}
	if u := sum.Update; u == nil || u.Changed != 1 || u.Added != 0 || u.Unchanged != len(recs)-1 || sum.Counts.Documents != built.Counts.Documents {
		t.Errorf("update counts %+v, documents %d: want 1 changed, %d unchanged, %d documents", sum.Update, sum.Counts.Documents, len(recs)-1, built.Counts.Documents)
	}
	for _, mode := range b.modes {
		q := "quokka marmalade fermentation"
		if mode == modeDense {
			q = docQuery(mode, recs[k])
		}
		hits := confSearch(t, loc, mode, q, 10, true, backend.Filter{})
		if len(hits) == 0 || hits[0].DocID != recID(recs[k]) || !strings.Contains(hits[0].Text, "Quokka") {
			t.Errorf("%s %q: top hits %v, want the new passage of %s", mode, q, hits, recID(recs[k]))
		}
		// The old text finds no passage that still holds it.
		for _, h := range confSearch(t, loc, mode, recTitle(recs[k])+" "+old, 200, true, backend.Filter{}) {
			if h.DocID == recID(recs[k]) && !strings.Contains(h.Text, "Quokka") {
				t.Errorf("%s: the replaced passage %s is still returned: %.60q", mode, h.ID, h.Text)
			}
		}
	}
	docs, _ := liveDocs(t, loc)
	if len(docs) != len(recs) || docs[recID(recs[k])] == nil {
		t.Errorf("document table after the update: %d documents, %s present %v", len(docs), recID(recs[k]), docs[recID(recs[k])] != nil)
	}
}

// delete: a deleted document is neither found nor counted; an id the index lacks is reported.
func confDelete(t *testing.T, b confBackend, fx *confFixture) {
	recs := fx.base()
	loc, built := mustBuild(t, b, fx, "delete", recs)
	const k = 23
	before, _ := liveDocs(t, loc)
	gone := len(before[recID(recs[k])].Keys)
	sum, err := deleteDocs(context.Background(), b.update(loc), []string{recID(recs[k]), "no-such-document"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sum.NotFound, []string{"no-such-document"}) || sum.Update == nil || sum.Update.Deleted != 1 || sum.Update.PassagesDeleted != gone {
		t.Errorf("delete: not found %v, counts %+v; want the unknown id reported and 1 document of %d passages deleted", sum.NotFound, sum.Update, gone)
	}
	if sum.Counts.Documents != built.Counts.Documents-1 || sum.Counts.Passages != built.Counts.Passages-gone {
		t.Errorf("counts after delete %+v, built %+v: want one document and %d passages fewer", sum.Counts, built.Counts, gone)
	}
	docs, man := liveDocs(t, loc)
	if len(docs) != len(recs)-1 || docs[recID(recs[k])] != nil || fmt.Sprint(man.Counts) != fmt.Sprint(sum.Counts) {
		t.Errorf("document table after delete: %d documents, deleted one present %v; manifest %+v", len(docs), docs[recID(recs[k])] != nil, man.Counts)
	}
	for _, mode := range b.modes {
		q := docQuery(mode, recs[k])
		for _, h := range confSearch(t, loc, mode, q, 500, true, backend.Filter{}) {
			if h.DocID == recID(recs[k]) {
				t.Errorf("%s: deleted document %s still returned (%s)", mode, recID(recs[k]), h.ID)
			}
		}
	}
	confDocFreq(t, loc, docQuery(modeBM25, recs[k]))
}

// confDocFreq: a term's document frequency is how many live passages a search for it alone
// finds.
func confDocFreq(t *testing.T, loc, text string) {
	t.Helper()
	ctx := context.Background()
	g, err := openReader(ctx, loc, ReadOptions{BM25: backend.DefaultBM25()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	terms := confTerms(t, g, text)
	dfs, err := g.Lexical.DocFreq(ctx, append(terms, "no-such-term-anywhere"))
	if err != nil {
		t.Fatal(err)
	}
	if len(terms) == 0 || dfs[len(terms)] != 0 {
		t.Fatalf("terms %q, document frequencies %v", terms, dfs)
	}
	for i, term := range terms {
		hits, err := g.Lexical.Search(ctx, backend.LexicalQuery{Terms: []string{term}, N: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if dfs[i] != len(hits) {
			t.Errorf("term %q: document frequency %d, a search for it finds %d passages", term, dfs[i], len(hits))
		}
	}
}

// compact: an index updated (documents changed, deleted, added) and compacted ranks exactly
// as a clean build of its live documents: the same passages with the same scores.
func confCompact(t *testing.T, b confBackend, fx *confFixture) {
	older := fx.base()
	newer := fx.base()
	for k := range newer {
		if k%10 == 3 {
			older[k]["text"] = "Earlier draft. " + fmt.Sprint(older[k]["text"])
		}
	}
	var live []map[string]any
	for k, r := range newer {
		if k%13 != 5 {
			live = append(live, r)
		}
	}
	live = append(live, fx.extra()...)
	loc, _ := mustBuild(t, b, fx, "compact", older)
	up := b.update(loc, fx.write(t, "compact-newer.jsonl", live))
	up.DeleteMissing = true
	if _, err := updateIndex(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	sum, err := compactIndex(context.Background(), loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Tombstones != 0 {
		t.Errorf("compacted generation has %d tombstones", sum.Tombstones)
	}
	clean, cleanSum := mustBuild(t, b, fx, "compact-clean", live)
	if sum.Counts.Passages != cleanSum.Counts.Passages || sum.Counts.Documents != cleanSum.Counts.Documents {
		t.Errorf("compacted counts %+v, clean build %+v", sum.Counts, cleanSum.Counts)
	}
	queries := []string{"Earlier draft of a study", "cell", recTitle(live[4]), recTitle(live[len(live)-1])}
	for _, mode := range b.modes {
		for _, q := range queries {
			got := confSearch(t, loc, mode, q, 10, true, backend.Filter{})
			want := confSearch(t, clean, mode, q, 10, true, backend.Filter{})
			if len(want) == 0 {
				t.Errorf("%s %q: no hits in the clean build", mode, q)
			}
			if !b.exactScores || mode == modeDense {
				// Scores agree to 1e-6 (float32 vectors, a remote engine's arithmetic).
				for i := range got {
					got[i].Score = math.Round(got[i].Score*1e6) / 1e6
				}
				for i := range want {
					want[i].Score = math.Round(want[i].Score*1e6) / 1e6
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %q:\ncompacted %v\nclean     %v", mode, q, got, want)
			}
		}
	}
}

// verify: a fresh index verifies; a damaged part is found, and the report names it.
func confVerify(t *testing.T, b confBackend, fx *confFixture) {
	ctx := context.Background()
	loc, sum := mustBuild(t, b, fx, "verify", fx.base())
	rep, err := verifyIndex(ctx, loc)
	if err != nil || !rep.OK() || rep.Passages != sum.Counts.Passages {
		t.Fatalf("verify of a fresh index: %+v, %v", rep, err)
	}
	if b.remote {
		confVerifyRemote(t, loc)
		return
	}
	gen := mustCurrent(t, loc)
	man, err := manifest.Read(gen)
	if err != nil {
		t.Fatal(err)
	}
	// One file of each part: the document table, the lexical part's largest file, the graph.
	targets := []string{doctable.FileName}
	largest := ""
	for name, fs := range man.Files {
		if inLexicalDir(gen, man, name) && (largest == "" || fs.Size > man.Files[largest].Size) {
			largest = name
		}
	}
	targets = append(targets, largest)
	switch {
	case man.Dense != nil && man.Dense.IndexKind() == VectorIndexIVF:
		// The inverted file's largest file: its vectors.
		big := ""
		for name, fs := range man.Files {
			if strings.HasPrefix(name, "ivf/") && (big == "" || fs.Size > man.Files[big].Size) {
				big = name
			}
		}
		targets = append(targets, big)
	case man.Dense != nil:
		rel, _ := filepath.Rel(gen, hnswPath(gen))
		targets = append(targets, filepath.ToSlash(rel))
	}
	for _, name := range targets {
		p := filepath.Join(gen, filepath.FromSlash(name))
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		flipped := slices.Clone(orig)
		flipped[len(flipped)/2] ^= 0x5a
		if err := os.WriteFile(p, flipped, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := verifyIndex(ctx, loc)
		named := false
		for _, pr := range rep.Problems {
			named = named || strings.Contains(pr.Path, filepath.Base(name))
		}
		if err != nil || rep.OK() || !named {
			t.Errorf("verify with a byte of %s flipped: %v, %v; want a problem naming the file", name, rep.Problems, err)
		}
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if rep, err := verifyIndex(ctx, loc); err != nil || !rep.OK() {
			t.Errorf("verify after %s was restored: %v, %v", name, rep.Problems, err)
		}
	}
}

// confVerifyRemote flips a byte of the document table record of the live collection.
func confVerifyRemote(t *testing.T, loc string) {
	ctx := context.Background()
	l, err := ParseLocation(loc)
	if err != nil {
		t.Fatal(err)
	}
	man, err := liveManifest(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := connectTestEngine(ctx, l.Qdrant, confEncoder.dim)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	g := backend.Gen{Name: manifest.GenerationName(man.Generation)}
	orig, err := e.ReadRecord(ctx, e.Collection(g.Name), qdrant.RecordDocTable)
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(orig)
	flipped[len(flipped)/2] ^= 0x5a
	if err := e.WriteRecord(ctx, g, qdrant.RecordDocTable, flipped); err != nil {
		t.Fatal(err)
	}
	rep, err := verifyIndex(ctx, loc)
	if err != nil || rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), "document table") {
		t.Errorf("verify with a byte of the document table flipped: %v, %v; want a problem naming it", rep.Problems, err)
	}
	if err := e.WriteRecord(ctx, g, qdrant.RecordDocTable, orig); err != nil {
		t.Fatal(err)
	}
	if rep, err := verifyIndex(ctx, loc); err != nil || !rep.OK() {
		t.Errorf("verify after the record was restored: %v, %v", rep.Problems, err)
	}
}

// filters: a filtered search returns exactly the hits of the unfiltered one that pass, in the
// same order with the same scores: sources (two inputs) and dates.
func confFilters(t *testing.T, b confBackend, fx *confFixture) {
	recs := fx.base()
	day0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for k, r := range recs {
		r["date"] = day0.AddDate(0, 0, k).Format("2006-01-02")
	}
	a, c := fx.write(t, "alpha.jsonl", recs[:30]), fx.write(t, "beta.jsonl", recs[30:])
	a.Options.Source, c.Options.Source = "alpha", "beta"
	loc := b.loc(t, "filters")
	if _, err := Build(context.Background(), b.options(loc, a, c)); err != nil {
		t.Fatal(err)
	}
	from, to := day0.AddDate(0, 0, 10), day0.AddDate(0, 0, 40)
	filters := []struct {
		name string
		f    backend.Filter
		pass func(h confHit) bool
	}{
		{"source alpha", backend.Filter{Sources: []string{"alpha"}}, func(h confHit) bool { return h.Source == "alpha" }},
		{"source beta", backend.Filter{Sources: []string{"beta"}}, func(h confHit) bool { return h.Source == "beta" }},
		{"dates", backend.Filter{DateFrom: from, DateTo: to}, func(h confHit) bool { return !h.Date.Before(from) && !h.Date.After(to) }},
		{"source and dates", backend.Filter{Sources: []string{"beta"}, DateFrom: from, DateTo: to},
			func(h confHit) bool { return h.Source == "beta" && !h.Date.Before(from) && !h.Date.After(to) }},
		{"none", backend.Filter{None: true}, func(confHit) bool { return false }},
	}
	for _, mode := range b.modes {
		q := "cell protein expression in patients"
		all := confSearch(t, loc, mode, q, 1000, true, backend.Filter{})
		if len(all) < 40 {
			t.Fatalf("%s %q: %d hits unfiltered; the test needs most passages", mode, q, len(all))
		}
		for _, tc := range filters {
			var want []confHit
			for _, h := range all {
				if tc.pass(h) {
					want = append(want, h)
				}
			}
			got := confSearch(t, loc, mode, q, 1000, true, tc.f)
			if tc.name != "none" && (len(want) == 0 || len(want) == len(all)) {
				t.Errorf("%s %s: %d of %d hits pass; the filter should select some", mode, tc.name, len(want), len(all))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s: filtered\n%v\nwant the unfiltered hits that pass\n%v", mode, tc.name, got, want)
			}
		}
	}
}

// resume: a build that fails after a checkpoint, resumed, ends with the index a clean build
// makes: the same document table (ids, hashes, keys) and the same rankings.
func confResume(t *testing.T, b confBackend, fx *confFixture) {
	ctx := context.Background()
	in := fx.write(t, "resume.jsonl", fx.base())
	opts := func(loc string, hook func(string) error) Options {
		o := b.options(loc, in)
		o.Build.BatchSize, o.CheckpointEvery, o.CheckpointAfter, o.faultAt = 10, 20, -1, hook
		return o
	}
	loc := b.loc(t, "resume")
	checkpointed := false
	_, err := Build(ctx, opts(loc, func(p string) error {
		switch {
		case p == "checkpoint-recorded":
			checkpointed = true
		case p == "batch-applied" && checkpointed:
			return errInjected
		}
		return nil
	}))
	if !errors.Is(err, errInjected) || !checkpointed {
		t.Fatalf("build with a failure after a checkpoint: %v (checkpointed %v)", err, checkpointed)
	}
	// The store reports the checkpoint the failed build left, and none once it is resumed.
	cp, err := pendingCheckpoint(ctx, loc)
	if err != nil || cp == nil || cp.Passages == 0 || cp.Generation == 0 {
		t.Fatalf("PendingCheckpoint after the failed build: %+v, %v; want a checkpoint with passages", cp, err)
	}
	sum, err := resumeBuild(ctx, opts(loc, nil))
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := pendingCheckpoint(ctx, loc); err != nil || cp != nil {
		t.Errorf("PendingCheckpoint after Resume: %+v, %v; want none", cp, err)
	}
	if sum.Resumed == 0 || sum.NoCheckpoint {
		t.Errorf("Resume started from scratch: %+v", sum)
	}
	clean := b.loc(t, "resume-clean")
	cleanSum, err := Build(ctx, opts(clean, nil))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sum.Counts) != fmt.Sprint(cleanSum.Counts) {
		t.Errorf("resumed counts %+v, clean %+v", sum.Counts, cleanSum.Counts)
	}
	got, gman := liveDocs(t, loc)
	want, wman := liveDocs(t, clean)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed document table differs from a clean build's (%d and %d documents)", len(got), len(want))
	}
	if !reflect.DeepEqual(gman.BM25, wman.BM25) {
		t.Errorf("BM25 statistics: resumed %+v, clean %+v", gman.BM25, wman.BM25)
	}
	recs := fx.base()
	for _, mode := range b.modes {
		for _, q := range []string{"cell", docQuery(mode, recs[5]), docQuery(mode, recs[55])} {
			g, w := confSearch(t, loc, mode, q, 10, true, backend.Filter{}), confSearch(t, clean, mode, q, 10, true, backend.Filter{})
			if len(w) == 0 || fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("%s %.40q:\nresumed %v\nclean   %v", mode, q, g, w)
			}
		}
	}
}

// duplicate ids: one rule for a build and an update. A document id repeated in an input is
// refused, naming the file and line of the repeat (and of the first occurrence), and nothing
// is committed; with SkipBad the repeat is skipped and counted as bad, and the document is
// indexed once.
func confDuplicates(t *testing.T, b confBackend, fx *confFixture) {
	ctx := context.Background()
	recs := fx.base()
	const k = 5
	dup := append(slices.Clone(recs), recs[k]) // line 61 repeats line 6
	wantErr := []string{"line 61", `"` + recID(recs[k]) + `"`, "line 6:"}
	refused := func(what string, err error, in InputSpec) {
		t.Helper()
		if err == nil {
			t.Errorf("%s with a repeated id: no error", what)
			return
		}
		for _, w := range append(wantErr, in.Path) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s with a repeated id: %v; want it to name %s", what, err, w)
			}
		}
	}
	once := func(what, loc string) {
		t.Helper()
		for _, mode := range b.modes {
			q := docQuery(mode, recs[k])
			seen := map[string]bool{}
			n := 0
			for _, h := range confSearch(t, loc, mode, q, 200, true, backend.Filter{}) {
				if seen[h.ID] {
					t.Errorf("%s, %s: passage %s returned twice", what, mode, h.ID)
				}
				seen[h.ID] = true
				if h.DocID == recID(recs[k]) {
					n++
				}
			}
			docs, _ := liveDocs(t, loc)
			if e := docs[recID(recs[k])]; e == nil || n != len(e.Keys) {
				t.Errorf("%s, %s: %d hits of %s; its entry %+v", what, mode, n, recID(recs[k]), e)
			}
		}
	}

	// Build.
	in := fx.write(t, "dup.jsonl", dup)
	loc := b.loc(t, "dup")
	_, err := Build(ctx, b.options(loc, in))
	refused("build", err, in)
	if _, err := liveManifest(ctx, loc); err == nil {
		t.Errorf("a refused build committed a generation")
	}
	o := b.options(loc, in)
	o.SkipBad = true
	sum, err := Build(ctx, o)
	if err != nil {
		t.Fatalf("build --skip-bad: %v", err)
	}
	if sum.Counts.Bad != 1 || sum.Counts.Documents != len(recs) || len(sum.BadRecords) != 1 || !strings.Contains(sum.BadRecords[0], "line 61") {
		t.Errorf("build --skip-bad: counts %+v, bad records %q; want the repeat counted bad and listed", sum.Counts, sum.BadRecords)
	}
	once("build --skip-bad", loc)

	// Update of an index built without the repeat.
	base, built := mustBuild(t, b, fx, "dup-update", recs)
	dup[len(dup)-1] = map[string]any{"_id": recs[k]["_id"], "title": recTitle(recs[k]), "text": "A second text under the same id."}
	in = fx.write(t, "dup-update.jsonl", dup)
	_, err = updateIndex(ctx, b.update(base, in))
	refused("update", err, in)
	if man, err := liveManifest(ctx, base); err != nil || man.Generation != built.Generation {
		t.Errorf("after a refused update: live %v, %v; want generation %d", man, err, built.Generation)
	}
	u := b.update(base, in)
	u.SkipBad = true
	sum, err = updateIndex(ctx, u)
	if err != nil {
		t.Fatalf("update --skip-bad: %v", err)
	}
	if len(sum.BadRecords) != 1 || !strings.Contains(sum.BadRecords[0], "line 61") {
		t.Errorf("update --skip-bad: bad records %q; want the repeat listed", sum.BadRecords)
	}
	once("update --skip-bad", base)
	for _, h := range confSearch(t, base, b.modes[0], "second text under the same id", 50, true, backend.Filter{}) {
		if strings.Contains(h.Text, "A second text") {
			t.Errorf("update --skip-bad indexed the skipped repeat: %s", h.ID)
		}
	}
}
