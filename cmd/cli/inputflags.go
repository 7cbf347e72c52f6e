package cli

import (
	"flag"

	"github.com/kairos-rag/kairos/corpus"
)

// inputFlags are the reading options that index and passages share.
type inputFlags struct {
	workers          int
	multistreamIndex string
	faq              corpus.FAQColumns
	maxRecordBytes   int64
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.workers, "workers", 0, "goroutines that decompress multistream .bz2 input, decode MediaWiki pages and split passages, each stage (0: GOMAXPROCS; 1: sequential). The output is the same either way; a single-stream .bz2 is decompressed sequentially")
	fs.StringVar(&f.multistreamIndex, "multistream-index", "", "index `file` of a multistream .bz2 dump (offset:pageid:title lines); default: the -index.txt.bz2 beside the dump if there, else the streams are found by scanning")
	fs.StringVar(&f.faq.Question, "faq-question", "", "FAQ input: the `column` of the questions (default: question)")
	fs.StringVar(&f.faq.Answer, "faq-answer", "", "FAQ input: the `column` of the answers (default: answer)")
	fs.Int64Var(&f.maxRecordBytes, "max-record-bytes", 0, "largest record read, in `bytes`: a JSON line, an element of a JSON array, a page of a dump (0: 64 MiB); a larger one is a bad record")
}

// check refuses what the flags cannot mean, naming the flag (the reader's own error names its
// Go option).
func (f *inputFlags) check(fs *flag.FlagSet) error {
	if f.workers < 0 {
		return usageErr(fs, "--workers %d: want 0 (one a core) or more", f.workers)
	}
	if f.maxRecordBytes < 0 {
		return usageErr(fs, "--max-record-bytes %d: want 0 (64 MiB) or more", f.maxRecordBytes)
	}
	return nil
}

// options returns the corpus options of one input.
func (f *inputFlags) options(format, source string) corpus.Options {
	return corpus.Options{Format: format, Source: source, Workers: f.workers, MultistreamIndex: f.multistreamIndex,
		FAQ: f.faq, MaxRecordBytes: f.maxRecordBytes}
}
