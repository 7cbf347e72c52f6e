package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/corpus/document"
)

// jsonRecords yields the raw records of a JSON input in one of three layouts:
//   - JSON lines (one value per line; the usual case): a malformed line is a record error and
//     the next line is read normally;
//   - a JSON array of records ("[ {...}, {...} ]");
//   - concatenated, possibly pretty-printed values ("{\n  ...\n}\n{...}"), such as a single
//     Structured Contents object.
//
// In the last two layouts a syntax error desynchronises the decoder, so it ends the input
// with a fatal error; a record that is valid JSON of the wrong shape is still a record error.
type jsonRecords struct {
	lines *lineReader   // JSON lines
	dec   *json.Decoder // array or concatenated values
	array bool
	cap   *capReader               // under dec: bounds what it buffers for one record
	max   int64                    // MaxRecordBytes
	n     int                      // records returned so far
	blank int                      // line ends discarded before the first value, not seen by cap
	size  *document.CountingReader // the input's bytes read, which at its end are its size
	err   error
}

// rawRecord is one record and where it was found.
type rawRecord struct {
	data     []byte
	n        int    // 1-based record number
	pos      string // "line 3", "record 2 (byte 1234)"
	repaired bool   // invalid UTF-8 was replaced
	err      error  // the record is bad as a whole (over MaxRecordBytes); data is empty
	// cut says the record is the input's last line, which ends without a line end: if it is
	// not whole JSON, the input was cut short (truncation, not a bad record).
	cut bool
}

// maxJSONLineProbe is how far newJSONRecords looks for the end of the first line to decide
// whether the input is JSON lines. Longer first lines are JSON lines (pretty-printed JSON
// does not have megabyte lines).
const maxJSONLineProbe = 1 << 16

func newJSONRecords(r io.Reader) (*jsonRecords, error) {
	size := &document.CountingReader{R: r}
	br := bufio.NewReaderSize(size, 1<<16)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\uFEFF")) {
		br.Discard(3) // a UTF-8 BOM, which a JSON decoder would read as a value's first byte
	}
	first, blank, err := firstNonSpace(br)
	if err != nil {
		if err == io.EOF {
			return &jsonRecords{err: io.EOF}, nil
		}
		return nil, err
	}
	switch {
	case first == '[':
		c := &capReader{r: br, max: DefaultMaxRecordBytes}
		dec := json.NewDecoder(c)
		if _, err := dec.Token(); err != nil { // the opening bracket
			return nil, err
		}
		return &jsonRecords{dec: dec, array: true, cap: c, max: DefaultMaxRecordBytes, blank: blank, size: size}, nil
	case first == '{' && !firstLineComplete(br) && !badFirstLine(br):
		c := &capReader{r: br, max: DefaultMaxRecordBytes}
		return &jsonRecords{dec: json.NewDecoder(c), cap: c, max: DefaultMaxRecordBytes, blank: blank, size: size}, nil
	default:
		return &jsonRecords{lines: &lineReader{br: br, line: blank, max: DefaultMaxRecordBytes}, max: DefaultMaxRecordBytes}, nil
	}
}

// firstNonSpace peeks at the first byte that is neither white space nor a UTF-8 BOM. Whole
// lines of white space longer than the buffer are discarded (a dump may start with megabytes
// of blank lines), and the number of line ends discarded is returned so that line numbers
// stay right.
func firstNonSpace(br *bufio.Reader) (first byte, lines int, err error) {
	for {
		b, perr := br.Peek(br.Size())
		for _, c := range b {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != 0xEF && c != 0xBB && c != 0xBF {
				return c, lines, nil
			}
		}
		if len(b) < br.Size() {
			if perr == nil {
				perr = io.EOF
			}
			return 0, lines, perr
		}
		cut := bytes.LastIndexByte(b, '\n') + 1
		if cut == 0 {
			cut = len(b)
		}
		lines += bytes.Count(b[:cut], []byte("\n"))
		if _, err := br.Discard(cut); err != nil {
			return 0, lines, err
		}
	}
}

// firstLineComplete reports whether the first line holds a complete JSON value, which is
// what distinguishes JSON lines from a pretty-printed object that starts with "{\n".
func firstLineComplete(br *bufio.Reader) bool {
	b, _ := br.Peek(maxJSONLineProbe)
	full := len(b) == maxJSONLineProbe
	b = bytes.TrimLeft(b, " \t\r\n\uFEFF") // blank lines before the first record
	line, _, found := bytes.Cut(b, []byte("\n"))
	if !found && full {
		return true
	}
	line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	return json.Valid(line)
}

