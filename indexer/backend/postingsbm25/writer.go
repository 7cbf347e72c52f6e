package postingsbm25

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/atomicfile"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/postings"
)

// Writer writes one generation's lexical part: a new segment for the passages added, and the
// deleted set.
type Writer struct {
	dir     string
	text    *langanalysis.Passages // each passage in its language when multilingual
	deleted *tombstones.Set
	// deletedDF counts, per term, the deleted passages that hold it (carried from the base,
	// added to as passages are deleted), for the reader to take from document frequencies.
	deletedDF map[string]int
	b         *postings.Builder
	bopts     postings.BuilderOptions
	segPath   string
	// parts are the segments flushed so far when the builder was full (its RAM budget or
	// its postings bound), in key order, with their merge level (0: flushed, n: a merge of
	// mergeFactor parts of level n-1). Their names do not end in segSuffix: until Commit
	// merges them into segPath they are not segments of the generation (a crash leaves them
	// in a generation never committed, which is dropped).
	parts   []part
	partSeq int
	bPath   string // the part the builder writes
	// merging is set while a merge of parts runs in the background (one at a time), so that
	// a build adds passages while its parts merge, as Lucene's merge scheduler does; mergeIdle
	// is signalled when it ends. mergeCtx is cancelled by Commit and Abort, which stop it.
	merging     bool
	mergeIdle   *sync.Cond
	mergeCtx    context.Context
	mergeCancel context.CancelFunc
	// finishing is set while a full builder writes its part in the background (one at a
	// time: a second flush waits for it, which bounds memory to two builders), so that
	// passages go on into a new builder meanwhile, as Lucene flushes a full RAM buffer while
	// its other threads index; finishIdle is signalled when it ends. finishCtx is cancelled
	// only by Abort: Commit needs the part.
	finishing    bool
	finishIdle   *sync.Cond
	finishCtx    context.Context
	finishCancel context.CancelFunc

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
	// committed are the segments the last commit left that this writer wrote, with their
	// sums (LexicalCommit.Files).
	committed []backend.CommittedFile
}

var _ backend.LexicalWriter = (*Writer)(nil)

// mergeFactor is how many parts of one level are merged into one of the next, a log merge
// policy: each posting is rewritten about log10(passages / passages per flush) times during
// the build, and at most mergeFactor-1 parts per level wait for Commit's final merge.
const mergeFactor = 10

// adoptedLevel is the merge level of a part adopted from a checkpoint that did not record its
// parts' levels (written before they were): above every level the log policy reaches, so it
// waits for Commit's final merge.
const adoptedLevel = 1 << 16

// part is a segment file flushed or merged during the build.
type part struct {
	path  string
	level int
	// written is what writing the file reported, its size and sha256 among it; nil for a
	// part adopted from a checkpoint, which this writer did not write.
	written *postings.BuildStats
}

func newWriter(dir, genName, analyzer string, deleted *tombstones.Set, deletedDF *postings.TermCounts, e Engine) (*Writer, error) {
	text, err := langanalysis.NewPassages(analyzer)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, text: text, deleted: deleted, deletedDF: deletedDF.Map(), segPath: filepath.Join(dir, "seg-"+genName+segSuffix),
		bopts: postings.BuilderOptions{TempDir: dir, MaxBufferedPostings: e.MaxBufferedPostings, RAMBudget: e.RAMBudget, MaxPostings: e.MaxPostings}}
	w.turn = sync.NewCond(&w.mu)
	w.mergeIdle = sync.NewCond(&w.mu)
	w.mergeCtx, w.mergeCancel = context.WithCancel(context.Background())
	w.finishIdle = sync.NewCond(&w.mu)
	w.finishCtx, w.finishCancel = context.WithCancel(context.Background())
	if err := w.newBuilder(); err != nil {
		return nil, err
	}
	return w, nil
}

// newBuilder starts the next part.
func (w *Writer) newBuilder() error {
	w.partSeq++
	w.bPath = w.partPath(w.partSeq)
	b, err := postings.NewBuilder(w.bPath, w.bopts)
	if err != nil {
		return err
	}
	w.b = b
	return nil
}

func (w *Writer) partPath(seq int) string {
	return fmt.Sprintf("%s.part%06d", strings.TrimSuffix(w.segPath, segSuffix), seq)
}

