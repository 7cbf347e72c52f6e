package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/langanalysis"
	"github.com/kairos-rag/kairos/rerank/request"
	"github.com/kairos-rag/kairos/search"
)

// wikiChatFilters maps WikiChat's filters onto Kairos's. Supported: last_edit_date with
// eq/lt/lte/gt/gte (a datetime as Qdrant reads one, a date meaning its midnight), source with eq (Kairos's input name), and language
// with eq/ne against the index language (a mismatch matches nothing; a multilingual index
// selects its passages of that language), and block_type with eq/ne (text, table or
// infobox). Anything else is a 400
// naming the filter, rather than silently ignored.
func wikiChatFilters(fs []WikiChatFilter, lang string) (search.Filters, error) {
	var f search.Filters
	var dates request.DateBounds
	for i, sf := range fs {
		name := fmt.Sprintf("search_filters[%d]", i)
		if sf.FieldName == "" || sf.FilterType == "" || len(sf.FieldValue) == 0 {
			return f, badRequest(`%s: "field_name", "filter_type" and "field_value" are required`, name)
		}
		switch sf.FilterType {
		case "eq", "ne", "lt", "lte", "gt", "gte":
		default:
			return f, badRequest(`%s: filter_type %q: want eq, ne, lt, lte, gt or gte`, name, sf.FilterType)
		}
		var err error
		switch sf.FieldName {
		case "last_edit_date":
			err = dateFilter(&dates, name, sf)
		case "source":
			err = sourceFilter(&f, name, sf)
		case "language":
			err = languageFilter(&f, name, sf, lang)
		case "block_type":
			err = blockTypeFilter(&f, name, sf)
		default:
			err = badRequest(`%s: field_name %q is not supported (want last_edit_date, source, language or block_type)`, name, sf.FieldName)
		}
		if err != nil {
			return f, err
		}
	}
	if dates.Crossed() {
		f.None = true // bounds that cross (eq a, gt a): no instant lies between them
	}
	dates.Apply(&f)
	return f, nil
}

func dateFilter(b *request.DateBounds, name string, sf WikiChatFilter) error {
	s, err := filterString(name, sf, "want a date string")
	if err != nil {
		return err
	}
	t, err := parseWikiChatDate(s)
	if err != nil {
		return badRequest("%s: field_value %q is not a datetime: %v (RFC 3339, seconds and zone optional; a date alone means its midnight UTC)", name, s, err)
	}
	// Filters bound inclusively; a strict bound moves by a nanosecond, the resolution of
	// passage dates in every engine.
	switch sf.FilterType {
	case "gte":
		b.Lower(t)
	case "gt":
		b.Lower(t.Add(time.Nanosecond))
	case "lte":
		b.Upper(t)
	case "lt":
		b.Upper(t.Add(-time.Nanosecond))
	case "eq":
		b.Lower(t)
		b.Upper(t)
	default:
		return badRequest("%s: filter_type %q is not supported on last_edit_date (want eq, lt, lte, gt or gte)", name, sf.FilterType)
	}
	return nil
}

// filterString reads a filter's field_value as a string. A null or empty one is refused, not
// read as "": as "", source eq kept every passage without a source, and language eq matched
// nothing, each without a word to the client.
func filterString(name string, sf WikiChatFilter, want string) (string, error) {
	if bytes.Equal(bytes.TrimSpace(sf.FieldValue), []byte("null")) {
		return "", badRequest(`%s: "field_value" of %s is null: want a non-empty string`, name, sf.FieldName)
	}
	var s string
	if err := json.Unmarshal(sf.FieldValue, &s); err != nil {
		return "", badRequest("%s: %s field_value: %s", name, sf.FieldName, want)
	}
	if strings.TrimSpace(s) == "" {
		return "", badRequest(`%s: "field_value" of %s is empty: want a non-empty string`, name, sf.FieldName)
	}
	return s, nil
}

func sourceFilter(f *search.Filters, name string, sf WikiChatFilter) error {
	s, err := filterString(name, sf, "want a string")
	if err != nil {
		return err
	}
	if sf.FilterType != "eq" {
		return badRequest("%s: filter_type %q is not supported on source (want eq)", name, sf.FilterType)
	}
	if len(f.Sources) > 0 && !hasString(f.Sources, s) {
		f.None = true // two different eq filters ANDed: nothing matches
		return nil
	}
	f.Sources = []string{s}
	return nil
}

func languageFilter(f *search.Filters, name string, sf WikiChatFilter, lang string) error {
	s, err := filterString(name, sf, "want a string")
	if err != nil {
		return err
	}
	if lang == "" { // a multilingual index: search selects the passages of the language
		s = langanalysis.Normalize(s)
		switch sf.FilterType {
		case "eq":
			if len(f.Languages) > 0 && !containsLanguage(f.Languages, s) {
				f.None = true // two different eq filters ANDed: nothing matches
			}
			f.Languages = []string{s}
		case "ne":
			f.ExcludeLanguages = append(f.ExcludeLanguages, s)
		default:
			return badRequest("%s: filter_type %q is not supported on language (want eq or ne)", name, sf.FilterType)
		}
		return nil
	}
	match := sameLanguage(s, lang)
	switch sf.FilterType {
	case "eq":
	case "ne":
		match = !match
	default:
		return badRequest("%s: filter_type %q is not supported on language (want eq or ne)", name, sf.FilterType)
	}
	if !match {
		// Every passage of an index is in its language: a filter for another passes none.
		f.None = true
	}
	return nil
}

// sameLanguage compares language codes as /v1's filters.language and search compare them
// (langanalysis.Normalize): case, region and script aside, so that a client's "en-US" or "EN"
// is the "en" its passages are in. Compared strictly, "ne en-US" had passed every passage of
// an English index and "eq en-US" none.
func sameLanguage(a, b string) bool { return langanalysis.Normalize(a) == langanalysis.Normalize(b) }

// containsLanguage reports whether list holds the language code l, compared as sameLanguage.
func containsLanguage(list []string, l string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return sameLanguage(x, l) })
}

// blockTypeFilter narrows f's block types: eq keeps one type, ne the others; filters AND, so
// the types left are those every filter allows, and none left matches nothing.
func blockTypeFilter(f *search.Filters, name string, sf WikiChatFilter) error {
	s, err := filterString(name, sf, "want a string")
	if err != nil {
		return err
	}
	all := corpus.BlockTypes()
	if !slices.Contains(all, s) {
		return badRequest("%s: block_type %q: want %s", name, s, strings.Join(all, ", "))
	}
	allowed := all
	if len(f.BlockTypes) > 0 {
		allowed = f.BlockTypes
	}
	var keep []string
	for _, t := range allowed {
		switch sf.FilterType {
		case "eq":
			if t == s {
				keep = append(keep, t)
			}
		case "ne":
			if t != s {
				keep = append(keep, t)
			}
		default:
			return badRequest("%s: filter_type %q is not supported on block_type (want eq or ne)", name, sf.FilterType)
		}
	}
	if len(keep) == 0 {
		f.None = true // eq table and eq infobox, or eq text and ne text: nothing matches
	}
	f.BlockTypes = keep
	return nil
}

func hasString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