// badFirstLine reports whether the input is JSON lines whose first line is broken: the first
// value is a syntax error, not a value spread over lines, and the next line that is not blank
// is a whole value. Read as pretty-printed JSON, such a file failed as a whole on its first
// line; as JSON lines, that line is one bad record and the others are read.
func badFirstLine(br *bufio.Reader) bool {
	b, _ := br.Peek(maxJSONLineProbe)
	b = bytes.TrimLeft(b, " \t\r\n\uFEFF")
	var raw json.RawMessage
	var se *json.SyntaxError
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&raw); !errors.As(err, &se) {
		return false // a value over several lines, or one longer than the probe
	}
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return (line[0] == '{' || line[0] == '[') && json.Valid(line)
		}
	}
	return false
}

// next returns the next record, io.EOF at the end, or a fatal error.
func (j *jsonRecords) next() (rawRecord, error) {
	if j.err != nil {
		return rawRecord{}, j.err
	}
	if j.lines != nil {
		for {
			line, err := j.lines.next()
			if tl := (errRecordTooLarge{}); errors.As(err, &tl) {
				// The line was read past: the next one is a record boundary, so this is a
				// bad record, not the end of the input.
				j.n++
				return rawRecord{n: j.n, pos: "line " + strconv.Itoa(j.lines.line), err: tl}, nil
			}
			if err != nil {
				j.err = err
				return rawRecord{}, err
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			j.n++
			data, repaired := repairUTF8(line)
			if !repaired {
				data = bytes.Clone(line) // line is only valid until the next read
			}
			return rawRecord{data: data, n: j.n, pos: "line " + strconv.Itoa(j.lines.line), repaired: repaired, cut: j.lines.unterminated}, nil
		}
	}
	if j.array && !j.dec.More() {
		j.err = j.endArray()
		return rawRecord{}, j.err
	}
	offset := j.dec.InputOffset()
	j.cap.start = offset
	var raw json.RawMessage
	if err := j.dec.Decode(&raw); err != nil {
		if tl := (errRecordTooLarge{}); errors.As(err, &tl) {
			// A decoder cannot resume inside a value: the rest of the input is lost.
			j.err = fmt.Errorf("record %d (byte %d): %w", j.n+1, offset, tl)
			return rawRecord{}, j.err
		}
		if err == io.EOF && !j.array {
			j.err = io.EOF
			return rawRecord{}, io.EOF
		}
		if j.array && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			// "[{...},{...}," or a record cut short: records may be missing after it.
			j.err = fmt.Errorf("truncated input: the file ends (byte %d, line %d) inside record %d of the JSON array",
				j.size.Count(), j.endLine(), j.n+1)
			return rawRecord{}, j.err
		}
		j.err = fmt.Errorf("record %d (byte %d): %w", j.n+1, offset, err)
		return rawRecord{}, j.err
	}
	j.n++
	start := j.dec.InputOffset() - int64(len(raw)) // where the record itself starts
	if int64(len(raw)) > j.max {
		return rawRecord{n: j.n, pos: fmt.Sprintf("record %d (byte %d)", j.n, start), err: errRecordTooLarge{Max: j.max}}, nil
	}
	data, repaired := repairUTF8(raw)
	return rawRecord{data: data, n: j.n, pos: fmt.Sprintf("record %d (byte %d)", j.n, start), repaired: repaired}, nil
}

// endArray reads the end of a JSON array once it holds no more records: its closing ']',
// then nothing but white space. It returns io.EOF, or a fatal error: an array cut short
// ("[{...},{...}" with no ']') reads exactly like a whole one up to there, and only the missing
// bracket tells that the records after the cut are lost; data after the ']' would be lost too.
func (j *jsonRecords) endArray() error {
	at := j.dec.InputOffset()
	tok, err := j.dec.Token()
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("truncated input: the file ends (byte %d, line %d) after record %d of a JSON array, without the array's closing ']'",
			j.size.Count(), j.endLine(), j.n)
	case err != nil:
		return fmt.Errorf("after record %d (byte %d, line %d): %w", j.n, at, j.line(), err)
	case tok != json.Delim(']'):
		return fmt.Errorf("after record %d (byte %d, line %d): %v where the JSON array should end", j.n, at, j.line(), tok)
	}
	at, line := j.dec.InputOffset(), j.line() // before Token reads on
	if _, err := j.dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON array's closing ']' (byte %d, line %d)", at, line)
	}
	return io.EOF
}

