package indexer

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/langanalysis"
)

// LanguageChoice says which language a build analyses its passages as, and why.
type LanguageChoice struct {
	langanalysis.Choice
	// From says where the language came from: "--language", the input it was detected in,
	// or "default" (no input named a language: English, what Kairos always used).
	From string `json:"from"`
	// Forced is true when BuildOptions.Language was given: inputs of other languages are
	// then accepted and analysed as this one.
	Forced bool `json:"forced,omitempty"`
}

// String describes the choice for a build summary.
func (c LanguageChoice) String() string {
	if c.Analyzer == langanalysis.Multilingual {
		return fmt.Sprintf("multilingual, each passage analysed in its own language (%s)", c.From)
	}
	s := fmt.Sprintf("%s, analyzer %s (%s)", c.Language, c.Analyzer, c.From) // after a "language" label
	if c.Fallback {
		s += "; no analyzer for this language: Unicode words, lower case, no stemming"
	}
	return s
}

// detectScanRecords bounds the records read from the start of an input to find its language.
const detectScanRecords = 100

// resolveLanguage settles the language of a build before anything is written: the forced
// BuildOptions.Language, else the languages its inputs declare (each input's first
// document: a MediaWiki dump's <siteinfo>, an Enterprise record's in_language), else
// English. Inputs naming one language make an index of that language; inputs naming several
// make a multilingual index (langanalysis.Multilingual), each passage analysed in its own
// language (passageLanguage). readInput checks every later document against the choice
// (checkLanguage).
func (o *Options) resolveLanguage(ctx context.Context) error {
	if o.Build.Language == langanalysis.Multilingual {
		if err := o.detectInputLanguages(ctx); err != nil {
			return err
		}
		o.setLanguage(LanguageChoice{Choice: langanalysis.Choice{Analyzer: langanalysis.Multilingual}, From: "--language", Forced: true})
		return nil
	}
	if o.Build.Language != "" {
		// The inputs' languages are still read: inputs of several (two Wikipedias analysed as
		// one language) number their documents independently (idLanguage).
		if err := o.detectInputLanguages(ctx); err != nil {
			return err
		}
		o.setLanguage(LanguageChoice{Choice: langanalysis.For(o.Build.Language), From: "--language", Forced: true})
		return nil
	}
	if err := o.detectInputLanguages(ctx); err != nil {
		return err
	}
	byLang := map[string][]string{}
	for i, in := range o.Inputs {
		if l := o.inputLang[i]; l != "" {
			byLang[l] = append(byLang[l], in.Path)
		}
	}
	switch len(byLang) {
	case 0:
		from := "default"
		for _, in := range o.Inputs {
			if IsStream(in.Path) {
				from = "default; " + in.Path + " is a stream, read once, so its language was not detected ahead"
				break
			}
		}
		o.setLanguage(LanguageChoice{Choice: langanalysis.For(langanalysis.English), From: from})
	case 1:
		for l, files := range byLang {
			o.setLanguage(LanguageChoice{Choice: langanalysis.For(l), From: "detected in " + files[0]})
		}
	default:
		o.setLanguage(LanguageChoice{Choice: langanalysis.Choice{Analyzer: langanalysis.Multilingual}, From: "detected: " + describeLanguages(byLang)})
	}
	return nil
}

// detectInputLanguages records the language of each input's first document (firstLanguage).
func (o *Options) detectInputLanguages(ctx context.Context) error {
	o.inputLang = make([]string, len(o.Inputs))
	for i, in := range o.Inputs {
		if IsStream(in.Path) {
			continue // read once, by the build: its documents are checked as they come
		}
		l, err := firstLanguage(ctx, in)
		if err != nil {
			return err
		}
		o.inputLang[i] = l
	}
	return nil
}

// idLanguage is the language that prefixes the ids of input i's documents ("de:12"): the
// passage language of a multilingual build, and in a build forced to one language over inputs
// of several, the input's own (dewiki's page 12 and frwiki's are two documents, whatever one
// analyser reads them with); else "".
func (o *Options) idLanguage(i int, doc *corpus.Document) string {
	if l := o.passageLanguage(i, doc); l != "" {
		return l
	}
	seen := ""
	mixed := false
	for _, l := range o.inputLang {
		if l != "" && seen != "" && l != seen {
			mixed = true
		}
		if l != "" {
			seen = l
		}
	}
	if mixed && i < len(o.inputLang) {
		return o.inputLang[i]
	}
	return ""
}

