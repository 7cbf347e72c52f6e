package indexer

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/indexer/manifest"
	"github.com/kairos-rag/kairos/internal/ivf"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/internal/version"
)

// docPassages is one input document split into passages, with its content hash.
type docPassages struct {
	id       string
	hash     doctable.Hash
	passages []corpus.Passage
	src      []uint32 // compaction: the passages' keys in the generation being compacted
	// idFromPosition: the id is a record number the reader gave a record without one
	// (corpus.Document.IDFromPosition), unique within its input only.
	idFromPosition bool
}

// docBatch is a run of documents from one input. Its position is the number of documents of
// the input consumed once it is applied; done carries the input's final reader stats on its
// last batch, so counts and positions committed at a checkpoint always agree.
type docBatch struct {
	docs   []docPassages
	input  int
	docsIn int // documents of input consumed after this batch
	done   *inputDone
}

type inputDone struct {
	stats  corpus.ReadStats
	format string
	source string
}

// writeMode says how a genWriter treats a document whose id it already has.
type writeMode int

const (
	// modeAppend (builds, resumed builds): every document is added; a repeated id keeps both
	// records' passages under that id, as a build from scratch does.
	modeAppend writeMode = iota
	// modeUpdate: a document whose content hash is unchanged is skipped; a changed one
	// replaces the old passages (tombstoned); an id may appear only once in the input.
	modeUpdate
	// modeAddVectors: the base's passages, unchanged, get vectors (the second half of a
	// lexical-first build, addvectors.go); the base has none and the encoder begins a graph.
	modeAddVectors
)

// UpdateCounts says what an update did to documents and passages.
type UpdateCounts struct {
	Added, Changed, Unchanged, Deleted int // documents
	PassagesAdded                      int // new passages written (store, BM25)
	PassagesDeleted                    int // passages tombstoned
	Embedded                           int // passages sent to the encoder
	// MissingKept is how many documents absent from the inputs an update with DeleteMissing
	// kept because malformed records were skipped (SkipBad): one of them may be such a
	// document's new copy.
	MissingKept int
}

// genWriter writes one generation directory, from scratch or derived from a base generation
// whose immutable files it hard-links (store segments here, the engines' own files in Begin),
// so the base stays byte-identical and readable. The lexical and vector parts are written
// through the engines of opts.Engines (indexer/backend).
type genWriter struct {
	dir     string // the *.tmp directory being written
	gen     int
	opts    *Options
	mode    writeMode
	base    *Generation // nil when writing from scratch
	pw      backend.PassageWriter
	next    uint32                     // the key of the next passage added
	docs    map[string]*doctable.Entry // update mode: the document table, in memory
	log     *doctable.Log              // append mode: the document table, spilled (doctable.Log)
	keepLog bool                       // finish leaves log open: a checkpoint hands it to the next writer
	// checkpoint: finish commits a build's checkpoint, its lexical part unmerged and its
	// vector part unrepaired when the engines can (backend.CheckpointLexicalWriter,
	// backend.CheckpointVectorWriter); the next writer adopts them.
	checkpoint bool
	keys       []uint32        // scratch: the keys of the document being written
	seen       map[string]bool // update mode: ids met in the input
	lex        backend.LexicalWriter
	closed     bool // seg and lex are closed (finish or abort ran)
	vec        backend.VectorWriter
	text       *langanalysis.Passages // the index's analysis, to count the tokens of tombstoned passages
	man        Manifest
	upd        UpdateCounts
	prog       *progress
	model      ModelIdentity
	// tokens of the text field in the inherited live passages, less those tombstoned since;
	// the lexical engine counts the passages added (BM25Stats.Tokens is the sum)
	tokens int64
	// vectors, when set, supplies vectors by source key instead of the encoder (compaction).
	vectors func(src []uint32) ([][]float32, error)
	// expect is how many vectors the vector part will hold in all, when the writer knows it
	// (the embedding half of a lexical-first build); 0: it does not.
	expect int

	// committed are the files finish wrote and hashed as it wrote them: the engines' (their
	// commits' Files) and the document table (append mode).
	committed []backend.CommittedFile
	// reopen reads the vector part finish committed from memory (backend.VectorCommit), nil
	// when it must be opened again.
	reopen func(backend.Meta) backend.VectorReader
	// known are the files the build has hashed, its earlier checkpoints' among them; finish
	// adds the generation's (sumFiles).
	known knownSums
	// finishTook is how long finish spent in each of its stages, for the checkpoint's log line.
	finishTook finishTimes

	// the asynchronous half: bleve batches in flight and the embedder
	g    *errgroup.Group
	gctx context.Context
	sem  chan struct{}
	jobs chan embedJob
}