// line is the 1-based line of the decoder's input offset: the line ends it has read, less
// those still in its buffer.
func (j *jsonRecords) line() int64 {
	buffered, _ := io.ReadAll(j.dec.Buffered())
	return 1 + int64(j.blank) + j.cap.lines - int64(bytes.Count(buffered, []byte{'\n'}))
}

// endLine is the line the input ends on, once the decoder has read all of it.
func (j *jsonRecords) endLine() int64 { return 1 + int64(j.blank) + j.cap.lines }

// convertFunc turns one raw record into a document. A non-empty skip reason drops a
// well-formed record (counted in ReadStats.Skipped); an error makes it a *RecordError.
type convertFunc func(rec rawRecord) (doc Document, skip string, err error)

// jsonReader is the Reader of every JSON-based format; the format lives in its convertFunc.
type jsonReader struct {
	file, source string
	recs         *jsonRecords
	convert      convertFunc
	stats        ReadStats
	fatal        error
}

var _ Reader = (*jsonReader)(nil)

func newJSONReader(r io.Reader, file, source string, convert convertFunc) *jsonReader {
	jr := &jsonReader{file: file, source: source, convert: convert, stats: ReadStats{Skipped: map[string]int{}}}
	recs, err := newJSONRecords(r)
	if err != nil {
		jr.fatal = fmt.Errorf("%s: %w", file, err)
	}
	jr.recs = recs
	return jr
}

func (jr *jsonReader) Next(ctx context.Context) (Document, error) {
	for {
		if jr.fatal != nil {
			return Document{}, jr.fatal
		}
		if err := ctx.Err(); err != nil {
			return Document{}, err
		}
		rec, err := jr.recs.next()
		if err == io.EOF {
			return Document{}, io.EOF
		}
		if err != nil {
			jr.fatal = fmt.Errorf("%s: %w", jr.file, err)
			return Document{}, jr.fatal
		}
		if rec.repaired {
			jr.stats.Repaired++
		}
		if rec.err != nil {
			jr.stats.Bad++
			return Document{}, &RecordError{File: jr.file, Pos: rec.pos, Err: rec.err}
		}
		doc, skip, err := jr.convert(rec)
		if err != nil && rec.cut && bytes.HasPrefix(bytes.TrimSpace(rec.data), []byte("{")) && !json.Valid(rec.data) {
			// A JSON lines file cut mid-line (an object begun, not ended, and no line end after
			// it): fatal even with SkipBad, as a truncated gzip or JSON array is (what is
			// missing cannot be counted). A last line of other garbage is a bad record.
			jr.fatal = fmt.Errorf("%s: %s: truncated input: the last line ends without a line end and is not a whole JSON record", jr.file, rec.pos)
			return Document{}, jr.fatal
		}
		if doc, ok, err := admit(&jr.stats, doc, skip, err, jr.file, rec.pos, jr.source); ok || err != nil {
			return doc, err
		}
	}
}

// capRecords sets the record cap (Options.MaxRecordBytes) and returns jr.
func (jr *jsonReader) capRecords(max int64) *jsonReader {
	if jr.recs != nil {
		jr.recs.max = max
		if jr.recs.cap != nil {
			jr.recs.cap.max = max
		}
		if jr.recs.lines != nil {
			jr.recs.lines.max = max
		}
	}
	return jr
}

func (jr *jsonReader) Stats() ReadStats { return jr.stats.Clone() }
func (jr *jsonReader) Close() error     { return nil }

// admit does the bookkeeping every record reader shares for one converted record: a conversion
// error is counted as bad and returned as a *RecordError at pos; a skip reason (or a document
// left empty) is counted, and ok is false so the reader moves on; otherwise the document gets
// its source, is counted, and ok is true.
func admit(s *ReadStats, doc Document, skip string, err error, file, pos, source string) (Document, bool, error) {
	if err != nil {
		s.Bad++
		return Document{}, false, &RecordError{File: file, Pos: pos, Err: err}
	}
	if skip == "" && isEmpty(doc) {
		skip = SkipEmpty
	}
	if skip != "" {
		s.Skipped[skip]++
		return Document{}, false, nil
	}
	doc.Source, doc.Pos = source, pos
	s.Documents++
	if l := doc.Meta["language"]; l != "" {
		if s.Languages == nil {
			s.Languages = map[string]int{}
		}
		s.Languages[l]++
	}
	return doc, true, nil
}

// isEmpty reports whether doc has no text in any section.
func isEmpty(doc Document) bool {
	for _, s := range doc.Sections {
		if strings.TrimSpace(s.Text) != "" {
			return false
		}
	}
	return true
}

