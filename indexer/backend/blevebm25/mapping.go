package blevebm25

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// Fields of the bleve index. There is no separate title field: the passage text starts with
// the title, and a separate boosted title field lowered nDCG@10 on the SciFact train qrels.
// Nothing is stored in bleve: passages live in the passage store, and bleve document ids are
// passage keys in decimal, so a hit maps to its passage without a lookup.
const (
	FieldText   = "text"   // the whole passage text, title prefix included (analysed in the index's language)
	FieldDate   = "date"   // passage date, for range filters
	FieldSource = "source" // exact source name, for filters
	FieldDoc    = "doc"    // exact document id, for deletes by document
	// FieldLanguage is the passage's language, for filters (multilingual indexes only: a
	// single-language index has none, its language filters resolved by search).
	FieldLanguage = "lang"
	// FieldBlockType is the passage's block type (corpus.Passage.BlockType), for filters. Prose
	// has none indexed, as in indexes built before passages had a type: a filter that asks for
	// text excludes the other types instead (backend.Filter.BlockTypeTerms).
	FieldBlockType = "block_type"
)

// newMapping returns the bleve mapping of a passage index with BM25 scoring, its text
// analysed by the named analyzer (see langanalysis.MappingDefinition). A multilingual index's
// text is analysed per passage (docBuilder), its terms tagged with their language; the mapping
// names the standard analyzer, which bleve never runs (queries are term queries).
func newMapping(analyzer string) (*mapping.IndexMappingImpl, error) {
	if analyzer == langanalysis.Multilingual {
		analyzer = langanalysis.Standard
	}
	textField := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	keywordField := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	dateField := bleve.NewDateTimeFieldMapping()
	dateField.Store, dateField.IncludeInAll, dateField.DocValues = false, false, false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(FieldText, textField())
	doc.AddFieldMappingsAt(FieldSource, keywordField())
	doc.AddFieldMappingsAt(FieldDoc, keywordField())
	doc.AddFieldMappingsAt(FieldLanguage, keywordField())
	doc.AddFieldMappingsAt(FieldBlockType, keywordField())
	doc.AddFieldMappingsAt(FieldDate, dateField)

	m := bleve.NewIndexMapping()
	if def := langanalysis.MappingDefinition(analyzer); def != nil {
		if err := m.AddCustomAnalyzer(analyzer, def); err != nil {
			return nil, fmt.Errorf("analyzer %q: %w", analyzer, err)
		}
	}
	m.DefaultMapping = doc
	m.DefaultAnalyzer = analyzer
	m.ScoringModel = index.BM25Scoring
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m, nil
}

// docBuilder turns passages into bleve documents directly, skipping bleve's reflection-based
// mapping, which costs more than the analysis itself for short passages.
type docBuilder struct {
	text   *langanalysis.Passages
	kw     analysis.Analyzer
	tokens atomic.Int64
	// indexed is the text analyzer counting the tokens of the passages indexed, of a
	// single-language index (nil when multilingual: each passage gets its language's).
	indexed analysis.Analyzer
}

// newDocBuilder analyses text with the named analyzer, built by langanalysis rather than
// taken from the mapping, which cannot name Kairos's own filters.
func newDocBuilder(m *mapping.IndexMappingImpl, analyzer string) (*docBuilder, error) {
	text, err := langanalysis.NewPassages(analyzer)
	if err != nil {
		return nil, err
	}
	kw := m.AnalyzerNamed(keyword.Name)
	if kw == nil {
		return nil, fmt.Errorf("bleve analyzer %q not registered", keyword.Name)
	}
	b := &docBuilder{text: text, kw: kw}
	if !text.Multilingual() {
		a, err := text.For("")
		if err != nil {
			return nil, err
		}
		b.indexed = tokenCounter{Analyzer: a, n: &b.tokens}
	}
	return b, nil
}

const indexOnly = index.IndexField

func (b *docBuilder) build(key uint32, p *corpus.Passage) (*document.Document, error) {
	d := document.NewDocument(strconv.FormatUint(uint64(key), 10))
	text := b.indexed
	if text == nil {
		a, err := b.text.For(p.Language)
		if err != nil {
			return nil, fmt.Errorf("passage %s: %w", p.ID, err)
		}
		text = tokenCounter{Analyzer: a, n: &b.tokens}
		d.AddField(document.NewTextFieldCustom(FieldLanguage, nil, []byte(p.Language), indexOnly, b.kw))
	}
	d.AddField(document.NewTextFieldCustom(FieldText, nil, []byte(p.Text), indexOnly, text))
	d.AddField(document.NewTextFieldCustom(FieldDoc, nil, []byte(p.DocID), indexOnly, b.kw))
	if p.Source != "" {
		d.AddField(document.NewTextFieldCustom(FieldSource, nil, []byte(p.Source), indexOnly, b.kw))
	}
	if p.BlockType != "" && p.BlockType != corpus.BlockText {
		d.AddField(document.NewTextFieldCustom(FieldBlockType, nil, []byte(p.BlockType), indexOnly, b.kw))
	}
	if !p.Date.IsZero() {
		f, err := document.NewDateTimeFieldWithIndexingOptions(FieldDate, nil, p.Date, time.RFC3339, indexOnly)
		if err != nil {
			return nil, fmt.Errorf("passage %s: date: %w", p.ID, err)
		}
		d.AddField(f)
	}
	return d, nil
}

// tokenCounter wraps the text analyzer that bleve runs on each passage it indexes and adds up
// the tokens it emits, so the build learns the total length at no extra analysis cost. bleve
// analyses each indexed document once, in its own goroutines, hence the atomic counter.
type tokenCounter struct {
	analysis.Analyzer
	n *atomic.Int64
}

func (c tokenCounter) Analyze(text []byte) analysis.TokenStream {
	toks := c.Analyzer.Analyze(text)
	c.n.Add(int64(len(toks)))
	return toks
}