// multilingual reports whether the build analyses each passage in its own language.
func (o *Options) multilingual() bool { return o.lang.Analyzer == langanalysis.Multilingual }

// passageLanguage is the language the passages of doc (from input i) are stored and analysed
// as in a multilingual build: the document's own ("language" of a JSONL or Enterprise
// record), else its input's, else English, what Kairos assumes of text of unknown language.
// Single-language builds store none: their passages are in the index's language.
func (o *Options) passageLanguage(i int, doc *corpus.Document) string {
	if !o.multilingual() {
		return ""
	}
	if l := langanalysis.Normalize(doc.Meta["language"]); l != "" {
		return l
	}
	if i < len(o.inputLang) && o.inputLang[i] != "" {
		return o.inputLang[i]
	}
	return langanalysis.English
}

func describeLanguages(byLang map[string][]string) string {
	var parts []string
	for l, files := range byLang {
		parts = append(parts, fmt.Sprintf("%s (%s)", l, strings.Join(files, ", ")))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (o *Options) setLanguage(c LanguageChoice) {
	o.lang = c
	o.Build.Language, o.Build.Analyzer = c.Language, c.Analyzer
}

// firstLanguage returns the language detected in the first document of an input ("" for
// none), skipping up to detectScanRecords malformed or skipped records.
func firstLanguage(ctx context.Context, in InputSpec) (string, error) {
	r, err := corpus.Open(ctx, in.Path, in.Options)
	if err != nil {
		return "", err // it names the file
	}
	defer r.Close()
	for range detectScanRecords {
		_, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil && !corpus.IsRecordError(err) {
			return "", fmt.Errorf("detecting the language of %s: %w", in.Path, err)
		}
		if err == nil {
			break
		}
	}
	for l := range r.Stats().Languages {
		return langanalysis.Normalize(l), nil // one document: one language
	}
	return "", nil
}

// checkLanguage refuses a document of path in another language than the build's, unless the
// language was forced; n is its record number, id its id, and langs counts the languages of
// the input's documents so far. The error says which document and that the build stopped
// (the first language is only the one the build chose: issue 54 read "the build took the
// language of each input's first document" as a build that had happened).
func (o *Options) checkLanguage(path string, n int, id string, langs map[string]int) error {
	if o.lang.Forced || len(langs) == 0 || o.multilingual() {
		return nil
	}
	for _, l := range slices.Sorted(maps.Keys(langs)) {
		if l = langanalysis.Normalize(l); l != o.lang.Language {
			from := o.lang.From
			if from == "detected in "+path {
				from = "the language of its first document"
			}
			return fmt.Errorf("%s: document %d (id %s) is in %s, but this build analyses %s (%s): the build stopped; "+
				"pass --language multilingual to analyse each document in its own language, or --language %s to analyse them all as %s",
				path, n, id, l, o.lang.Language, from, o.lang.Language, o.lang.Language)
		}
	}
	return nil
}

// adoptLanguage makes an update or delete analyse as base did; a forced language must agree.
func (o *Options) adoptLanguage(ctx context.Context, base *Manifest) error {
	lang, analyzer := base.Language(), base.Options.Analyzer
	if analyzer == "" {
		analyzer = langanalysis.English
	}
	forced := o.Build.Language != ""
	if analyzer == langanalysis.Multilingual {
		if forced && o.Build.Language != langanalysis.Multilingual {
			return fmt.Errorf("--language %s: the index is multilingual; rebuild it to change its language", o.Build.Language)
		}
		o.setLanguage(LanguageChoice{Choice: langanalysis.Choice{Analyzer: analyzer}, From: "the index", Forced: forced})
		return o.detectInputLanguages(ctx) // each input's passages keep their language
	}
	if forced && langanalysis.For(o.Build.Language).Analyzer != analyzer {
		return fmt.Errorf("--language %s: the index is in %s (analyzer %s); rebuild it to change its language", o.Build.Language, lang, analyzer)
	}
	o.setLanguage(LanguageChoice{Choice: langanalysis.Choice{Language: lang, Analyzer: analyzer, Fallback: analyzer == langanalysis.Standard},
		From: "the index", Forced: forced})
	return nil
}

// Languages lists the language codes with an analyzer of their own (others get Unicode
// word analysis without stemming).
func Languages() []string { return slices.Clone(langanalysis.Languages()) }