// finishTimes is how long genWriter.finish spent in each stage; docs, the document table, runs
// beside lexical (the passage store's and the lexical part's commits).
type finishTimes struct{ lexical, docs, vectors, sums time.Duration }

// handover is what a writer continues with from its own build's checkpoint: the document
// table, handed on instead of read back, and the sums of the files hashed so far.
type handover struct {
	docs  map[string]*doctable.Entry // update mode
	log   *doctable.Log              // append mode
	known knownSums
}

// handover is what the writer after a checkpoint's finish goes on with.
func (w *genWriter) handover() handover { return handover{docs: w.docs, log: w.log, known: w.known} }

// newGenWriter prepares dir (already created, empty) as generation gen. With base, the new
// generation starts as a copy of base; graph is the base's HNSW graph to extend (owned by the
// writer from now on). carried, when not zero, is base's document table, already in memory
// (or spilled) and owned by the writer from now on (a build continuing from its own
// checkpoint); zero reads it from base. expect is how many vectors the generation will hold,
// when known (0: not).
func newGenWriter(dir string, gen int, opts *Options, mode writeMode, base *Generation, carried handover, prog *progress, expect int) (_ *genWriter, err error) {
	w := &genWriter{
		dir: dir, gen: gen, opts: opts, mode: mode, base: base, prog: prog, expect: expect,
		seen: map[string]bool{}, known: carried.known,
		man: Manifest{
			FormatVersion: FormatVersion, Kairos: cmp.Or(opts.Version, version.String()), Options: opts.Build,
			Counts: Counts{Skipped: map[string]int{}}, Sources: map[string]int{},
			Files: map[string]FileSum{},
		},
	}
	if w.text, err = langanalysis.NewPassages(opts.Build.Analyzer); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && w.log != nil {
			w.log.Close() // the base table it holds open, the runs of a carried log
		}
	}()
	ctx := context.Background()
	g := backend.Gen{Name: manifest.GenerationName(gen), Dir: dir}
	if mode == modeUpdate {
		w.docs = map[string]*doctable.Entry{}
	} else {
		w.log = &doctable.Log{Dir: dir, Limit: doctable.DefaultLogLimit}
	}
	if base == nil {
		if w.lex, err = opts.eng.Lexical.Begin(ctx, g, nil, backend.LexicalBegin{Analyzer: opts.Build.Analyzer}); err != nil {
			return nil, err
		}
		if opts.Encoder != nil {
			w.model = opts.Encoder.Identity()
			if w.vec, err = opts.eng.Vectors.Begin(ctx, g, w.model.Dim, nil, backend.VectorBegin{Expect: expect}); err != nil {
				w.lex.Abort()
				return nil, err
			}
		}
	} else if err := w.inherit(ctx, g, carried); err != nil {
		w.abortEngines()
		return nil, err
	}
	var pb *backend.PassageBase
	if base != nil {
		bm := base.Manifest
		pb = &backend.PassageBase{Gen: backend.Gen{Name: manifest.GenerationName(bm.Generation), Dir: base.Dir}, Layout: bm.PassageLayout(), Store: base.Passages}
		w.next = pb.Layout.NextKey()
	}
	if w.pw, err = opts.eng.Passages.Begin(ctx, g, pb); err != nil {
		w.abortEngines()
		return nil, err
	}
	return w, nil
}

