package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/kairos-rag/kairos/corpus/mediawiki"
)

// Input formats. Open detects them; Options.Format forces one.
const (
	FormatMediaWiki     = "mediawiki"     // MediaWiki pages-articles XML export
	FormatEnterprise    = "enterprise"    // Wikimedia Enterprise article NDJSON (or a JSON array / Structured Contents)
	FormatWikiExtractor = "wikiextractor" // WikiExtractor --json output: {id,url,title,text}
	FormatJSONL         = "jsonl"         // generic JSON lines: {id|_id, title, text, url?, date?}
	FormatFAQCSV        = "faq-csv"       // FAQ as CSV with a header row
	FormatFAQJSON       = "faq-json"      // FAQ as a JSON array of objects
	FormatFAQJSONL      = "faq-jsonl"     // FAQ as JSON lines
)

// Formats lists every format name Options.Format accepts.
func Formats() []string {
	return []string{FormatMediaWiki, FormatEnterprise, FormatWikiExtractor, FormatJSONL, FormatFAQCSV, FormatFAQJSON, FormatFAQJSONL}
}

// Options configures Open. The zero value detects everything.
type Options struct {
	// Format forces an input format (one of Formats()); "" detects it from the file name and
	// its first bytes (see DetectFormat).
	Format string
	// Source is stored in every Document.Source. Default: the input file's base name without
	// its known extensions ("enwiki-2017.xml.bz2" -> "enwiki-2017"), "stdin" for "-".
	Source string
	// FAQ names the columns of FAQ inputs. Empty names take DefaultFAQColumns.
	FAQ FAQColumns
	// MaxRecordBytes caps one record, whatever the format: a JSON line, an element of a
	// JSON array, a CSV row, an Enterprise article, a MediaWiki <page>. A record over it
	// is an error naming the file, the record's position and the cap. 0 means
	// DefaultMaxRecordBytes (64 MiB).
	MaxRecordBytes int64
	// Workers sizes the goroutine pools that decompress a multistream bzip2 input and decode
	// and clean MediaWiki pages (see package multistream and mediawiki.Options.Workers).
	// 0 means GOMAXPROCS; 1 reads on the caller's goroutine alone. The documents, their
	// order and the stats are the same either way.
	Workers int
	// MultistreamIndex is the index file of a multistream .bz2 dump ("offset:pageid:title"
	// lines, bzip2 or plain), which locates its streams. "" uses the index Wikipedia
	// publishes beside such a dump when it is there (multistream.IndexPath), and otherwise
	// finds the streams by scanning the dump.
	MultistreamIndex string
	// Stages, when set, gets the busy time of the decompression (compressed inputs) and of
	// the MediaWiki parsing and cleaning (see Stages).
	Stages *Stages
}

// Stages times the stages of reading an input, each summed over the goroutines that run it
// (see StageClock): what a build reports so that its slowest stage can be seen.
type Stages struct {
	Decompress StageClock // items: bzip2 streams decompressed in parallel; bytes: text out
	Parse      StageClock // MediaWiki scan, XML decoding and cleaning; items: pages; bytes: XML
	Split      StageClock // PassageReader's splitting; items: passages
}

// decompress and parse are s's clocks, nil when s is (nothing is timed).
func (s *Stages) decompress() *StageClock {
	if s == nil {
		return nil
	}
	return &s.Decompress
}

func (s *Stages) parse() *StageClock {
	if s == nil {
		return nil
	}
	return &s.Parse
}

// Validate reports an unknown format or inconsistent FAQ columns.
func (o Options) Validate() error {
	if o.Format != "" && !slices.Contains(Formats(), o.Format) {
		return fmt.Errorf("unknown format %q (want one of %s)", o.Format, strings.Join(Formats(), ", "))
	}
	if o.MaxRecordBytes < 0 {
		return fmt.Errorf("MaxRecordBytes is negative (%d)", o.MaxRecordBytes)
	}
	if o.Workers < 0 {
		return fmt.Errorf("options: Workers is negative (%d)", o.Workers)
	}
	faq := o.FAQ
	faq.SetDefaults()
	return faq.validate()
}

// knownExts are stripped from a file name to make the default Source and to find the
// extension that names the format.
var knownExts = []string{".gz", ".bz2", ".tar", ".tgz", ".xml", ".json", ".jsonl", ".ndjson", ".csv"}

// DefaultSource is the source name of the documents of the input at path when none is given
// (Options.Source): its file name without the extensions of knownExts ("faq_covidbert" for
// faq_covidbert.csv), "stdin" for "-".
func DefaultSource(path string) string {
	if path == "-" {
		return "stdin"
	}
	return trimKnownExts(filepath.Base(path))
}

func trimKnownExts(name string) string {
	for {
		ext := strings.ToLower(filepath.Ext(name))
		if ext == "" || ext == name || !slices.Contains(knownExts, ext) {
			return name
		}
		name = strings.TrimSuffix(name, name[len(name)-len(ext):])
	}
}

