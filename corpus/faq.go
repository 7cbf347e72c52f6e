package corpus

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FAQColumns names the columns (CSV) or keys (JSON) of an FAQ input. Each Q/A pair becomes
// one Document: Title = question, one lead section with the answer, ID = the ID column or,
// without one, the 1-based row (record) number. Optional columns that are absent from the
// input are ignored; Question and Answer must exist. Empty names take the defaults below;
// "-" turns an optional column off.
type FAQColumns struct {
	Question string // default "question"
	Answer   string // default "answer"
	Date     string // default "last_update"; RFC 3339, YYYY-MM-DD or YYYY/MM/DD
	Category string // default "category"; kept as Meta["category"]
	URL      string // default "link"
	ID       string // default "" (row number)
	// Meta lists further columns copied into Document.Meta under their own names
	// (e.g. "source", "country"). Default none.
	Meta []string
}

// DefaultFAQColumns fit ../shared/data/faq-covid-deepset/faq_covidbert.csv.
func DefaultFAQColumns() FAQColumns {
	return FAQColumns{Question: "question", Answer: "answer", Date: "last_update", Category: "category", URL: "link"}
}

// withDefaults gives every empty name its default. Optional columns absent from the input
// are ignored anyway, so a default never hurts; "-" turns an optional column off.
func (c FAQColumns) withDefaults() FAQColumns {
	d := DefaultFAQColumns()
	for _, f := range []struct {
		v   *string
		def string
	}{
		{&c.Question, d.Question}, {&c.Answer, d.Answer}, {&c.Date, d.Date},
		{&c.Category, d.Category}, {&c.URL, d.URL}, {&c.ID, d.ID},
	} {
		switch *f.v {
		case "":
			*f.v = f.def
		case "-":
			*f.v = ""
		}
	}
	return c
}

func (c FAQColumns) validate() error {
	seen := map[string]string{}
	if c.Question == "" || c.Answer == "" {
		return errors.New("FAQ question and answer columns cannot be turned off")
	}
	named := []struct{ role, col string }{
		{"question", c.Question}, {"answer", c.Answer}, {"date", c.Date},
		{"category", c.Category}, {"url", c.URL}, {"id", c.ID},
	}
	for _, n := range named {
		if n.col == "" {
			continue
		}
		if other, dup := seen[n.col]; dup {
			return fmt.Errorf("FAQ column %q is used as both %s and %s", n.col, other, n.role)
		}
		seen[n.col] = n.role
	}
	return nil
}

// faqRow turns one row, looked up by column name, into a document.
func (c FAQColumns) faqRow(get func(col string) (string, bool), n int) (Document, string, error) {
	q, _ := get(c.Question)
	a, _ := get(c.Answer)
	doc := Document{ID: strconv.Itoa(n), Title: strings.Join(strings.Fields(q), " ")}
	if c.ID != "" {
		if id, ok := get(c.ID); ok && strings.TrimSpace(id) != "" {
			doc.ID = strings.TrimSpace(id)
		}
	}
	if doc.Title == "" {
		return Document{}, "", fmt.Errorf("empty question (column %q)", c.Question)
	}
	if c.Date != "" {
		if s, ok := get(c.Date); ok {
			t, err := parseDate(s)
			if err != nil {
				return Document{}, "", fmt.Errorf("column %q: %w", c.Date, err)
			}
			doc.Date = t
		}
	}
	if c.URL != "" {
		if s, ok := get(c.URL); ok {
			doc.URL = strings.TrimSpace(s) // the COVID FAQ's links start with a newline
		}
	}
	addMeta := func(key, col string) {
		if s, ok := get(col); ok && strings.TrimSpace(s) != "" {
			if doc.Meta == nil {
				doc.Meta = map[string]string{}
			}
			doc.Meta[key] = strings.TrimSpace(s)
		}
	}
	if c.Category != "" {
		addMeta("category", c.Category)
	}
	for _, col := range c.Meta {
		addMeta(col, col)
	}
	doc.Sections = []Section{{Text: paragraphs(a, false)}}
	return doc, "", nil
}

// convertFAQJSON converts one JSON object (from a JSON array or JSON lines) of an FAQ.
// Values may be strings, numbers or booleans; null counts as absent.
func convertFAQJSON(cols FAQColumns) convertFunc {
	return func(rec rawRecord) (Document, string, error) {
		var m map[string]any
		if err := json.Unmarshal(rec.data, &m); err != nil {
			return Document{}, "", jsonError(err)
		}
		if _, ok := m[cols.Question]; !ok {
			return Document{}, "", fmt.Errorf("missing %q field", cols.Question)
		}
		if _, ok := m[cols.Answer]; !ok {
			return Document{}, "", fmt.Errorf("missing %q field", cols.Answer)
		}
		var bad error
		get := func(col string) (string, bool) {
			switch v := m[col].(type) {
			case nil:
				return "", false
			case string:
				return v, true
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64), true
			case bool:
				return strconv.FormatBool(v), true
			case []any:
				if bad == nil {
					bad = fmt.Errorf("field %q: JSON array where a string was expected", col)
				}
				return "", false
			default:
				if bad == nil {
					bad = fmt.Errorf("field %q: JSON object where a string was expected", col)
				}
				return "", false
			}
		}
		doc, skip, err := cols.faqRow(get, rec.n)
		if err == nil && bad != nil {
			err = bad
		}
		return doc, skip, err
	}
}

// faqCSVReader reads an FAQ as CSV with a header row (RFC 4180: quoted fields may span lines).
type faqCSVReader struct {
	file, source string
	cols         FAQColumns
	cr           *csv.Reader
	index        map[string]int // column name -> field index (first one of that name), from the header
	fields       int            // columns in the header
	row          int            // data rows read so far
	stats        ReadStats
	fatal        error
}

var _ Reader = (*faqCSVReader)(nil)

func newFAQCSVReader(r io.Reader, file, source string, cols FAQColumns) *faqCSVReader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked per row against the header, for a clearer error
	cr.ReuseRecord = true
	fr := &faqCSVReader{file: file, source: source, cols: cols, cr: cr, stats: ReadStats{Skipped: map[string]int{}}}
	fr.fatal = fr.readHeader()
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
	for _, need := range []string{fr.cols.Question, fr.cols.Answer} {
		if _, ok := fr.index[need]; !ok {
			return fmt.Errorf("%s: header has no %q column (columns: %s)", fr.file, need, strings.Join(header, ", "))
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
		rec, err := fr.cr.Read()
		if err == io.EOF {
			return Document{}, io.EOF
		}
		fr.row++
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				fr.fatal = fmt.Errorf("%s: row %d: %w", fr.file, fr.row, err)
				return Document{}, fr.fatal
			}
			// encoding/csv resumes at the next line after a parse error.
			fr.stats.Bad++
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
		doc, skip, err := fr.cols.faqRow(get, fr.row)
		if doc, ok, err := fr.stats.admit(doc, skip, err, fr.file, pos, fr.source); ok || err != nil {
			return doc, err
		}
	}
}

func (fr *faqCSVReader) Stats() ReadStats { return cloneStats(fr.stats) }
func (fr *faqCSVReader) Close() error     { return nil }
