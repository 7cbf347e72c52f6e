package postingsbm25

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// Writer writes one generation's lexical part: a new segment for the passages added, and the
// deleted set.
type Writer struct {
	dir     string
	text    *langanalysis.Passages // each passage in its language when multilingual
	deleted *kpst.Tombstones
	// deletedDF counts, per term, the deleted passages that hold it (carried from the base,
	// added to as passages are deleted), for the reader to take from document frequencies.
	deletedDF map[string]int
	b         *postings.Builder
	bopts     postings.BuilderOptions
	segPath   string
	// parts are the segments flushed so far when the builder reached its RAM budget, in key
	// order, with their merge level (0: flushed, n: a merge of mergeFactor parts of level
	// n-1). Their names do not end in segSuffix: until Commit merges them into segPath they
	// are not segments of the generation (a crash leaves them in a generation never
	// committed, which is dropped).
	parts   []part
	partSeq int

	// Batches are applied in the order they took their first operation, which is the order
	// NewBatch made them for a caller that fills one batch before making the next (the
	// builder takes keys in increasing order), though two may be analysed at once. An empty
	// batch takes no turn, so a caller may drop it unapplied (the indexer does) without
	// stalling the batches after it.
	mu      sync.Mutex
	turn    *sync.Cond
	next    int // sequence number of the next batch to apply
	made    int // sequence numbers given to batches
	added   int
	tokens  int64
	failed  error
	settled bool
}

var _ backend.LexicalWriter = (*Writer)(nil)

// mergeFactor is how many parts of one level are merged into one of the next, a log merge
// policy: each posting is rewritten about log10(passages / passages per flush) times during
// the build, and at most mergeFactor-1 parts per level wait for Commit's final merge.
const mergeFactor = 10

// part is a segment file flushed or merged during the build.
type part struct {
	path  string
	level int
}

func newWriter(dir, genName, analyzer string, deleted *kpst.Tombstones, deletedDF *postings.TermCounts, e Engine) (*Writer, error) {
	text, err := langanalysis.NewPassages(analyzer)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, text: text, deleted: deleted, deletedDF: deletedDF.Map(), segPath: filepath.Join(dir, "seg-"+genName+segSuffix),
		bopts: postings.BuilderOptions{TempDir: dir, MaxBufferedPostings: e.MaxBufferedPostings, RAMBudget: e.RAMBudget}}
	w.turn = sync.NewCond(&w.mu)
	if err := w.newBuilder(); err != nil {
		return nil, err
	}
	return w, nil
}

// newBuilder starts the next part.
func (w *Writer) newBuilder() error {
	w.partSeq++
	b, err := postings.NewBuilder(w.partPath(w.partSeq), w.bopts)
	if err != nil {
		return err
	}
	w.b = b
	return nil
}

func (w *Writer) partPath(seq int) string {
	return fmt.Sprintf("%s.part%06d", strings.TrimSuffix(w.segPath, segSuffix), seq)
}

// flushPart writes the builder's passages as a part, merges parts by the log policy and
// starts a new builder. The builder must hold passages.
func (w *Writer) flushPart(ctx context.Context) error {
	if _, err := w.b.Finish(ctx); err != nil {
		return fmt.Errorf("writing lexical segment: %w", err)
	}
	w.parts = append(w.parts, part{path: w.partPath(w.partSeq), level: 0})
	for n := len(w.parts); n >= mergeFactor; n = len(w.parts) {
		tail := w.parts[n-mergeFactor:]
		if tail[0].level != tail[len(tail)-1].level { // levels never increase along the list
			break
		}
		w.partSeq++
		merged := part{path: w.partPath(w.partSeq), level: tail[0].level + 1}
		if err := w.mergeParts(ctx, tail, merged.path); err != nil {
			return err
		}
		w.parts = append(w.parts[:n-mergeFactor], merged)
	}
	return w.newBuilder()
}

