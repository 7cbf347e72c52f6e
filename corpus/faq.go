package corpus

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// FAQColumns names the columns (CSV) or keys (JSON) of an FAQ input. Each Q/A pair becomes
// one Document: Title = question, ID = the FAQ's own id (the ID column) or, without one, the
// 1-based row (record) number, and two unnamed sections: the answer, then the question alone,
// which makes a question-only passage ("Question | Question"). The question-only
// passage gives the question more weight than the answer: users' queries paraphrase the
// question, and on the COVID FAQ's paraphrase pairs it raised MRR@10 on the train half from
// 0.567 to 0.636 (README, "FAQs").
//
// Names match the input's columns ignoring case. An empty name tries the usual names of that
// column in order (FAQDefaultNames); "-" turns an optional column off. Optional columns absent
// from the input are ignored; the question and answer columns must exist.
type FAQColumns struct {
	Question string // default "question"
	Answer   string // default "answer"
	Date     string // default: date, last_update, updated; RFC 3339, YYYY-MM-DD or YYYY/MM/DD
	Category string // default: category; kept as Meta["category"]
	URL      string // default: url, link
	ID       string // default: id, qid, question_id, faq_id (none: the row number)
	// Meta lists further columns copied into Document.Meta under their own names
	// (e.g. "source", "country"). Default none.
	Meta []string
}

// FAQDefaultNames returns the column names tried, in order and ignoring case, for a column
// role ("question", "answer", "date", "category", "url" or "id") left empty.
func FAQDefaultNames(role string) []string {
	switch role {
	case "question":
		return []string{"question"}
	case "answer":
		return []string{"answer"}
	case "date":
		return []string{"date", "last_update", "updated"}
	case "category":
		return []string{"category"}
	case "url":
		return []string{"url", "link"}
	case "id":
		return []string{"id", "qid", "question_id", "faq_id"}
	}
	return nil
}

// DefaultFAQColumns are the defaults: every column found by its usual names.
func DefaultFAQColumns() FAQColumns {
	return FAQColumns{Question: "question", Answer: "answer"}
}

// SetDefaults names the question and answer columns when they are empty. Optional columns
// stay empty (their usual names are tried against the input) or "-" (off).
func (c *FAQColumns) SetDefaults() {
	d := DefaultFAQColumns()
	if c.Question == "" {
		c.Question = d.Question
	}
	if c.Answer == "" {
		c.Answer = d.Answer
	}
}

func (c FAQColumns) validate() error {
	seen := map[string]string{}
	if c.Question == "-" || c.Answer == "-" {
		return errors.New("FAQ question and answer columns cannot be turned off")
	}
	for _, n := range c.roles() {
		if n.col == "" || n.col == "-" {
			continue
		}
		col := strings.ToLower(n.col)
		if other, dup := seen[col]; dup {
			return fmt.Errorf("FAQ column %q is used as both %s and %s", n.col, other, n.role)
		}
		seen[col] = n.role
	}
	return nil
}

type faqRole struct{ role, col string }

func (c FAQColumns) roles() []faqRole {
	return []faqRole{
		{"question", c.Question}, {"answer", c.Answer}, {"date", c.Date},
		{"category", c.Category}, {"url", c.URL}, {"id", c.ID},
	}
}

// faqFields are the columns of one input that fill each role: the input's own spelling of
// each name, "" for a role the input lacks.
type faqFields struct {
	question, answer, date, category, url, id string
	meta                                      map[string]string // Meta name -> input's name
}