// abortEngines releases the engines' writers begun so far when the writer cannot start: a
// graph built from codes holds its spilled vectors open (TestDiskFullTmpfs saw the file keep
// a full tmpfs busy after the passage store's Begin failed).
func (w *genWriter) abortEngines() {
	if w.lex != nil {
		w.lex.Abort()
	}
	if w.vec != nil {
		w.vec.Abort()
	}
}

// inherit begins the lexical and vector engines' parts as copies of the base's (the
// passage part is begun by newGenWriter). carried is the base's document table when the
// caller has it (see newGenWriter).
func (w *genWriter) inherit(ctx context.Context, g backend.Gen, carried handover) error {
	b := w.base
	bm := b.Manifest
	var err error
	switch {
	case w.mode == modeUpdate && carried.docs != nil:
		w.docs = carried.docs
	case w.mode == modeUpdate:
		if w.docs, err = b.docTable(ctx); err != nil {
			return err
		}
	case carried.log != nil:
		w.log = carried.log
		w.log.Dir = w.dir // new runs go beside this generation (the last one's was renamed)
	default:
		if w.log.Base, w.log.BaseDone, err = b.docTableFile(ctx); err != nil {
			return err
		}
	}
	// An append goes on from its own build's checkpoint (a build or a resumed one): its
	// lexical segments are this build's, merged with the rest at the end.
	lb := backend.LexicalBegin{Analyzer: w.opts.Build.Analyzer, Adopt: w.mode == modeAppend}
	if w.lex, err = w.opts.eng.Lexical.Begin(ctx, g, &backend.Gen{Name: manifest.GenerationName(bm.Generation), Dir: b.Dir}, lb); err != nil {
		return err
	}
	w.man.Counts = Counts{Documents: bm.Counts.Documents, Passages: bm.Counts.Passages, Skipped: map[string]int{}}
	for k, v := range bm.Counts.Skipped {
		w.man.Counts.Skipped[k] = v
	}
	w.man.Counts.Bad, w.man.Counts.Repaired, w.man.Counts.URLsRemoved = bm.Counts.Bad, bm.Counts.Repaired, bm.Counts.URLsRemoved
	for k, v := range bm.Sources {
		w.man.Sources[k] = v
	}
	w.man.Languages = maps.Clone(bm.Languages)
	w.man.DateFrom, w.man.DateTo = bm.DateFrom, bm.DateTo
	w.man.Inputs = append([]Input(nil), bm.Inputs...)
	w.man.Parent = bm.Generation
	if st := bm.BM25; st != nil {
		w.tokens = st.Tokens
	} else if w.tokens, err = liveTokens(ctx, b.Passages, w.text); err != nil {
		// a manifest without statistics: count once, from the store
		return fmt.Errorf("counting the tokens of the live passages: %w", err)
	}
	if bm.Dense != nil {
		// Without an encoder the writer may only delete (apply refuses new passages).
		if w.opts.Encoder != nil {
			if err := bm.Dense.Model.Compatible(w.opts.Encoder.Identity()); err != nil {
				return err
			}
		}
		if c := w.opts.HNSW; c.Codes != "" && c.CodesKind() != bm.Dense.HNSW.CodesKind() {
			return fmt.Errorf("--vectors %s: the index's vectors are %s; rebuild it to change them", c.Codes, bm.Dense.HNSW.CodesKind())
		}
		if b.Vectors == nil {
			return fmt.Errorf("%s: the base generation's vectors are not open", b.Dir)
		}
		// A build (or its embedding half) goes on from its own checkpoint, whose graph was
		// saved unrepaired: the final Commit repairs the whole of it.
		vb := backend.VectorBegin{Adopt: w.mode != modeUpdate, Expect: w.expect}
		if w.vec, err = w.opts.eng.Vectors.Begin(ctx, g, bm.Dense.Model.Dim, b.Vectors, vb); err != nil {
			return err
		}
		w.model = bm.Dense.Model
		b.Vectors = nil // the writer has taken it over
	} else if w.opts.Encoder != nil {
		if w.mode != modeAddVectors {
			return fmt.Errorf("%s has no dense vectors; an encoder cannot be added by an update (rebuild)", b.Dir)
		}
		w.model = w.opts.Encoder.Identity()
		if w.vec, err = w.opts.eng.Vectors.Begin(ctx, g, w.model.Dim, nil, backend.VectorBegin{Expect: w.expect}); err != nil {
			return err
		}
	}
	return nil
}