// mergeParts merges parts into the segment file path and removes them.
func (w *Writer) mergeParts(ctx context.Context, parts []part, path string) error {
	var segs []*postings.Segment
	defer func() { closeAll(segs) }()
	for _, p := range parts {
		s, err := postings.Open(p.path, postings.OpenOptions{SkipChecksum: true}) // written by this process
		if err != nil {
			return err
		}
		segs = append(segs, s)
	}
	if _, err := postings.MergeSegments(ctx, path, segs, w.bopts); err != nil {
		return fmt.Errorf("merging lexical segments: %w", err)
	}
	for _, p := range parts {
		if err := os.Remove(p.path); err != nil {
			return err
		}
	}
	return nil
}

// Batch holds passages to add and keys to delete.
type Batch struct {
	w   *Writer
	seq int // -1 until the first operation

	keys    []uint32
	docs    []*corpus.Passage
	dels    []uint32
	delDocs []*corpus.Passage
}

var _ backend.LexicalBatch = (*Batch)(nil)

// NewBatch starts a batch; batches are applied in the order they took their first operation.
func (w *Writer) NewBatch() backend.LexicalBatch {
	return &Batch{w: w, seq: -1}
}

// take gives b its place in the apply order at its first operation.
func (b *Batch) take() {
	if b.seq >= 0 {
		return
	}
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	b.seq = b.w.made
	b.w.made++
}

// Add adds passage p under key.
func (b *Batch) Add(key uint32, p *corpus.Passage) error {
	b.take()
	b.keys = append(b.keys, key)
	b.docs = append(b.docs, p)
	return nil
}

// Delete deletes key, whose terms (those of p) stop counting in document frequencies.
func (b *Batch) Delete(key uint32, p *corpus.Passage) {
	b.take()
	b.dels = append(b.dels, key)
	b.delDocs = append(b.delDocs, p)
}

// Len is the number of operations in the batch.
func (b *Batch) Len() int { return len(b.keys) + len(b.dels) }

// Apply analyses the batch's passages on all cores, then, in batch order, adds them to the
// segment and records its deletions.
func (w *Writer) Apply(ctx context.Context, lb backend.LexicalBatch) error {
	b, ok := lb.(*Batch)
	if !ok {
		return fmt.Errorf("postingsbm25: batch of another engine (%T)", lb)
	}
	if b.seq < 0 {
		return nil // empty: it took no turn
	}
	terms := make([][]string, len(b.docs)+len(b.delDocs)) // the added passages', then the deleted ones'
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range append(b.docs[:len(b.docs):len(b.docs)], b.delDocs...) {
		g.Go(func() error {
			if p == nil {
				return nil // refused below, in the batch's turn
			}
			toks, err := w.text.Analyze(p.Language, []byte(p.Text))
			if err != nil {
				return fmt.Errorf("passage %s: %w", p.ID, err)
			}
			// one string for the passage's terms, sliced: two allocations per passage
			// instead of one per token, less for the collector to run for
			var all strings.Builder
			n := 0
			for _, tok := range toks {
				n += len(tok.Term)
			}
			all.Grow(n)
			for _, tok := range toks {
				all.Write(tok.Term)
			}
			s, off := all.String(), 0
			t := make([]string, len(toks))
			for j, tok := range toks {
				t[j] = s[off : off+len(tok.Term)]
				off += len(tok.Term)
			}
			terms[i] = t
			return nil
		})
	}
	analysed := g.Wait()

	w.mu.Lock()
	defer w.mu.Unlock()
	for w.next != b.seq && w.failed == nil {
		w.turn.Wait()
	}
	if w.failed != nil {
		return w.failed
	}
	defer func() {
		w.next++
		w.turn.Broadcast()
	}()
	if err := ctx.Err(); err != nil {
		w.failed = err
		return err
	}
	if analysed != nil {
		w.failed = analysed
		return analysed
	}
	for i, p := range b.delDocs {
		if p == nil {
			w.failed = fmt.Errorf("postingsbm25: deleting key %d without its passage (its terms' document frequencies need it)", b.dels[i])
			return w.failed
		}
	}
	for i, key := range b.keys {
		if err := w.b.Add(key, terms[i]); err != nil {
			w.failed = fmt.Errorf("passage %s: %w", b.docs[i].ID, err)
			return w.failed
		}
		w.tokens += int64(len(terms[i]))
		if w.b.Full() {
			if err := w.flushPart(ctx); err != nil {
				w.failed = err
				return err
			}
		}
	}
	w.added += len(b.keys)
	for i, k := range b.dels {
		if !w.deleted.Add(k) {
			continue // deleted before: its terms are counted already
		}
		for _, t := range distinct(terms[len(b.docs)+i]) {
			if _, ok := w.deletedDF[t]; !ok {
				t = strings.Clone(t) // not a slice of the whole passage's terms, kept alive by the key
			}
			w.deletedDF[t]++
		}
	}
	return nil
}