// resolve matches c against the input's column names, ignoring case.
func (c FAQColumns) resolve(names []string) faqFields {
	byFold := make(map[string]string, len(names))
	for _, n := range names {
		if _, dup := byFold[strings.ToLower(n)]; !dup {
			byFold[strings.ToLower(n)] = n
		}
	}
	find := func(role, col string) string {
		switch col {
		case "-":
			return ""
		case "":
			for _, alias := range FAQDefaultNames(role) {
				if n, ok := byFold[alias]; ok {
					return n
				}
			}
			return ""
		}
		return byFold[strings.ToLower(col)]
	}
	f := faqFields{
		question: find("question", c.Question), answer: find("answer", c.Answer), date: find("date", c.Date),
		category: find("category", c.Category), url: find("url", c.URL), id: find("id", c.ID),
	}
	for _, m := range c.Meta {
		if n := byFold[strings.ToLower(m)]; n != "" {
			if f.meta == nil {
				f.meta = map[string]string{}
			}
			f.meta[m] = n
		}
	}
	return f
}

// report returns role -> column for the roles filled (ReadStats.Columns).
func (f faqFields) report() map[string]string {
	out := map[string]string{}
	for _, r := range []faqRole{{"question", f.question}, {"answer", f.answer}, {"date", f.date},
		{"category", f.category}, {"url", f.url}, {"id", f.id}} {
		if r.col != "" {
			out[r.role] = r.col
		}
	}
	for m, n := range f.meta {
		out["meta:"+m] = n
	}
	return out
}

// faqRow turns one row, looked up by column name, into a document.
func (f faqFields) faqRow(get func(col string) (string, bool), n int) (Document, string, error) {
	if f.question == "" || f.answer == "" {
		return Document{}, "", errors.New("no question or answer column")
	}
	get0 := func(col string) (string, bool) {
		if col == "" {
			return "", false
		}
		return get(col)
	}
	q, _ := get0(f.question)
	a, _ := get0(f.answer)
	doc := Document{ID: strconv.Itoa(n), IDFromPosition: true, Title: collapseSpace(q)}
	if id, ok := get0(f.id); ok && strings.TrimSpace(id) != "" {
		doc.ID, doc.IDFromPosition = strings.TrimSpace(id), false
	}
	if doc.Title == "" {
		return Document{}, "", fmt.Errorf("empty question (column %q)", f.question)
	}
	if s, ok := get0(f.date); ok {
		t, err := parseDate(s)
		if err != nil {
			return Document{}, "", fmt.Errorf("column %q: %w", f.date, err)
		}
		doc.Date = t
	}
	if s, ok := get0(f.url); ok {
		doc.URL = strings.TrimSpace(s) // the COVID FAQ's links start with a newline
	}
	addMeta := func(key, col string) {
		if s, ok := get0(col); ok && strings.TrimSpace(s) != "" {
			if doc.Meta == nil {
				doc.Meta = map[string]string{}
			}
			doc.Meta[key] = strings.TrimSpace(s)
		}
	}
	addMeta("category", f.category)
	for m, col := range f.meta {
		addMeta(m, col)
	}
	answer := paragraphs(a, false)
	if strings.TrimSpace(answer) == "" {
		return Document{}, SkipEmpty, nil // a question without an answer answers nothing
	}
	// The question section is unnamed so that its passage is "Question | Question": a
	// section name would add its words to every question passage.
	doc.Sections = []Section{{Text: answer}, {Text: doc.Title}}
	return doc, "", nil
}