// start begins a session of asynchronous work; wait ends it.
func (w *genWriter) start(ctx context.Context) {
	w.g, w.gctx = errgroup.WithContext(ctx)
	w.sem = make(chan struct{}, 2) // two bleve batches in flight: one analyses while one merges
	w.jobs = nil
	if w.vec != nil {
		w.jobs = make(chan embedJob, 2)
		jobs := w.jobs
		w.g.Go(func() error { return w.embedder(w.gctx, jobs) })
	}
}

func (w *genWriter) wait() error {
	if w.jobs != nil {
		close(w.jobs)
		w.jobs = nil
	}
	return w.g.Wait()
}

// asyncErr returns the error that stopped the asynchronous half: the group's first error
// (a bleve batch that hit ENOSPC, an encoder failure), not the context.Canceled it caused,
// which would name the wrong cause.
func (w *genWriter) asyncErr() error {
	if err := w.wait(); err != nil {
		return err
	}
	return w.gctx.Err()
}

// apply writes one batch of documents: tombstones for what they replace, their passages in
// the store segment, bleve and (asynchronously) the encoder and graph.
func (w *genWriter) apply(b docBatch) error {
	if w.gctx.Err() != nil {
		return w.asyncErr()
	}
	bb := w.lex.NewBatch()
	var job embedJob
	added := 0
	for i := range b.docs {
		d := &b.docs[i]
		var e *doctable.Entry // update mode: the document's entry in the table
		if w.mode == modeUpdate {
			old, had := w.docs[d.id]
			if w.seen[d.id] {
				return fmt.Errorf("%s: document id %q was read already from another input: an id must be unique across the inputs (a file given twice, or overlapping inputs); drop one or index them separately",
					w.opts.Inputs[b.input].Path, d.id)
			}
			w.seen[d.id] = true
			switch {
			case had && old.Hash == d.hash:
				w.upd.Unchanged++
				continue
			case had:
				w.upd.Changed++
				src, err := w.tombstone(bb, old.Keys)
				if err != nil {
					return err
				}
				if src != "" && w.opts.Inputs[b.input].Options.Source == "" {
					// A changed document keeps the source it was indexed under, as an
					// unchanged one does: by default a source is its input's file name,
					// which a newer dump changes ("sf300b"), and a --source filter would
					// miss the documents that changed. --source given names it anew.
					for j := range d.passages {
						d.passages[j].Source = src
					}
				}
			default:
				w.upd.Added++
			}
		}
		if w.vec != nil && w.vectors == nil && w.opts.Encoder == nil && len(d.passages) > 0 {
			return fmt.Errorf("document %q: the index has dense vectors (%s); new passages need its encoder (--model)", d.id, w.model.Name)
		}
		if w.mode == modeUpdate {
			e = &doctable.Entry{Hash: d.hash}
			w.docs[d.id] = e
		}
		w.keys = w.keys[:0]
		for j := range d.passages {
			p := &d.passages[j]
			key := w.next
			if key == math.MaxUint32 {
				return errors.New("passage store full (2^32 passage keys)")
			}
			if err := w.pw.Add(w.gctx, key, p); err != nil {
				return err
			}
			w.next++
			w.keys = append(w.keys, key)
			if err := bb.Add(key, p); err != nil {
				return err
			}
			if w.jobs != nil {
				job.keys = append(job.keys, key)
				if d.src != nil {
					job.src = append(job.src, d.src[j])
				} else {
					job.texts = append(job.texts, p.Text)
				}
			}
			w.note(p)
			added++
		}
		if e != nil {
			e.Keys = append(e.Keys, w.keys...)
		} else if err := w.log.Add(d.id, d.hash, w.keys, int32(b.input+1), d.idFromPosition); err != nil {
			return err
		}
	}
	if w.mode == modeAppend {
		w.man.Counts.Documents += len(b.docs) // documents read (a resumed build skips some)
	}
	if b.done != nil {
		w.noteInput(b.input, b.done)
	}
	return w.submit(bb, job, added)
}