// flushPart hands the full builder to a goroutine that writes it as a part and starts a new
// builder, so that Apply goes on at once. The part joins w.parts when written, after the
// earlier ones (a flush first waits for the previous one), and a background merge starts if
// the log policy has one to do. A failed write fails the writer. w.mu held; waiting for the
// previous write releases it in the middle of Apply's turn, which Abort copes with (the
// failure it sets is seen below) and Commit need not: it is called once every Apply has
// returned.
func (w *Writer) flushPart() error {
	w.waitFinish()
	if w.failed != nil {
		return w.failed
	}
	b, path := w.b, w.bPath
	if err := w.newBuilder(); err != nil {
		b.Abort()
		return err
	}
	w.finishing = true
	go func() {
		st, err := b.Finish(w.finishCtx)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.finishing = false
		defer w.finishIdle.Broadcast()
		if err != nil {
			if w.failed == nil {
				w.failed = fmt.Errorf("writing lexical segment: %w", err)
			}
			w.turn.Broadcast()
			return
		}
		w.parts = append(w.parts, part{path: path, level: 0, written: st})
		w.startMerge()
	}()
	return nil
}

// waitFinish waits for the part being written in the background, if any. w.mu held.
func (w *Writer) waitFinish() {
	for w.finishing {
		w.finishIdle.Wait()
	}
}

// mergeWindow returns the start of the first mergeFactor consecutive parts of one level below
// adoptedLevel, or -1.
func mergeWindow(parts []part) int {
	for i := 0; i+mergeFactor <= len(parts); i++ {
		lv := parts[i].level
		if lv >= adoptedLevel {
			continue
		}
		j := i + 1
		for j < i+mergeFactor && parts[j].level == lv {
			j++
		}
		if j == i+mergeFactor {
			return i
		}
	}
	return -1
}

// startMerge merges, in the background, the first window of mergeFactor parts of one level
// into one part of the next level, unless a merge runs already; when it ends it looks for the
// next. The parts around the window stay where they are (a merge only replaces its window,
// flushes only append), so key order holds. A failed merge fails the writer. w.mu held.
func (w *Writer) startMerge() {
	if w.merging || w.failed != nil || w.settled {
		return
	}
	i := mergeWindow(w.parts)
	if i < 0 {
		return
	}
	window := slices.Clone(w.parts[i : i+mergeFactor])
	w.partSeq++
	merged := part{path: w.partPath(w.partSeq), level: window[0].level + 1}
	w.merging = true
	go func() {
		st, err := w.mergeParts(w.mergeCtx, window, merged.path, 1) // the build goes on beside it
		w.mu.Lock()
		defer w.mu.Unlock()
		w.merging = false
		defer w.mergeIdle.Broadcast()
		if err != nil {
			os.Remove(merged.path)
			if w.mergeCtx.Err() != nil {
				return // stopped by Commit or Abort: its parts are as they were
			}
			if w.failed == nil {
				w.failed = err
			}
			w.turn.Broadcast()
			return
		}
		merged.written = st
		w.parts = slices.Concat(w.parts[:i], []part{merged}, w.parts[i+mergeFactor:])
		w.startMerge()
	}()
}

// waitMerges waits for the background merge, if any, to end. w.mu held.
func (w *Writer) waitMerges() {
	for w.merging {
		w.mergeIdle.Wait()
	}
}

