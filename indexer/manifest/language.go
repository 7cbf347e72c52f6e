package manifest

import (
	"errors"
	"maps"
	"slices"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// Language returns the language the index is analysed in: the recorded one, or English for
// a manifest that records no language but an English analyzer or none; "" for a
// multilingual index (see Languages).
func (m *Manifest) Language() string {
	if m.Options.Language != "" {
		return m.Options.Language
	}
	if m.Options.Analyzer == "" || m.Options.Analyzer == langanalysis.English {
		return "en"
	}
	return ""
}

// TextAnalyzer returns the analyzer the passages of m were indexed with, which queries must
// use too; a multilingual index has one per language (PassageAnalysis).
func (m *Manifest) TextAnalyzer() (analysis.Analyzer, error) {
	if m.Multilingual() {
		return nil, errors.New("a multilingual index has one analyzer per language")
	}
	return langanalysis.New(m.Options.Analyzer)
}

// PassageAnalysis returns the analysis of m's passages and queries, one language or several.
func (m *Manifest) PassageAnalysis() (*langanalysis.Passages, error) {
	return langanalysis.NewPassages(m.Options.Analyzer)
}

// Multilingual reports whether each passage of m is analysed in its own language.
func (m *Manifest) Multilingual() bool { return m.Options.Analyzer == langanalysis.Multilingual }

// LanguageCounts returns the passages per language: those m records (a multilingual index,
// or one built since languages were counted), else all of them in m's language.
func (m *Manifest) LanguageCounts() map[string]int {
	if len(m.Languages) > 0 || m.Multilingual() {
		return maps.Clone(m.Languages)
	}
	return map[string]int{m.Language(): m.Counts.Passages}
}

// IndexLanguages returns the languages of m's passages, sorted: the recorded set of a
// multilingual index, or m's one language.
func (m *Manifest) IndexLanguages() []string {
	return slices.Sorted(maps.Keys(m.LanguageCounts()))
}