// submit hands a lexical batch adding passages passages, and an embedding job, to the
// asynchronous half.
func (w *genWriter) submit(bb backend.LexicalBatch, job embedJob, passages int) error {
	if len(job.keys) > 0 {
		select {
		case w.jobs <- job:
		case <-w.gctx.Done():
			return w.asyncErr()
		}
	}
	if bb.Len() == 0 {
		return nil
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.gctx.Done():
		return w.asyncErr()
	}
	w.g.Go(func() (err error) {
		defer func() { <-w.sem }()
		defer recoverTo(&err, "indexing batch")
		start := time.Now()
		err = w.lex.Apply(w.gctx, bb)
		// the index stage's busy time: batches are indexed on these goroutines
		w.prog.stages.index.Add(time.Since(start), int64(bb.Len()), 0)
		if err != nil {
			return fmt.Errorf("indexing batch: %w", err)
		}
		w.prog.passagesIndexed(passages)
		return nil
	})
	return nil
}

// tombstone deletes keys of the base generation from every part of the index and returns the
// source of the first passage it deleted ("" when none was live).
func (w *genWriter) tombstone(bb backend.LexicalBatch, keys []uint32) (source string, err error) {
	for _, k := range keys {
		if !w.pw.Delete(k) {
			continue
		}
		p, err := w.base.Passages.Get(w.gctx, k) // the session's: it ends when the build does
		if err != nil {
			return "", fmt.Errorf("reading replaced passage: %w", err)
		}
		if source == "" {
			source = p.Source
		}
		if w.man.Sources[p.Source]--; w.man.Sources[p.Source] <= 0 {
			delete(w.man.Sources, p.Source)
		}
		if p.Language != "" {
			if w.man.Languages[p.Language]--; w.man.Languages[p.Language] <= 0 {
				delete(w.man.Languages, p.Language)
			}
		}
		w.man.Counts.Passages--
		w.upd.PassagesDeleted++
		toks, err := w.text.Terms(p.Language, p.Text, nil)
		if err != nil {
			return "", fmt.Errorf("replaced passage %s: %w", p.ID, err)
		}
		w.tokens -= int64(len(toks))
		bb.Delete(k, &p)
		if w.vec != nil {
			w.vec.Delete(k)
		}
	}
	return source, nil
}

// deleteDocs removes whole documents (ids absent from the table are counted as not found).
// Only an update deletes.
func (w *genWriter) deleteDocs(ids []string) (notFound []string, err error) {
	if w.mode != modeUpdate {
		return nil, fmt.Errorf("deleting documents: not in an update")
	}
	bb := w.lex.NewBatch()
	for _, id := range ids {
		e, ok := w.docs[id]
		if !ok {
			notFound = append(notFound, id)
			continue
		}
		if _, err := w.tombstone(bb, e.Keys); err != nil {
			return nil, err
		}
		delete(w.docs, id)
		w.upd.Deleted++
	}
	return notFound, w.submit(bb, embedJob{}, 0)
}

