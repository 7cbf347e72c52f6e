package indexer

import (
	"time"

	"github.com/kairos-rag/kairos/corpus"
)

// StageTime is how long one stage of a build worked, summed over the goroutines that run it
// and leaving out its waits for its input, and how much it did. A stage whose Busy time comes
// near the build's wall time times the goroutines it may use is the one holding the build
// back.
type StageTime struct {
	Busy  time.Duration
	Items int64 // what a stage counts: see BuildStages
	Bytes int64
}

// PerSecond is Items per second of Busy time, 0 when the stage did not run.
func (s StageTime) PerSecond() float64 {
	if s.Busy <= 0 {
		return 0
	}
	return float64(s.Items) / s.Busy.Seconds()
}

// BytesPerSecond is Bytes per second of Busy time, 0 when the stage did not run.
func (s StageTime) BytesPerSecond() float64 {
	if s.Busy <= 0 {
		return 0
	}
	return float64(s.Bytes) / s.Busy.Seconds()
}

// BuildStages times the stages of a build, in pipeline order. Stages that did not run (no
// compressed input, an input that is not MediaWiki) are zero.
type BuildStages struct {
	// Decompress: bzip2 or gzip decompression; Items are the bzip2 streams decompressed in
	// parallel (multistream dumps), Bytes the text it produced.
	Decompress StageTime
	// Parse: MediaWiki's scan for pages, XML decoding and wikitext cleaning; Items are the
	// pages decoded (skipped ones included), Bytes their XML.
	Parse StageTime
	// Split: cutting documents into passages; Items are the passages.
	Split StageTime
	// Batch: the reader goroutine that hashes the documents and batches them for the writer;
	// Items are the documents.
	Batch StageTime
	// Index: the lexical engine's Apply of each batch (text analysis, postings), on the
	// goroutines the writer hands batches to; Items are the passages indexed.
	Index StageTime
	// Write: the writer goroutine, less its waits for batches: the passage store, document
	// table, checkpoints and commit, and its waits for Index when both of its batch slots are
	// taken; Items are the passages indexed.
	Write StageTime
}

// stageClocks are the clocks of a build's stages, filled while it runs.
type stageClocks struct {
	corpus.Stages
	batch, index, write corpus.StageClock
	writerWait          time.Duration // written by the writer goroutine only
}

// writerWaited records a wait of the writer for its next batch (see driver.write).
func (p *progress) writerWaited(d time.Duration) { p.stages.writerWait += d }

// result returns the stages as a Summary reports them.
func (c *stageClocks) result() *BuildStages {
	st := func(k *corpus.StageClock) StageTime {
		return StageTime{Busy: k.Busy(), Items: k.Items(), Bytes: k.Bytes()}
	}
	return &BuildStages{Decompress: st(&c.Decompress), Parse: st(&c.Parse), Split: st(&c.Split), Batch: st(&c.batch), Index: st(&c.index), Write: st(&c.write)}
}