// jsonlRecord is the generic JSON lines schema; BEIR corpus.jsonl ({"_id","title","text",
// "metadata"}) and WikiExtractor output ({"id","revid","url","title","text"}) both fit it.
type jsonlRecord struct {
	ID    json.RawMessage `json:"id"`
	UID   json.RawMessage `json:"_id"`
	DocID json.RawMessage `json:"docid"`  // MS MARCO, TREC collections
	DocU  json.RawMessage `json:"doc_id"` // ir_datasets exports
	PID   json.RawMessage `json:"pid"`    // SQuAD-style passage files

	Title *string `json:"title"`
	Text  *string `json:"text"`
	URL   string  `json:"url"`
	Date  string  `json:"date"`
	// BlockType is the record's block type (Passage.BlockType): "text", "table" or
	// "infobox", for a corpus already cut into WikiChat-style blocks. Only "block_type" is
	// read: a field named "type" means too many other things in the wild.
	BlockType string `json:"block_type"`
}

// convertJSONL converts generic JSON lines and, with wikiExtractor, WikiExtractor output,
// which writes one paragraph per line and may repeat the title as the first line.
//
// The document id is the first of "id", "_id", "docid", "doc_id" and "pid" (a string or a
// number); a record with none gets its record number, which is stable as long as the file is. "text" is required; "title" may be
// absent (the passages then carry no title prefix). "block_type" is optional: "text" (the
// default), "table" or "infobox"; anything else is a record error.
func convertJSONL(wikiExtractor bool) convertFunc {
	return func(rec rawRecord) (Document, string, error) {
		var r jsonlRecord
		if !decodeJSONLRecord(rec.data, &r) {
			r = jsonlRecord{}
			if err := json.Unmarshal(rec.data, &r); err != nil {
				return Document{}, "", jsonError(err)
			}
		}
		if r.Text == nil {
			return Document{}, "", errors.New(`missing "text" field`)
		}
		var id string
		for _, raw := range []json.RawMessage{r.ID, r.UID, r.DocID, r.DocU, r.PID} {
			var err error
			if id, err = jsonID(raw); err != nil {
				return Document{}, "", err
			}
			if id != "" {
				break
			}
		}
		fromPosition := id == ""
		if fromPosition {
			id = strconv.Itoa(rec.n)
		}
		date, err := parseDate(r.Date)
		if err != nil {
			return Document{}, "", err
		}
		doc := Document{ID: id, IDFromPosition: fromPosition, URL: strings.TrimSpace(r.URL), Date: date}
		if r.Title != nil {
			doc.Title = collapseSpace(*r.Title)
		}
		text := *r.Text
		if wikiExtractor {
			// WikiExtractor (--json) may start the text with the title line.
			if first, rest, ok := strings.Cut(text, "\n"); ok && strings.TrimSpace(first) == doc.Title {
				text = rest
			}
		}
		block, err := jsonlBlock(r.BlockType)
		if err != nil {
			return Document{}, "", err
		}
		doc.Sections = []Section{{Text: paragraphs(text, wikiExtractor), Block: block}}
		return doc, "", nil
	}
}

// jsonlBlock checks a record's "block_type" and returns it as Section.Block ("" for text).
func jsonlBlock(s string) (string, error) {
	switch s {
	case "", BlockText:
		return "", nil
	case BlockTable, BlockInfobox:
		return s, nil
	}
	return "", fmt.Errorf(`block_type %q: want %q, %q or %q`, s, BlockText, BlockTable, BlockInfobox)
}

// jsonID reads an id given as a JSON string or number.
func jsonID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		d := jsonScan{b: raw}
		if s, ok := d.str(); ok && d.end() {
			return strings.TrimSpace(s), nil // the common id, without reflection
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", jsonError(err)
		}
		return strings.TrimSpace(s), nil
	}
	if d := (jsonScan{b: raw}); d.number() && d.end() {
		return string(raw), nil // json.Number keeps a number's text
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("id must be a string or a number, not %s", raw)
	}
	return n.String(), nil
}

// jsonError rewords encoding/json errors that would otherwise name Go types.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	if te.Field == "" {
		return fmt.Errorf("record is a JSON %s, not an object", te.Value)
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind().String() {
	case "string", "ptr":
		want = "a string"
	case "map", "struct":
		want = "an object"
	case "slice":
		want = "an array"
	}
	return fmt.Errorf("field %q: JSON %s where %s was expected", te.Field, te.Value, want)
}