// note records a written passage in the manifest's counts.
func (w *genWriter) note(p *Passage) {
	w.man.Counts.Passages++
	w.upd.PassagesAdded++
	w.man.Sources[p.Source]++
	if p.Language != "" {
		if w.man.Languages == nil {
			w.man.Languages = map[string]int{}
		}
		w.man.Languages[p.Language]++
	}
	if d := p.Date; !d.IsZero() {
		if w.man.DateFrom.IsZero() || d.Before(w.man.DateFrom) {
			w.man.DateFrom = d
		}
		if d.After(w.man.DateTo) {
			w.man.DateTo = d
		}
	}
}

// noteInput records a finished input's reader counts.
func (w *genWriter) noteInput(i int, d *inputDone) {
	c := &w.man.Counts
	c.Bad += d.stats.Bad
	c.Repaired += d.stats.Repaired
	c.URLsRemoved += d.stats.URLsRemoved
	for reason, n := range d.stats.Skipped {
		c.Skipped[reason] += n
	}
	for len(w.man.Inputs) <= i {
		w.man.Inputs = append(w.man.Inputs, Input{})
	}
	w.man.Inputs[i].Format, w.man.Inputs[i].Source = d.format, d.source
	w.man.Inputs[i].Columns = d.stats.Columns
}

