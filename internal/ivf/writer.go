package ivf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kairos-rag/kairos/internal/filesum"
	"github.com/kairos-rag/kairos/internal/hnsw"
)

// Parameters of the graph over the centroids: it is small (thousands of nodes), so it is built
// well (efConstruction 200) on one goroutine, which makes it the same on every build.
const (
	graphM     = 16
	graphEfC   = 200
	assignEf   = 64 // candidate list of the graph search that finds a vector's list
	maxSegs    = 8  // list segments an update leaves before it merges them into one
	readBlock  = 1 << 16
	progressAt = 1 << 14
)

// exactMaxLists is the most lists whose vectors find theirs by comparison with every centroid
// (nearest.go); past it, the graph search is faster. 20,000 vectors of the 1M topic fixture
// against 4,096, 16,384 and 32,768 of its vectors as centroids took 34.0, 131.5 and 237.7 µs a
// vector compared with every one, 105.1, 169.5 and 200.8 µs by the graph search.
const exactMaxLists = 16384

// Writer builds one index in a directory, from scratch (Create) or from a committed index
// (Derive). Add is called by one goroutine at a time; it assigns on Options.Workers.
type Writer struct {
	dir              string
	h                Head
	workers          int
	dim, dpad, words int
	trainAt          int // positions at which the centroids are trained (MaxInt: at the final commit)
	n                int
	lastKey          int64
	cur              *chunkWriter
	chunks           []*chunk // sealed chunks, mapped
	maps             []*mapped
	rot              rotation
	cent             *centroids
	graph            *hnsw.Graph
	near             *nearestTable // nil: the graph finds each vector's list
	pend             pending
	deleted          []uint32 // sorted positions
	newDeleted       map[uint32]bool
	written          []File
	adopt            bool
	closed           bool
	scratch          sync.Pool
}

// Create starts an empty index for vectors of dim in dir (created if missing, and which must not
// hold one). expect is how many vectors it will hold, when the caller knows it (0: not): the
// number of lists and the training sample are chosen from it, and the centroids are trained as
// soon as the sample has been added, so that every later vector is assigned as it comes.
// Without it, the centroids are trained at the final commit.
func Create(dir string, dim int, o Options, expect int) (*Writer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if dim < 1 || dim > 1<<16 {
		return nil, fmt.Errorf("ivf: dimension %d", dim)
	}
	if !nativeLittle {
		return nil, errors.New("ivf: the index's files are little-endian and this host is not")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, HeadName)); err == nil {
		return nil, fmt.Errorf("ivf: %s already holds an index", dir)
	}
	w := newWriter(dir, dim, o.Workers)
	o.Workers = 0
	o.SetDefaults()
	o.Workers = 0
	if o.Lists == 0 && expect > 0 {
		o.Lists = ListsFor(expect)
	}
	if o.Sample == 0 && o.Lists > 0 {
		o.Sample = SampleFor(o.Lists)
	}
	w.h = Head{Dim: dim, Options: o, Chunks: []FileRange{}, Lists: []FileRange{}, RefineBits: 1}
	if o.NoRefine {
		w.h.RefineBits = 0
	}
	w.setTrainAt()
	return w, nil
}

func newWriter(dir string, dim, workers int) *Writer {
	if workers <= 0 {
		o := Options{}
		o.SetDefaults()
		workers = o.Workers
	}
	dpad := padDim(dim)
	return &Writer{dir: dir, dim: dim, dpad: dpad, words: dpad / 64, workers: workers, lastKey: -1, newDeleted: map[uint32]bool{}}
}

// setTrainAt settles when the centroids are trained: once Sample vectors are in, or at the
// final commit when the sample is not known.
func (w *Writer) setTrainAt() {
	w.trainAt = math.MaxInt
	if w.h.Options.Sample > 0 && !w.h.Trained() {
		w.trainAt = w.h.Options.Sample
	}
}