// Commit writes the segment (unless nothing was added) and the deleted set.
func (w *Writer) Commit(ctx context.Context) (backend.LexicalCounts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed != nil {
		w.abortLocked()
		return backend.LexicalCounts{}, w.failed
	}
	w.settled = true
	if err := w.finishParts(ctx); err != nil {
		w.removeParts()
		return backend.LexicalCounts{}, err
	}
	if err := kpst.WriteTombstones(filepath.Join(w.dir, deletedName), w.deleted); err != nil {
		return backend.LexicalCounts{}, fmt.Errorf("writing deleted keys: %w", err)
	}
	if w.deleted.Len() > 0 {
		if err := writeTermCounts(filepath.Join(w.dir, deletedDFName), postings.NewTermCounts(w.deletedDF)); err != nil {
			return backend.LexicalCounts{}, fmt.Errorf("writing deleted term counts: %w", err)
		}
	}
	segs, err := openSegments(w.dir, true)
	if err != nil {
		return backend.LexicalCounts{}, err
	}
	defer closeAll(segs)
	docs := 0
	for _, s := range segs {
		docs += s.Len()
	}
	return backend.LexicalCounts{Docs: docs - w.deleted.Len(), TokensAdded: w.tokens}, nil
}

// Abort releases the builder's temporary files; the generation is dropped by the caller.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abortLocked()
}

func (w *Writer) abortLocked() {
	if w.settled {
		return
	}
	w.settled = true
	if w.failed == nil {
		w.failed = errors.New("postingsbm25: writer aborted")
	}
	w.turn.Broadcast()
	w.b.Abort()
	w.removeParts()
	os.Remove(w.segPath)
}

// finishParts writes the passages added as the generation's one segment: the builder's last
// part and the parts flushed before it, merged.
func (w *Writer) finishParts(ctx context.Context) error {
	if w.b.Len() > 0 {
		if _, err := w.b.Finish(ctx); err != nil {
			return fmt.Errorf("writing lexical segment: %w", err)
		}
		w.parts = append(w.parts, part{path: w.partPath(w.partSeq)})
	} else {
		w.b.Abort()
	}
	switch len(w.parts) {
	case 0:
		return nil
	case 1:
		if err := os.Rename(w.parts[0].path, w.segPath); err != nil {
			return err
		}
		w.parts = nil
		return atomicfile.SyncDir(w.dir)
	}
	if err := w.mergeParts(ctx, w.parts, w.segPath); err != nil {
		return err
	}
	w.parts = nil
	return nil
}

// removeParts removes the parts left by a failed or aborted build.
func (w *Writer) removeParts() {
	for _, p := range w.parts {
		os.Remove(p.path)
	}
	w.parts = nil
}

// distinct returns terms without repeats (a passage counts once in a document frequency).
func distinct(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := terms[:0:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