// embedder consumes embed jobs in two stages that overlap: one encodes job i+1 while the
// other adds job i's vectors to the graph, so a fast encoder (a GPU) is not left idle while
// the graph grows, nor the graph's workers while the encoder runs. The graph receives the jobs
// in order, so what is built is the same as with one stage after the other.
func (w *genWriter) embedder(ctx context.Context, jobs <-chan embedJob) (err error) {
	type encoded struct {
		job  embedJob
		vecs [][]float32
	}
	ready := make(chan encoded, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		defer close(ready) // after an error, the adder's nil never hides it: Wait returns the first error
		defer recoverTo(&err, "embedding")
		for {
			var job embedJob
			var ok bool
			select {
			case job, ok = <-jobs:
				if !ok {
					return nil
				}
			case <-gctx.Done():
				return gctx.Err()
			}
			var vecs [][]float32
			var err error
			if w.vectors != nil {
				vecs, err = w.vectors(job.src)
			} else {
				vecs, err = w.encode(gctx, job.texts)
			}
			if err != nil {
				return fmt.Errorf("embedding passages %d..%d: %w", job.keys[0], job.keys[len(job.keys)-1], err)
			}
			if len(vecs) != len(job.keys) {
				return fmt.Errorf("encoder returned %d vectors for %d passages", len(vecs), len(job.keys))
			}
			select {
			case ready <- encoded{job, vecs}:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
	})
	g.Go(func() (err error) {
		defer recoverTo(&err, "adding vectors")
		for e := range ready {
			if err := w.vec.Add(gctx, e.job.keys, e.vecs); err != nil {
				return fmt.Errorf("adding vectors: %w", err)
			}
			if w.vectors == nil {
				w.upd.Embedded += len(e.job.keys) // only this goroutine writes it until wait returns
			} else {
				w.prog.passagesEmbedded(len(e.job.keys)) // the encoder counts its own as it goes
			}
		}
		return nil
	})
	return g.Wait()
}

// finish commits every part, writes the tombstones and the document table and fills the
// manifest (all but Generation, Created and the checksum). The asynchronous session must be
// over (wait).
func (w *genWriter) finish() (_ *Manifest, err error) {
	ctx := context.Background()
	w.closed = true
	defer func() {
		// A failed finish releases the graph too (closeFiles will not: closed is set), whose
		// spilled float vectors would keep their file, and its file system, busy; so does a
		// final one: only a checkpoint's graph goes on (VectorCommit.Reopen), in memory.
		if w.vec != nil && (err != nil || !w.keepLog) {
			w.vec.Abort()
		}
	}()
	if w.log != nil && !w.keepLog {
		defer w.log.Close() // its runs and base table are merged into the table written below
	}
	// A build's document table is merged and written while the passage store and the lexical
	// part commit, on another core: their files are independent, and each took seconds at a
	// 40M build's checkpoints (4.4 s and 2.3 s at 23M documents).
	table := make(chan error, 1)
	var tableSum backend.CommittedFile // hashed as it was written
	if w.mode == modeUpdate {
		table <- nil
	} else {
		go func() {
			t0 := time.Now()
			wt, err := w.log.WriteTable(filepath.Join(w.dir, doctable.FileName), w.checkRepeats)
			if err == nil {
				tableSum = backend.CommittedFile{Path: doctable.FileName, Size: wt.Size, SHA256: hex.EncodeToString(wt.SHA256[:])}
			}
			w.finishTook.docs = time.Since(t0)
			table <- err
		}()
	}
	t0 := time.Now()
	w.committed = nil
	pc, storeErr := w.pw.Commit(ctx)
	layout := pc.Layout
	lc, lexErr := w.lex.Commit(ctx, backend.CommitOptions{Checkpoint: w.checkpoint})
	w.committed = append(append(w.committed, pc.Files...), lc.Files...)
	w.finishTook.lexical = time.Since(t0)
	// waited for before any return: the deferred Close releases the runs the table reads
	tableErr := <-table
	if storeErr != nil {
		return nil, storeErr
	}
	if lexErr != nil {
		return nil, lexErr
	}
	if tableErr != nil {
		return nil, fmt.Errorf("writing document table: %w", tableErr)
	}
	if w.mode != modeUpdate {
		w.committed = append(w.committed, tableSum)
	}
	w.man.BM25 = &BM25Stats{Docs: lc.Docs, Tokens: w.tokens + lc.TokensAdded}
	if layout.Live != w.man.Counts.Passages {
		return nil, fmt.Errorf("the passage store holds %d live passages, the writer counted %d", layout.Live, w.man.Counts.Passages)
	}
	w.man.Segments = layout.Segments
	w.man.Tombstones = layout.Tombstones
	if w.mode == modeUpdate {
		t0 := time.Now()
		w.man.Counts.Documents = len(w.docs)
		if err := doctable.Write(filepath.Join(w.dir, doctable.FileName), w.docs); err != nil {
			return nil, fmt.Errorf("writing document table: %w", err)
		}
		w.finishTook.docs = time.Since(t0)
	}
	t0 = time.Now()
	w.reopen = nil
	if w.vec != nil {
		o := backend.CommitOptions{Checkpoint: w.checkpoint}
		if w.prog != nil && !w.checkpoint {
			o.Progress = w.prog.graphRepair // 37 minutes at 10M vectors: the line shows it
			w.prog.mergingLists.Store(w.opts.vectorKind == VectorIndexIVF)
		}
		vc, err := w.vec.Commit(ctx, o)
		if err != nil {
			return nil, err
		}
		w.man.Dense = &DenseInfo{Model: w.model, Index: vc.Index, Vectors: w.vec.Len()}
		if vc.Params != nil {
			var err error
			if vc.Index == VectorIndexIVF {
				w.man.Dense.IVF = new(ivf.Options)
				err = json.Unmarshal(vc.Params, w.man.Dense.IVF)
			} else {
				err = json.Unmarshal(vc.Params, &w.man.Dense.HNSW)
			}
			if err != nil {
				return nil, fmt.Errorf("the vector engine's parameters: %w", err)
			}
		}
		w.committed = append(w.committed, vc.Files...)
		w.reopen = vc.Reopen
	}
	w.finishTook.vectors = time.Since(t0)
	t0 = time.Now()
	if err := w.sumFiles(); err != nil {
		return nil, fmt.Errorf("checksumming: %w", err)
	}
	w.finishTook.sums = time.Since(t0)
	return &w.man, nil
}

// sumFiles records the size and sha256 of every file of the generation. A file that is a hard
// link of the base's file of the same name (an immutable segment shared with it) keeps the
// base's sum without being read again, so an update costs what it changes.
// A file hashed while it was written (an engine's backend.FileSummer, the document table) keeps
// that sum when its size on disk is the one hashed, and a file the build hashed for an earlier
// checkpoint keeps its sum under its new name (w.known). Each costs a stat, not a read.
func (w *genWriter) sumFiles() error {
	hashed := map[string]backend.CommittedFile{}
	for _, f := range w.committed {
		hashed[f.Path] = f
	}
	var known knownSums
	err := filepath.WalkDir(w.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(w.dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return errors.New("unexpected non-regular file " + path)
		}
		var sum FileSum
		f, ok := hashed[rel]
		if ok = ok && info.Size() == f.Size; ok {
			sum = FileSum{Size: f.Size, SHA256: f.SHA256}
		} else {
			sum, ok = w.known.lookup(info)
		}
		if !ok && w.base != nil {
			if bs, in := w.base.Manifest.Files[rel]; in && sameFile(path, filepath.Join(w.base.Dir, filepath.FromSlash(rel))) {
				sum, ok = bs, true
			}
		}
		if !ok {
			if sum, err = fileSHA256(path); err != nil {
				return err
			}
		}
		w.man.Files[rel] = sum
		known = append(known, knownSum{info: info, sum: sum})
		return nil
	})
	if err != nil {
		return err
	}
	w.known = known
	return nil
}

