package indexer

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/doctable"
	"github.com/kairos-rag/kairos/internal/filesum"
)

// reader streams documents of the inputs into batches.
type reader struct {
	opts  *Options
	split *corpus.Splitter
	prog  *progress
	bad   []string
	known map[string]doctable.Hash // update: content hashes of the base generation (read only)
	// stream[i] is whether input i is a stream (IsStream), which this reader hashes into
	// streams as it reads it.
	stream  []bool
	streams streamSums
}

func (r *reader) readAll(ctx context.Context, from position, out chan<- docBatch) error {
	for i, in := range r.opts.Inputs {
		if i < from.Input {
			continue
		}
		skip := 0
		if i == from.Input {
			skip = from.Docs
		}
		if err := r.readInput(ctx, i, in, skip, out); err != nil {
			return err
		}
	}
	return nil
}

// readInput streams one input into batches of documents, skipping its first skip documents
// (consumed before a checkpoint).
func (r *reader) readInput(ctx context.Context, i int, in InputSpec, skip int, out chan<- docBatch) error {
	copts := in.Options
	if copts.Stages == nil {
		copts.Stages = &r.prog.stages.Stages
	}
	var (
		cr     corpus.Reader
		hashed *filesum.Reader
		err    error
	)
	if r.stream[i] {
		f := os.Stdin
		if in.Path != "-" {
			if f, err = os.Open(in.Path); err != nil {
				return err
			}
			defer f.Close()
		}
		hashed = filesum.NewReader(f)
		cr, err = corpus.OpenStream(ctx, in.Path, hashed, copts)
	} else {
		cr, err = corpus.Open(ctx, in.Path, copts)
	}
	if err != nil {
		return err // it names the file ("open x.jsonl: no such file or directory")
	}
	defer cr.Close()
	// Documents are split on workers, in input order; the ones a checkpoint already holds and
	// (on update) the unchanged ones are not split: the writer skips them.
	pr := corpus.NewPassageReader(ctx, cr, r.split, corpus.PassageReaderOptions{
		Workers: in.Options.Workers,
		Clock:   &copts.Stages.Split,
		Want: func(n int, doc *corpus.Document) bool {
			if n <= skip {
				return false
			}
			known, ok := r.known[r.docID(i, doc)]
			return !ok || known != doctable.ContentHash(doc)
		},
	})
	defer pr.Close() // before cr.Close: it stops the goroutine that reads cr
	// This goroutine's busy time is the loop's, less its waits for documents and for the
	// writer to take a batch.
	started, waited := time.Now(), time.Duration(0)
	send := func(b docBatch) error {
		defer func(t time.Time) { waited += time.Since(t) }(time.Now())
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b := docBatch{input: i}
	passages, consumed := 0, 0
	// One rule for a build and an update: a document id may appear once in an input. A
	// repeat is a bad record, refused (naming its file and line and the first occurrence's)
	// or, with SkipBad, skipped and counted as bad; the first occurrence is indexed. Before,
	// a build merged the two (a search could return the same passage twice) while an update
	// refused them without saying where. Ids repeated across inputs are the document table's
	// concern (checkRepeats, and the update's writer).
	firstAt := newIDIndex()
	repeats := 0
	var readBefore int64
	source := ""
	for {
		t := time.Now()
		doc, split, err := pr.Next(ctx)
		waited += time.Since(t)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !corpus.IsRecordError(err) || !r.opts.SkipBad {
				return err
			}
			if len(r.bad) < r.opts.MaxBadListed {
				r.bad = append(r.bad, err.Error())
			}
			continue
		}
		consumed++
		st := pr.Stats()
		if err := r.opts.checkLanguage(in.Path, consumed, doc.ID, st.Languages); err != nil {
			return err
		}
		r.prog.read(st.BytesRead-readBefore, 1)
		readBefore = st.BytesRead
		source = doc.Source
		id := r.docID(i, &doc)
		if err := repeatedID(firstAt, in.Path, id, &doc, consumed); err != nil {
			// Checked before a resumed build skips what its checkpoint holds, so that a
			// repeat of an id written before the checkpoint is still seen.
			if !r.opts.SkipBad {
				return err
			}
			repeats++
			if len(r.bad) < r.opts.MaxBadListed {
				r.bad = append(r.bad, err.Error())
			}
			continue
		}
		if consumed <= skip {
			continue
		}
		if id != doc.ID {
			doc.ID = id
			split = namespaced(split, id)
		}
		if lang := r.opts.passageLanguage(i, &doc); lang != "" {
			for j := range split {
				split[j].Language = lang
			}
		}
		h := doctable.ContentHash(&doc)
		var ps []corpus.Passage
		if known, ok := r.known[doc.ID]; !ok || known != h {
			ps = split // unchanged documents are not split: the writer skips them
			r.prog.passagesSplit(len(ps))
		}
		b.docs = append(b.docs, docPassages{id: doc.ID, hash: h, passages: ps, idFromPosition: doc.IDFromPosition})
		passages += len(ps)
		if passages >= r.opts.Build.BatchSize || len(b.docs) >= 10*r.opts.Build.BatchSize {
			b.docsIn = consumed
			if err := send(b); err != nil {
				return err
			}
			b, passages = docBatch{input: i}, 0
		}
	}
	if source == "" {
		source = in.Options.Source
	}
	b.docsIn = consumed
	st := pr.Stats()
	st.Documents -= repeats // skipped repeats count as bad records
	st.Bad += repeats
	format := st.Format // detected by the reader, or forced
	if format == "" {
		format = in.Options.Format
	}
	if hashed != nil {
		sum, err := streamSum(hashed)
		if err != nil {
			return fmt.Errorf("reading %s: %w", in.Path, err)
		}
		r.streams.set(i, sum) // before the last batch: the final commit records it
	}
	b.done = &inputDone{stats: st, format: format, source: source}
	err = send(b)
	r.prog.stages.batch.Add(time.Since(started)-waited, int64(consumed), 0)
	return err
}