// Derive starts an index in dir as a copy of base, whose immutable files it shares by hard
// link; base is taken over (its caller must not use it afterwards, and closing it releases
// nothing the writer holds). adopt says base is the build's own checkpoint: the final commit
// then merges its list segments into one.
func Derive(dir string, base *Reader, adopt bool, workers int) (*Writer, error) {
	if base == nil || base.closed {
		return nil, errors.New("ivf: deriving from a closed index")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := linkFiles(base.dir, dir, base.h.Files()); err != nil {
		return nil, err
	}
	w := newWriter(dir, base.h.Dim, workers)
	w.h = *base.h
	w.h.Chunks = slices.Clone(base.h.Chunks)
	w.h.Lists = slices.Clone(base.h.Lists)
	w.n = w.h.Len()
	w.adopt = adopt
	w.chunks, w.maps = base.chunks, base.maps
	w.cent, w.graph, w.rot = base.cent, base.graph, base.rot
	if w.cent != nil {
		w.near = nearestFor(w.cent.dirs, w.dim, w.cent.lists)
	}
	w.deleted = base.deletedList()
	if k := len(w.chunks); k > 0 {
		c := w.chunks[k-1]
		w.lastKey = int64(c.keys[c.count-1])
	}
	// The writer owns what base mapped and loaded from now on.
	base.maps, base.chunks, base.segs, base.graph, base.closed = nil, nil, nil, nil, true
	w.setTrainAt()
	return w, nil
}

// Len is the number of vectors added, deleted ones included.
func (w *Writer) Len() int { return w.n }

// Options are the index's options as settled so far (Lists and Sample once known).
func (w *Writer) Options() Options { return w.h.Options }

// Add adds vecs under keys, which must ascend, each above every key already in the index: the
// index finds a key's vector by binary search over positions.
func (w *Writer) Add(ctx context.Context, keys []uint32, vecs [][]float32) error {
	if w.closed {
		return errors.New("ivf: add to a committed or aborted writer")
	}
	if len(keys) != len(vecs) {
		return fmt.Errorf("ivf: %d keys for %d vectors", len(keys), len(vecs))
	}
	if len(keys) == 0 {
		return nil
	}
	first := w.n
	canon := make([]float32, len(keys)*w.dim)
	unit := make([]float32, w.dim)
	code := make([]byte, w.dim)
	for i, key := range keys {
		v := vecs[i]
		if len(v) != w.dim {
			return fmt.Errorf("ivf: vector of key %d has dimension %d, the index %d", key, len(v), w.dim)
		}
		if int64(key) <= w.lastKey {
			return fmt.Errorf("ivf: key %d added after key %d: keys must ascend", key, w.lastKey)
		}
		if !finite(v) {
			return fmt.Errorf("ivf: vector of key %d is not finite", key)
		}
		normalize(unit, v)
		inv := quantize(code, unit)
		if w.cur == nil {
			c, err := newChunkWriter(w.dir, w.nextName("vectors", chunkSuffix), w.dim, w.n)
			if err != nil {
				return err
			}
			w.cur = c
		}
		if err := w.cur.add(key, code, inv); err != nil {
			return err
		}
		dequantize(canon[i*w.dim:(i+1)*w.dim], code, inv)
		w.lastKey = int64(key)
		w.n++
	}
	switch {
	case w.cent != nil:
		return w.assign(ctx, first, canon)
	case w.n >= w.trainAt:
		return w.train(ctx)
	}
	return nil
}

// nextName returns the name of the next new file.
func (w *Writer) nextName(prefix, suffix string) string {
	w.h.NextFile++
	return name(prefix, w.h.NextFile, suffix)
}

// Delete deletes the vector of key; it reports false when the index has no live vector of it.
func (w *Writer) Delete(key uint32) bool {
	p, ok := w.position(key)
	if !ok {
		return false
	}
	if _, dead := slices.BinarySearch(w.deleted, p); dead || w.newDeleted[p] {
		return false
	}
	w.newDeleted[p] = true
	return true
}

// position finds the position of key in the sealed chunks or the chunk being written.
func (w *Writer) position(key uint32) (uint32, bool) {
	if w.cur != nil {
		if i, ok := slices.BinarySearch(w.cur.keys, key); ok {
			return uint32(w.cur.first + i), true
		}
	}
	return chunkPosition(w.chunks, key)
}

// chunkPosition finds key in chunks (in position order, keys ascending across them).
func chunkPosition(chunks []*chunk, key uint32) (uint32, bool) {
	j, _ := slices.BinarySearchFunc(chunks, key, func(c *chunk, k uint32) int {
		switch {
		case c.keys[c.count-1] < k:
			return -1
		case c.keys[0] > k:
			return 1
		}
		return 0
	})
	if j == len(chunks) {
		return 0, false
	}
	c := chunks[j]
	i, ok := slices.BinarySearch(c.keys, key)
	if !ok {
		return 0, false
	}
	return uint32(c.first + i), true
}

// readVectors writes the canonical vectors of positions first to first+count-1 into dst.
func (w *Writer) readVectors(dst []float32, first, count int) error {
	rs := recSize(w.dim)
	var buf []byte
	for p := first; p < first+count; {
		if w.cur != nil && p >= w.cur.first {
			i, j := p-w.cur.first, min(first+count, w.cur.first+w.cur.count())-w.cur.first
			if cap(buf) < (j-i)*rs {
				buf = make([]byte, (j-i)*rs)
			}
			if err := w.cur.read(buf, i, j); err != nil {
				return fmt.Errorf("reading back %s: %w", w.cur.path, err)
			}
			for k := 0; k < j-i; k++ {
				r := buf[k*rs : (k+1)*rs]
				inv := math.Float32frombits(uint32(r[0]) | uint32(r[1])<<8 | uint32(r[2])<<16 | uint32(r[3])<<24)
				dequantize(dst[(p-first+k)*w.dim:(p-first+k+1)*w.dim], r[4:], inv)
			}
			p += j - i
			continue
		}
		c := chunkAt(w.chunks, p)
		if c == nil {
			return fmt.Errorf("ivf: position %d in no chunk", p)
		}
		for ; p < first+count && p < c.first+c.count; p++ {
			inv, code := c.rec(p - c.first)
			dequantize(dst[(p-first)*w.dim:(p-first+1)*w.dim], code, inv)
		}
	}
	return nil
}

// chunkAt returns the chunk holding position p, nil when none does.
func chunkAt(chunks []*chunk, p int) *chunk {
	j, ok := slices.BinarySearchFunc(chunks, p, func(c *chunk, p int) int {
		switch {
		case c.first+c.count <= p:
			return -1
		case c.first > p:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return chunks[j]
}

// train trains the centroids on the first Sample vectors (all of them when fewer), builds the
// graph over them, writes both, and assigns every vector added so far.
func (w *Writer) train(ctx context.Context) error {
	o := &w.h.Options
	lists := o.Lists
	if lists == 0 {
		lists = ListsFor(w.n)
	}
	sample := o.Sample
	if sample == 0 {
		sample = SampleFor(lists)
	}
	sample = min(sample, w.n)
	lists = max(1, min(lists, sample))
	o.Lists, o.Sample = lists, sample
	vecs := make([]float32, sample*w.dim)
	if err := w.readVectors(vecs, 0, sample); err != nil {
		return err
	}
	dirs, err := train(ctx, vecs, w.dim, lists, o.Seed, w.workers)
	if err != nil {
		return fmt.Errorf("training %d centroids: %w", lists, err)
	}
	g, err := hnsw.New(w.dim, hnsw.Options{M: graphM, EfConstruction: graphEfC, Seed: o.Seed, Workers: 1})
	if err != nil {
		return err
	}
	keys := make([]uint64, lists)
	rows := make([][]float32, lists)
	for l := range lists {
		keys[l], rows[l] = uint64(l), dirs[l*w.dim:(l+1)*w.dim]
	}
	if err := g.Add(ctx, keys, rows); err != nil {
		g.Close()
		return fmt.Errorf("building the graph over the centroids: %w", err)
	}
	signs := make([]byte, 3*w.dpad)
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5eed0f12345678))
	for i := range signs {
		signs[i] = byte(rng.IntN(2))
	}
	w.rot = newRotation(w.dpad, signs)
	w.graph = g
	w.near = nearestFor(dirs, w.dim, lists)
	// The lists' centres are the means of their sample vectors, which the codes are residuals
	// from; a list no sample vector went to is centred on its direction, scaled as the others.
	assign := make([]uint32, sample)
	w.parallel(sample, func(lo, hi int, s *scratch) {
		w.listsOf(vecs[lo*w.dim:hi*w.dim], assign[lo:hi], s)
	})
	sums := make([]float64, lists*w.dim)
	counts := make([]int, lists)
	for i, l := range assign {
		row := vecs[i*w.dim : (i+1)*w.dim]
		s := sums[int(l)*w.dim : int(l+1)*w.dim]
		for d, x := range row {
			s[d] += float64(x)
		}
		counts[l]++
	}
	var normSum float64
	used := 0
	mean := make([]float32, w.dim)
	for l, c := range counts {
		if c == 0 {
			continue
		}
		var n2 float64
		for _, x := range sums[l*w.dim : (l+1)*w.dim] {
			n2 += (x / float64(c)) * (x / float64(c))
		}
		normSum += math.Sqrt(n2)
		used++
	}
	meanNorm := 0.0
	if used > 0 {
		meanNorm = normSum / float64(used)
	}
	cent := &centroids{dim: w.dim, dpad: w.dpad, lists: lists, signs: signs, dirs: dirs, centers: make([]float32, lists*w.dpad)}
	for l, c := range counts {
		for d := range mean {
			if c > 0 {
				mean[d] = float32(sums[l*w.dim+d] / float64(c))
			} else {
				mean[d] = dirs[l*w.dim+d] * float32(meanNorm)
			}
		}
		w.rot.apply(cent.centers[l*w.dpad:(l+1)*w.dpad], mean)
	}
	cent.derive()
	vecs = nil
	cf, err := writeFile(w.dir, w.nextName("centroids", centSuffix), func(fw *filesum.Writer) error { return writeCentroids(fw, cent) })
	if err != nil {
		return err
	}
	gname := name("centroids", w.h.NextFile, graphSuffix)
	size, sum, err := g.SaveSum(filepath.Join(w.dir, gname))
	if err != nil {
		return fmt.Errorf("saving the graph over the centroids: %w", err)
	}
	w.written = append(w.written, cf, File{Name: gname, Size: size, SHA256: sum})
	w.h.Centroids, w.h.Graph = cf.Name, gname
	w.cent = cent
	// Every vector added so far gets its list and code, a block at a time.
	block := make([]float32, readBlock*w.dim)
	for first := 0; first < w.n; first += readBlock {
		count := min(readBlock, w.n-first)
		if err := w.readVectors(block[:count*w.dim], first, count); err != nil {
			return err
		}
		if err := w.assign(ctx, first, block[:count*w.dim]); err != nil {
			return err
		}
	}
	return nil
}

// scratch is one goroutine's working memory for assigning vectors.
type scratch struct {
	near   nearestScratch
	po     []float32
	refine refineScratch
}

func (w *Writer) getScratch() *scratch {
	s, _ := w.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{po: make([]float32, w.dpad), refine: newRefineScratch(w.dpad)}
	}
	return s
}

// parallel runs fn over [0, n) split in fixed ranges on the writer's workers.
func (w *Writer) parallel(n int, fn func(lo, hi int, s *scratch)) {
	workers := max(1, min(w.workers, n/64+1))
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := k*per, min(n, (k+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := w.getScratch()
			defer w.scratch.Put(s)
			fn(lo, hi, s)
		}()
	}
	wg.Wait()
}

// nearestFor returns the table that assigns vectors to the lists of the unit directions dirs
// by comparing them with every one, or nil where there are too many for that (exactMaxLists).
func nearestFor(dirs []float32, dim, lists int) *nearestTable {
	if lists > exactMaxLists {
		return nil
	}
	return newNearestTable(dirs, dim, lists)
}

// listsOf sets out[i] to the list of the i-th canonical vector of vecs: its nearest centroid,
// found by comparison with every one or, past exactMaxLists lists, by the graph.
func (w *Writer) listsOf(vecs []float32, out []uint32, s *scratch) {
	if w.near != nil {
		w.near.nearest(vecs, out, &s.near)
		return
	}
	for i := range out {
		res, err := w.graph.Search(vecs[i*w.dim:(i+1)*w.dim], 1, assignEf)
		if err != nil || len(res) == 0 {
			out[i] = 0 // a zero vector: any list holds it equally badly
			continue
		}
		out[i] = uint32(res[0].Key)
	}
}

// assign gives the vectors of positions first.. (canonical, in vecs) their lists and codes.
func (w *Writer) assign(ctx context.Context, first int, vecs []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	count := len(vecs) / w.dim
	refine := w.h.RefineBits > 0
	at := w.pend.grow(count, w.words, refine)
	w.parallel(count, func(lo, hi int, s *scratch) {
		w.listsOf(vecs[lo*w.dim:hi*w.dim], w.pend.list[at+lo:at+hi], s)
		for i := lo; i < hi; i++ {
			v := vecs[i*w.dim : (i+1)*w.dim]
			e := at + i
			l := w.pend.list[e]
			w.pend.pos[e] = uint32(first + i)
			w.rot.apply(s.po, v)
			f := w.pend.factors[e*factorsPer : (e+1)*factorsPer]
			c := w.cent.centers[int(l)*w.dpad : int(l+1)*w.dpad]
			f[0], f[1], f[2] = encodeCode(w.pend.codes[e*w.words:(e+1)*w.words], s.po, c)
			if refine {
				rw := refineWords(w.words)
				encodeRefine(w.pend.refine[e*rw:(e+1)*rw], s.po, c, &s.refine)
			}
		}
	})
	return nil
}

// Commit makes the index durable in its directory and closes the writer; final is false for a
// build's checkpoint (nothing searches it: its list segments stay as they are, and the writer
// that adopts it merges them). progress, when set, is told how far a merge of list segments
// has got. It returns the files written, with their sums; the files shared with the base are
// not among them.
func (w *Writer) Commit(ctx context.Context, final bool, progress func(done, total int)) ([]File, error) {
	if w.closed {
		return nil, errors.New("ivf: commit of a committed or aborted writer")
	}
	files, err := w.commit(ctx, final, progress)
	w.release()
	if err != nil {
		return nil, err
	}
	return files, nil
}

func (w *Writer) commit(ctx context.Context, final bool, progress func(done, total int)) ([]File, error) {
	if w.cur != nil {
		if w.cur.count() == 0 {
			w.cur.abort()
		} else {
			f, err := w.cur.seal()
			if err != nil {
				return nil, err
			}
			w.written = append(w.written, f)
			w.h.Chunks = append(w.h.Chunks, FileRange{Name: f.Name, First: w.cur.first, Count: w.cur.count()})
			// Mapped so that training and merging read it like the others.
			c, m, err := openChunk(w.dir, w.h.Chunks[len(w.h.Chunks)-1], w.dim, false)
			if err != nil {
				return nil, err
			}
			w.chunks, w.maps = append(w.chunks, c), append(w.maps, m)
		}
		w.cur = nil
	}
	if final && w.cent == nil && w.n > 0 {
		if err := w.train(ctx); err != nil {
			return nil, err
		}
	}
	if w.cent != nil {
		listed := 0
		if k := len(w.h.Lists); k > 0 {
			listed = w.h.Lists[k-1].First + w.h.Lists[k-1].Count
		}
		segs := len(w.h.Lists)
		if w.pend.len() > 0 {
			segs++
		}
		// A build ends with one segment; an update leaves its own beside the others until
		// there are too many.
		merge := segs > 1 && ((final && w.adopt) || segs > maxSegs)
		if w.pend.len() != w.n-listed {
			return nil, fmt.Errorf("ivf: %d codes pending for positions %d to %d", w.pend.len(), listed, w.n)
		}
		if w.pend.len() > 0 || merge {
			if err := w.writeLists(ctx, merge, progress); err != nil {
				return nil, err
			}
		}
	}
	if len(w.newDeleted) > 0 {
		all := slices.Clone(w.deleted)
		for p := range w.newDeleted {
			all = append(all, p)
		}
		slices.Sort(all)
		if old := w.h.Deleted; old != "" {
			if err := os.Remove(filepath.Join(w.dir, old)); err != nil {
				return nil, err
			}
		}
		f, err := writeFile(w.dir, w.nextName("deleted", deletedSuffix), func(fw *filesum.Writer) error { return writeDeleted(fw, all) })
		if err != nil {
			return nil, err
		}
		w.written = append(w.written, f)
		w.h.Deleted, w.h.DeletedCount = f.Name, len(all)
	}
	if err := w.h.validate(); err != nil {
		return nil, fmt.Errorf("ivf: the index about to be committed is inconsistent: %w", err)
	}
	b, err := encodeHead(&w.h)
	if err != nil {
		return nil, err
	}
	hf, err := writeFile(w.dir, HeadName, func(fw *filesum.Writer) error { _, err := fw.Write(b); return err })
	if err != nil {
		return nil, err
	}
	return append(w.written, hf), nil
}

// writeLists writes the pending codes as a new list segment, or (merge) every segment and the
// pending codes as one, removing the merged segments' files from the directory.
func (w *Writer) writeLists(ctx context.Context, merge bool, progress func(done, total int)) error {
	lists := w.h.Options.Lists
	var segs []*segment
	var maps []*mapped
	defer func() {
		for _, m := range maps {
			m.close()
		}
	}()
	first := w.n - w.pend.len()
	if merge {
		// The merged segment gets a checksum of its own, so each merged one is checked first,
		// whatever its size: a reader may have opened it unchecked (OpenOptions.VerifyBelow),
		// and damage copied unchecked would pass every later check. The merge reads every
		// byte of it anyway.
		for _, r := range w.h.Lists {
			s, m, err := openSegment(w.dir, r, w.dim, w.words, lists, w.n, func(int64) bool { return true })
			if err != nil {
				return err
			}
			segs, maps = append(segs, s), append(maps, m)
		}
		first = 0
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src := newSegmentSource(segs, &w.pend, lists)
	count := w.n - first
	nm := w.nextName("lists", listsSuffix)
	f, err := writeFile(w.dir, nm, func(fw *filesum.Writer) error {
		return writeSegment(fw, src, w.dim, w.words, lists, w.h.RefineBits, first, count, progress)
	})
	if err != nil {
		return err
	}
	w.written = append(w.written, f)
	r := FileRange{Name: nm, First: first, Count: count}
	if merge {
		for _, old := range w.h.Lists {
			if err := os.Remove(filepath.Join(w.dir, old.Name)); err != nil {
				return err
			}
		}
		w.h.Lists = []FileRange{r}
	} else {
		w.h.Lists = append(w.h.Lists, r)
	}
	w.pend = pending{}
	return nil
}

// Abort releases the writer after a failure: its files go with its directory, which the
// caller removes.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	if w.cur != nil {
		w.cur.abort()
		w.cur = nil
	}
	w.release()
}