// sameFile reports whether a and b are the same file on disk (hard links of one inode).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// abort releases the writer's files after a failure.
func (w *genWriter) abort() {
	if w.g != nil {
		w.wait()
	}
	w.closeFiles()
}

// closeFiles releases the store segment and the engines' writers unless finish or an earlier
// abort has.
func (w *genWriter) closeFiles() {
	if w.closed {
		return
	}
	w.closed = true
	w.pw.Abort()
	w.lex.Abort()
	if w.log != nil {
		w.log.Close()
	}
	if w.vec != nil {
		w.vec.Abort()
	}
}

// checkRepeats sees the entries of one id in a build's table before they are combined, and
// refuses two documents of different inputs that share an id: merged, both records' passages
// got the same passage ids (their first was "a#0" twice, and a search returned one of them),
// and a file given twice counted its documents twice. An id may appear once in an input (the
// reader refuses a repeat, naming its line), and now once across the inputs, as an update
// requires. The inputs of entries from a resumed build's base table are not known (0).
func (w *genWriter) checkRepeats(first *doctable.Rec, rest []*doctable.Rec) error {
	for _, r := range rest {
		if first.Input != 0 && r.Input != 0 && r.Input != first.Input {
			return w.positionIDCollision(string(first.ID), first.Input, first.FromPos, int(r.Input)-1, r.FromPos)
		}
	}
	return nil
}

// positionIDCollision says why two documents that share an id cannot be merged (checkRepeats).
func (w *genWriter) positionIDCollision(id string, firstInput int32, firstFromPos bool, input int, fromPosition bool) error {
	name := func(i int, numbered bool) string {
		what := "a document with that id"
		if numbered {
			n := id[strings.LastIndex(id, ":")+1:] // without the source name of several inputs
			what = "a record without an id, numbered " + n
		}
		return fmt.Sprintf("%s (%s)", w.opts.Inputs[i].Path, what)
	}
	if !firstFromPos && !fromPosition {
		return fmt.Errorf("document id %q appears in %s and in %s: an id must be unique across the inputs (a file given twice, or overlapping inputs); drop one or index them separately",
			id, name(int(firstInput)-1, false), name(input, false))
	}
	return fmt.Errorf("document id %q appears in %s and in %s: give the records ids (id, _id, docid or pid) "+
		"or index the files separately (the inputs' numbered ids share their file name)", id, name(int(firstInput)-1, firstFromPos), name(input, fromPosition))
}