// repeatedID records the id of the consumed-th document of input path in firstAt and returns
// a *corpus.RecordError when the input had it already.
func repeatedID(firstAt *idIndex, path, id string, doc *corpus.Document, consumed int) error {
	pos := doc.Pos
	if pos == "" { // a reader that does not locate its records
		pos = "document " + strconv.Itoa(consumed)
	}
	if first, ok := firstAt.add(id, pos); ok {
		return &corpus.RecordError{File: path, Pos: pos, Err: fmt.Errorf("document id %q repeats the one at %s: ids must be unique within an input", id, first)}
	}
	return nil
}

// docID is the id a document is indexed under. With several inputs, an id derived from the
// record's position (a row number) is prefixed with the input's source name, "faq:12", since
// every input numbers its records from 1; a single input keeps it as it is, so existing
// indexes and their ids do not change. Ids a record carries itself are never changed, except
// in a multilingual index, or one forced to a language over inputs of several, where every id
// is prefixed with its document's language (idLanguage), "de:12": the Wikipedias number their
// pages independently, so dewiki's page 12 and frwiki's are two documents, not one replacing
// the other.
func (r *reader) docID(i int, doc *corpus.Document) string {
	id := doc.ID
	if doc.IDFromPosition && len(r.opts.Inputs) >= 2 && doc.Source != "" {
		id = doc.Source + ":" + id
	}
	if lang := r.opts.idLanguage(i, doc); lang != "" {
		id = lang + ":" + id
	}
	return id
}

// namespaced gives the passages of a document the id id ("<id>#<ordinal>").
func namespaced(ps []corpus.Passage, id string) []corpus.Passage {
	for i := range ps {
		ps[i].DocID, ps[i].ID = id, id+"#"+strconv.Itoa(ps[i].Ordinal)
	}
	return ps
}

// Passage is corpus.Passage, named here for brevity.
type Passage = corpus.Passage

// recoverTo turns a panic in a pipeline goroutine into an error carrying the stack.
func recoverTo(err *error, stage string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: panic: %v\n%s", stage, r, debug.Stack())
	}
}