// mergeParts merges parts into the segment file path, workers ranges of terms at once, and
// removes them.
func (w *Writer) mergeParts(ctx context.Context, parts []part, path string, workers int) (*postings.BuildStats, error) {
	var segs []*postings.Segment
	defer func() { closeAll(segs) }()
	for _, p := range parts {
		// A part this writer wrote is trusted. One adopted from a checkpoint is checksummed:
		// a resumed build checks only the checkpoint's small files, and the merge writes a
		// new checksum over whatever it reads, so a damaged part would come out certified.
		// The merge reads every byte anyway; the CRC-32C adds one pass over them.
		s, err := postings.Open(p.path, postings.OpenOptions{SkipChecksum: p.written != nil})
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	opts := w.bopts
	opts.MergeWorkers = workers
	st, err := postings.MergeSegments(ctx, path, segs, opts)
	if err != nil {
		return nil, fmt.Errorf("merging lexical segments: %w", err)
	}
	for _, p := range parts {
		if err := os.Remove(p.path); err != nil {
			return nil, err
		}
	}
	return st, nil
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
	all := append(b.docs[:len(b.docs):len(b.docs)], b.delDocs...)
	terms := make([][]string, len(all)) // the added passages', then the deleted ones'
	// One goroutine a core, each analysing a run of the batch through term caches of its own
	// (langanalysis.Analyst). Caches taken afresh for each passage passed from core to core
	// and missed the processor's caches: a 1M build spent a sixth more CPU so.
	g, _ := errgroup.WithContext(ctx)
	parts := min(runtime.GOMAXPROCS(0), len(all))
	for k := range parts {
		g.Go(func() error {
			an := w.text.Analyst()
			defer an.Close()
			for i := k * len(all) / parts; i < (k+1)*len(all)/parts; i++ {
				p := all[i]
				if p == nil {
					continue // refused below, in the batch's turn
				}
				t, err := an.Terms(p.Language, p.Text, make([]string, 0, len(p.Text)/8+1))
				if err != nil {
					return fmt.Errorf("passage %s: %w", p.ID, err)
				}
				terms[i] = t
			}
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
			if err := w.flushPart(); err != nil {
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

// Commit writes the segment (unless nothing was added) and the deleted set. A checkpoint's
// commit (o.Checkpoint) leaves the parts flushed so far as the generation's segments, in key
// order, instead of merging them: a checkpoint costs a rename, and the writer that goes on
// from it adopts them (backend.LexicalBegin.Adopt). The segments this writer wrote are hashed
// as they were written (Files); parts adopted from a checkpoint are not among them.
func (w *Writer) Commit(ctx context.Context, o backend.CommitOptions) (backend.LexicalCommit, error) {
	c, err := w.commit(ctx, !o.Checkpoint)
	if err != nil {
		return c, err
	}
	w.mu.Lock()
	c.Files = slices.Clone(w.committed)
	w.mu.Unlock()
	return c, nil
}

// adoptBase turns the segments linked from the base into parts of this writer, in key order,
// before any it flushes: the build's final Commit merges them with its own, so a build that
// went through checkpoints ends with one segment, as one that did not. The base must be the
// build's own checkpoint (its segments are the build's work, not an index to leave alone).
func (w *Writer) adoptBase(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.made > 0 || len(w.parts) > 0 {
		return errors.New("postingsbm25: adopting a base after passages were added")
	}
	segs, err := segmentFiles(w.dir)
	if err != nil {
		return err
	}
	adopted := make([]part, 0, len(segs))
	for _, s := range segs {
		w.partSeq++
		p := part{path: w.partPath(w.partSeq), level: levelOf(s)}
		if err := os.Rename(s, p.path); err != nil {
			return err
		}
		adopted = append(adopted, p)
	}
	// The builder made by newWriter holds the first number; its part comes after these.
	w.parts = adopted
	// The adopted parts go on merging where the checkpoint stopped them: left for the final
	// merge, every checkpoint's parts waited there, unmerged, and the 40M build's final
	// merge read dozens of them (380 s on one core).
	w.startMerge()
	return nil
}

// levelOf is the merge level an unmerged segment's name records (unmergedPath), or
// adoptedLevel for a name without one.
func levelOf(path string) int {
	name := strings.TrimSuffix(filepath.Base(path), segSuffix)
	i := strings.LastIndex(name, levelMark)
	if i < 0 {
		return adoptedLevel
	}
	lv, err := strconv.Atoi(name[i+len(levelMark):])
	if err != nil || lv < 0 || lv >= adoptedLevel {
		return adoptedLevel
	}
	return lv
}

// levelMark introduces the merge level in the name of an unmerged segment.
const levelMark = "-l"

func (w *Writer) commit(ctx context.Context, merge bool) (backend.LexicalCommit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A merge still running is stopped, not waited for: the final merge reads every part
	// anyway, and a checkpoint commits the parts as they are. Waiting for a merge of a
	// hundred parts stood the 10M build still for 25 s at its checkpoint. A part being
	// written is waited for: the generation needs its passages.
	w.waitFinish()
	w.mergeCancel()
	w.waitMerges()
	if w.failed != nil {
		w.abortLocked()
		return backend.LexicalCommit{}, w.failed
	}
	w.settled = true
	if err := w.finishParts(ctx, merge); err != nil {
		w.removeParts()
		return backend.LexicalCommit{}, err
	}
	if err := tombstones.Write(filepath.Join(w.dir, deletedName), w.deleted); err != nil {
		return backend.LexicalCommit{}, fmt.Errorf("writing deleted keys: %w", err)
	}
	if w.deleted.Len() > 0 {
		if err := writeTermCounts(filepath.Join(w.dir, deletedDFName), postings.NewTermCounts(w.deletedDF)); err != nil {
			return backend.LexicalCommit{}, fmt.Errorf("writing deleted term counts: %w", err)
		}
	}
	segs, err := openSegments(w.dir, true)
	if err != nil {
		return backend.LexicalCommit{}, err
	}
	defer closeAll(segs)
	docs := 0
	for _, s := range segs {
		docs += s.Len()
	}
	return backend.LexicalCommit{Docs: docs - w.deleted.Len(), TokensAdded: w.tokens}, nil
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
	w.finishCancel()
	w.mergeCancel()
	w.waitFinish()
	w.waitMerges()
	w.b.Abort()
	w.removeParts()
	os.Remove(w.segPath)
}

// finishParts writes the passages added as the generation's one segment: the builder's last
// part and the parts flushed before it, merged; or, without merge, each part as a segment
// named after the generation and its place in key order.
func (w *Writer) finishParts(ctx context.Context, merge bool) error {
	w.committed = nil
	if w.b.Len() > 0 {
		// The build waits for this part (its last, or a checkpoint's), with nothing else to
		// run: its runs are merged on every core, as the final merge of parts is.
		w.b.SetMergeWorkers(runtime.GOMAXPROCS(0))
		st, err := w.b.Finish(ctx)
		if err != nil {
			return fmt.Errorf("writing lexical segment: %w", err)
		}
		w.parts = append(w.parts, part{path: w.bPath, written: st})
	} else {
		w.b.Abort()
	}
	switch {
	case len(w.parts) == 0:
		return nil
	case !merge:
		for i, p := range w.parts {
			if err := w.settle(p, w.unmergedPath(i, p.level)); err != nil {
				return err
			}
		}
		w.parts = nil
		return atomicfile.SyncDir(w.dir)
	case len(w.parts) == 1:
		if err := w.settle(w.parts[0], w.segPath); err != nil {
			return err
		}
		w.parts = nil
		return atomicfile.SyncDir(w.dir)
	}
	// The build's last merge has the machine to itself but for the document table's write:
	// it takes every core (the 40M build's final merge took 380 s on one).
	st, err := w.mergeParts(ctx, w.parts, w.segPath, runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	w.parts = nil
	w.noteCommitted(w.segPath, st)
	return nil
}

// settle renames part p to path, a segment of the generation.
func (w *Writer) settle(p part, path string) error {
	if err := os.Rename(p.path, path); err != nil {
		return err
	}
	w.noteCommitted(path, p.written)
	return nil
}

// noteCommitted records the sum of the segment file path if this writer wrote it (st).
func (w *Writer) noteCommitted(path string, st *postings.BuildStats) {
	if st == nil {
		return
	}
	w.committed = append(w.committed, backend.CommittedFile{Path: dirName + "/" + filepath.Base(path), Size: st.Bytes, SHA256: hex.EncodeToString(st.SHA256[:])})
}

// unmergedPath is the name of the i-th segment of a generation committed unmerged, of merge
// level lv: segment files are read in name order, which must be key order ("-" sorts before
// segSuffix's ".", so these come before a merged segment of the same generation, and after
// every earlier one's). The level, after i, is for the writer that adopts the segments
// (levelOf); readers ignore it.
func (w *Writer) unmergedPath(i, lv int) string {
	stem := fmt.Sprintf("%s-%06d", strings.TrimSuffix(w.segPath, segSuffix), i)
	if lv < adoptedLevel {
		stem += levelMark + strconv.Itoa(lv)
	}
	return stem + segSuffix
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