// headSize is how much of the (decompressed) input detection looks at.
const headSize = 64 << 10

// Open opens a dump for streaming. path "-" reads standard input. Compression (gzip, bzip2)
// is recognised by its magic bytes; a .gz or .bz2 name whose content is not compressed
// that way is an error rather than garbage documents. A tar archive (.tar, .tar.gz: the
// Wikimedia Enterprise snapshot layout) is read entry by entry, each entry's format detected
// on its own; its entries are named "archive:entry" in errors. Close the Reader when done.
//
// Record errors (*RecordError) name the file as given and the position: "line N" in JSON
// lines, "record N (byte B)" in a JSON array or pretty-printed JSON, "row N (line L)" in CSV
// (N counts data rows from 1, the number used as the FAQ document id), and the MediaWiki
// reader's own form. Stats().BytesRead counts the raw (compressed) bytes read, for progress
// against the file size.
func Open(ctx context.Context, path string, opts Options) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var f io.ReadCloser
	if path == "-" {
		f = io.NopCloser(os.Stdin)
	} else {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		f = file
	}
	return open(ctx, path, f, opts)
}

// OpenStream is Open of an input already open, such as a pipe that the caller reads through
// a hash: name stands for it in errors and in the default Source, as a path does in Open
// ("-" for standard input). Closing the Reader closes r if it is an io.Closer.
func OpenStream(ctx context.Context, name string, r io.Reader, opts Options) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f, ok := r.(io.ReadCloser)
	if !ok {
		f = io.NopCloser(r)
	}
	return open(ctx, name, f, opts)
}

// open reads f, the input named path, as Open describes.
func open(ctx context.Context, path string, f io.ReadCloser, opts Options) (Reader, error) {
	opts.FAQ.SetDefaults()
	if opts.Source == "" {
		opts.Source = DefaultSource(path)
	}
	counter := &countingReader{R: f}
	or := &openedReader{counter: counter, closers: []io.Closer{f}}
	data, err := decompress(ctx, counter, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	if c, ok := data.(io.Closer); ok {
		or.closers = append(or.closers, c)
	}
	br := bufio.NewReaderSize(data, headSize)
	head, err := br.Peek(headSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		or.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if isTar(head) {
		or.inner, or.format = newTarReader(br, path, opts), "tar"
		return or, nil
	}
	or.inner, or.format, err = newFormatReader(br, head, path, opts)
	if err != nil {
		or.Close()
		return nil, err
	}
	return or, nil
}

// newFormatReader detects (unless forced) the format of one input and returns its reader.
func newFormatReader(r io.Reader, head []byte, file string, opts Options) (Reader, string, error) {
	format := opts.Format
	if format == "" {
		var err error
		if format, err = detectFormat(file, head, opts.FAQ); err != nil {
			if enc := utf16BOM(head); enc != "" {
				return nil, "", fmt.Errorf("%s: the file is %s (it starts with a byte order mark): Kairos reads JSON and CSV as UTF-8 (MediaWiki XML may be UTF-16); convert it, e.g. iconv -f UTF-16 -t UTF-8", file, enc)
			}
			return nil, "", err
		}
	}
	if enc := utf16BOM(head); enc != "" && format != FormatMediaWiki {
		// Read as UTF-8, the first record fails as "invalid character 'ÿ'", which names
		// neither the cause nor the fix.
		return nil, "", fmt.Errorf("%s: the file is %s (it starts with a byte order mark): %s inputs must be UTF-8; convert it, e.g. iconv -f UTF-16 -t UTF-8", file, enc, format)
	}
	max := opts.maxRecordBytes()
	switch format {
	case FormatMediaWiki:
		return mediawiki.New(r, mediawiki.Options{File: file, Source: opts.Source, MaxPageBytes: max, Workers: opts.workers(),
			Clock: opts.Stages.parse()}), format, nil
	case FormatEnterprise:
		return newJSONReader(r, file, opts.Source, convertEnterprise).capRecords(max), format, nil
	case FormatWikiExtractor:
		return newJSONReader(r, file, opts.Source, convertJSONL(true)).capRecords(max), format, nil
	case FormatJSONL:
		return newJSONReader(r, file, opts.Source, convertJSONL(false)).capRecords(max), format, nil
	case FormatFAQJSON, FormatFAQJSONL:
		return newJSONReader(r, file, opts.Source, convertFAQJSON(opts.FAQ)).capRecords(max), format, nil
	case FormatFAQCSV:
		return newFAQCSVReader(r, file, opts.Source, opts.FAQ).capRecords(max), format, nil
	}
	return nil, "", fmt.Errorf("unknown format %q", format)
}

// utf16BOM names the encoding a UTF-16 byte order mark at the start of head announces, or
// returns "" when there is none.
func utf16BOM(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return "UTF-16 little-endian"
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "UTF-16 big-endian"
	}
	return ""
}

// DetectFormat names the format of an input from its path and the first bytes of its
// decompressed content (head; 64 KiB is plenty, a prefix of any length works). Content
// decides when it is conclusive:
//   - XML with a <mediawiki> root (UTF-8 or UTF-16) -> mediawiki;
//   - JSON whose first object has Enterprise keys (article_body, is_part_of, in_language,
//     main_entity, or identifier with date_modified) -> enterprise; question and answer keys
//     -> faq-json (array) or faq-jsonl; _id -> jsonl; id+url+title+text (WikiExtractor's
//     schema) -> wikiextractor; any other object with text -> jsonl;
//   - text whose first line has "question" and "answer" columns -> faq-csv.
//
// Otherwise the extension decides (.xml, .ndjson, .jsonl, .csv, compression suffixes
// ignored); failing that, the error says to use an explicit format.
func DetectFormat(path string, head []byte) (string, error) {
	return detectFormat(path, head, DefaultFAQColumns())
}

// detectFormat is DetectFormat with the FAQ question/answer names of Options.FAQ, so that an
// FAQ with custom column names is recognised too.
func detectFormat(path string, head []byte, faq FAQColumns) (string, error) {
	head = utf16ToASCII(head)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\uFEFF")), " \t\r\n")
	ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".bz2")))
	switch {
	case len(head) == 0:
	case head[0] == '<':
		if bytes.Contains(head, []byte("<mediawiki")) {
			return FormatMediaWiki, nil
		}
	case head[0] == '{' || head[0] == '[':
		keys := firstObjectKeys(head)
		has := func(k string) bool { return keys[k] }
		hasFold := func(k string) bool { // FAQ column names match ignoring case
			for key := range keys {
				if strings.EqualFold(key, k) {
					return true
				}
			}
			return false
		}
		switch {
		case has("article_body") || has("is_part_of") || has("in_language") || has("main_entity") ||
			(has("identifier") && has("date_modified")):
			return FormatEnterprise, nil
		case hasFold(faq.Question) && hasFold(faq.Answer):
			if head[0] == '[' {
				return FormatFAQJSON, nil
			}
			return FormatFAQJSONL, nil
		case has("_id"):
			return FormatJSONL, nil
		case has("id") && has("url") && has("title") && has("text"):
			return FormatWikiExtractor, nil
		case has("text"):
			return FormatJSONL, nil
		}
	default:
		first, _, _ := bytes.Cut(head, []byte("\n"))
		cols := map[string]bool{}
		for c := range strings.SplitSeq(strings.ToLower(string(first)), ",") {
			cols[strings.Trim(strings.TrimSpace(c), `"`)] = true
		}
		if cols[strings.ToLower(faq.Question)] && cols[strings.ToLower(faq.Answer)] {
			return FormatFAQCSV, nil
		}
	}
	switch ext {
	case ".xml":
		return FormatMediaWiki, nil
	case ".ndjson":
		return FormatEnterprise, nil
	case ".jsonl":
		return FormatJSONL, nil
	case ".csv":
		return FormatFAQCSV, nil
	}
	return "", fmt.Errorf("%s: cannot tell the input format from its name and first bytes; set one (kairos index --format): one of %s",
		path, strings.Join(Formats(), ", "))
}