// release closes what the writer holds.
func (w *Writer) release() {
	w.closed = true
	for _, m := range w.maps {
		m.close()
	}
	w.maps, w.chunks = nil, nil
	if w.graph != nil {
		w.graph.Close()
		w.graph = nil
	}
	w.pend = pending{}
}

// Build writes an index of vecs, under keys 0 to len(vecs)-1, in dir and opens it: the entry
// point of a benchmark that measures the index on vectors it holds (kairos bench ann's
// anchors), as kairos index builds it (the sample trained on as soon as it is in, every
// vector assigned as it is added).
func Build(ctx context.Context, dir string, vecs [][]float32, o Options) (*Reader, error) {
	if len(vecs) == 0 {
		return nil, errors.New("ivf: no vectors")
	}
	w, err := Create(dir, len(vecs[0]), o, len(vecs))
	if err != nil {
		return nil, err
	}
	const batch = 10000
	keys := make([]uint32, batch)
	for i := 0; i < len(vecs); i += batch {
		j := min(len(vecs), i+batch)
		for k := i; k < j; k++ {
			keys[k-i] = uint32(k)
		}
		if err := w.Add(ctx, keys[:j-i], vecs[i:j]); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if _, err := w.Commit(ctx, true, nil); err != nil {
		return nil, err
	}
	return Open(dir, OpenOptions{})
}