// convertFAQJSON converts one JSON object (from a JSON array or JSON lines) of an FAQ.
// Values may be strings, numbers or booleans; null counts as absent. Numbers are read as the
// text of their literal, not as float64: FAQ ids of 17 digits (above 2^53) were rounded to the
// same float and collided.
func convertFAQJSON(cols FAQColumns) convertFunc {
	return func(rec rawRecord) (Document, string, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.data, &m); err != nil {
			return Document{}, "", jsonError(err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // of keys differing only in case, the first in byte order wins
		f := cols.resolve(keys)
		if f.question == "" {
			return Document{}, "", fmt.Errorf("missing %q field", cols.Question)
		}
		if f.answer == "" {
			return Document{}, "", fmt.Errorf("missing %q field", cols.Answer)
		}
		var bad error
		get := func(col string) (string, bool) {
			s, ok, err := faqJSONValue(m[col])
			if err != nil && bad == nil {
				bad = fmt.Errorf("field %q: %w", col, err)
			}
			return s, ok
		}
		doc, skip, err := f.faqRow(get, rec.n)
		if err == nil && bad != nil {
			err = bad
		}
		return doc, skip, err
	}
}

// faqJSONValue reads one value of an FAQ record as text: a string as itself, a boolean as
// "true" or "false", and a number as its literal when it is an integer ("12345678901234567"
// stays exact as an id), or formatted back from float64 when it has a fraction or an exponent
// ("1.50" -> "1.5", as before). null (or an absent key) is ok == false.
func faqJSONValue(raw json.RawMessage) (s string, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return s, true, nil
	case 't', 'f':
		return string(raw), true, nil // json.Unmarshal already checked it is true or false
	case '[':
		return "", false, errors.New("JSON array where a string was expected")
	case '{':
		return "", false, errors.New("JSON object where a string was expected")
	}
	if !bytes.ContainsAny(raw, ".eE") {
		return string(raw), true, nil // an integer literal: its digits, exactly
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false, fmt.Errorf("number %s: %w", raw, err)
	}
	return strconv.FormatFloat(v, 'f', -1, 64), true, nil
}

// faqCSVReader reads an FAQ as CSV with a header row (RFC 4180: quoted fields may span lines).
type faqCSVReader struct {
	file, source string
	cols         FAQColumns
	cr           *csv.Reader
	cap          *capReader     // under cr: bounds what it buffers for one row
	index        map[string]int // column name -> field index (first one of that name), from the header
	fields       int            // columns in the header
	use          faqFields      // the header's columns for each role
	row          int            // data rows read so far
	stats        ReadStats
	fatal        error
}

var _ Reader = (*faqCSVReader)(nil)

func newFAQCSVReader(r io.Reader, file, source string, cols FAQColumns) *faqCSVReader {
	c := &capReader{r: r, max: DefaultMaxRecordBytes}
	cr := csv.NewReader(c)
	cr.FieldsPerRecord = -1 // checked per row against the header, for a clearer error
	cr.ReuseRecord = true
	fr := &faqCSVReader{file: file, source: source, cols: cols, cr: cr, cap: c, stats: ReadStats{Skipped: map[string]int{}}}
	fr.fatal = fr.readHeader()
	return fr
}

// capRecords sets the row cap (Options.MaxRecordBytes) and returns fr.
func (fr *faqCSVReader) capRecords(max int64) *faqCSVReader {
	fr.cap.max = max
	return fr
}

func (fr *faqCSVReader) readHeader() error {
	header, err := fr.cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty CSV file (no header row)", fr.file)
	}
	if err != nil {
		return fmt.Errorf("%s: header: %w", fr.file, err)
	}
	fr.fields = len(header)
	fr.index = make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
		if _, dup := fr.index[h]; !dup {
			fr.index[h] = i
		}
	}
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
	}
	fr.use = fr.cols.resolve(names)
	for _, need := range []struct{ want, got string }{{fr.cols.Question, fr.use.question}, {fr.cols.Answer, fr.use.answer}} {
		if need.got == "" {
			return fmt.Errorf("%s: header has no %q column (columns: %s; kairos index --faq-question and --faq-answer name others)", fr.file, need.want, strings.Join(header, ", "))
		}
	}
	if err := repeatedColumn(names, fr.use); err != nil {
		return fmt.Errorf("%s: header (line 1): %w", fr.file, err)
	}
	fr.stats.Columns = fr.use.report()
	return nil
}

// repeatedColumn reports a column the reader uses that the header names more than once
// (ignoring case, as columns are matched): only the first copy would be read and the others
// lost without a word, and which copy holds the data is not for the reader to guess. Unused
// columns may repeat.
func repeatedColumn(names []string, use faqFields) error {
	used := []string{use.question, use.answer, use.date, use.category, use.url, use.id}
	meta := make([]string, 0, len(use.meta))
	for _, n := range use.meta {
		meta = append(meta, n)
	}
	sort.Strings(meta) // the same error every run
	used = append(used, meta...)
	for _, col := range used {
		if col == "" {
			continue
		}
		var at []string
		for i, n := range names {
			if strings.EqualFold(n, col) {
				at = append(at, strconv.Itoa(i+1))
			}
		}
		if len(at) > 1 {
			return fmt.Errorf("column %q is named %d times (columns %s): rename or drop the copies", col, len(at), strings.Join(at, ", "))
		}
	}
	return nil
}