// firstObjectKeys returns the top-level keys of the first JSON object in head (or of the
// first element of an array), reading as far as head goes: a truncated head still yields the
// keys before the cut.
func firstObjectKeys(head []byte) map[string]bool {
	keys := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if tok == json.Delim('[') {
		tok, err = dec.Token()
	}
	if err != nil || tok != json.Delim('{') {
		return keys
	}
	for {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return keys
		}
		keys[key] = true
		for depth := 0; ; { // skip the value
			tok, err := dec.Token()
			if err != nil {
				return keys
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
}

// utf16ToASCII decodes a head that starts with a UTF-16 byte order mark, so that detection
// sees "<mediawiki" in UTF-16 dumps. Other input is returned as is.
func utf16ToASCII(b []byte) []byte {
	var le bool
	switch {
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		le = true
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
	default:
		return b
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 2; i+1 < len(b); i += 2 {
		if le {
			u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
		} else {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}

// openedReader owns the file and decompressor behind a format reader.
type openedReader struct {
	inner   Reader
	format  string // detected or forced
	counter *countingReader
	closers []io.Closer
}

var _ Reader = (*openedReader)(nil)

func (o *openedReader) Next(ctx context.Context) (Document, error) { return o.inner.Next(ctx) }

func (o *openedReader) Stats() ReadStats {
	s := ReadStats{Skipped: map[string]int{}}
	if o.inner != nil {
		s = o.inner.Stats()
	}
	s.BytesRead = o.counter.Count()
	s.Format = o.format
	return s
}

func (o *openedReader) Close() error {
	var errs []error
	if o.inner != nil {
		errs = append(errs, o.inner.Close())
	}
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i].Close())
	}
	return errors.Join(errs...)
}