func (fr *faqCSVReader) Next(ctx context.Context) (Document, error) {
	for {
		if fr.fatal != nil {
			return Document{}, fr.fatal
		}
		if err := ctx.Err(); err != nil {
			return Document{}, err
		}
		start := fr.cr.InputOffset()
		fr.cap.start = start
		rec, err := fr.cr.Read()
		if err == io.EOF {
			return Document{}, io.EOF
		}
		fr.row++
		if tl := (errRecordTooLarge{}); errors.As(err, &tl) {
			// encoding/csv cannot resume inside a row: the rest of the input is lost.
			fr.fatal = fmt.Errorf("%s: row %d (byte %d): %w", fr.file, fr.row, start, tl)
			return Document{}, fr.fatal
		}
		if err == nil && fr.cr.InputOffset()-start > fr.cap.max {
			line, _ := fr.cr.FieldPos(0)
			fr.stats.Bad++
			return Document{}, &RecordError{File: fr.file, Pos: fmt.Sprintf("row %d (line %d)", fr.row, line), Err: errRecordTooLarge{Max: fr.cap.max}}
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				fr.fatal = fmt.Errorf("%s: row %d: %w", fr.file, fr.row, err)
				return Document{}, fr.fatal
			}
			// encoding/csv resumes at the next line after a parse error.
			fr.stats.Bad++
			if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
				return Document{}, &RecordError{File: fr.file, Pos: fmt.Sprintf("row %d (lines %d-%d)", fr.row, pe.StartLine, pe.Line), Err: fr.openQuote(pe)}
			}
			return Document{}, &RecordError{File: fr.file, Pos: fmt.Sprintf("row %d (line %d)", fr.row, pe.StartLine), Err: pe.Err}
		}
		line, _ := fr.cr.FieldPos(0)
		pos := fmt.Sprintf("row %d (line %d)", fr.row, line)
		if len(rec) != fr.fields {
			fr.stats.Bad++
			return Document{}, &RecordError{File: fr.file, Pos: pos, Err: fmt.Errorf("%d fields, header has %d", len(rec), fr.fields)}
		}
		repaired := false
		for i, f := range rec {
			if fixed, ok := repairUTF8([]byte(f)); ok {
				rec[i], repaired = string(fixed), true
			}
		}
		if repaired {
			fr.stats.Repaired++
		}
		get := func(col string) (string, bool) {
			i, ok := fr.index[col]
			if !ok {
				return "", false
			}
			return rec[i], true
		}
		doc, skip, err := fr.use.faqRow(get, fr.row)
		if doc, ok, err := admit(&fr.stats, doc, skip, err, fr.file, pos, fr.source); ok || err != nil {
			return doc, err
		}
	}
}

// openQuote words a quote error that spans lines: a quoted field that never closed read the
// lines after it, rows and all, as its own text until a stray quote or the end of the file,
// and encoding/csv's "extraneous or missing \" in quoted-field" neither says so nor which rows
// went with it.
func (fr *faqCSVReader) openQuote(pe *csv.ParseError) error {
	end := fmt.Sprintf("to a quote on line %d followed by neither a comma nor a line end", pe.Line)
	if fr.cap.eof && fr.cr.InputOffset() == fr.cap.n {
		end = "to the end of the file"
	}
	return fmt.Errorf("unclosed quote: a quoted field opened in the row on line %d swallowed lines %d-%d, %s",
		pe.StartLine, pe.StartLine, pe.Line, end)
}

func (fr *faqCSVReader) Stats() ReadStats { return fr.stats.Clone() }
func (fr *faqCSVReader) Close() error     { return nil }
