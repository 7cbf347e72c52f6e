package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// enterpriseArticle is the part of a Wikimedia Enterprise "article" object (Snapshot and
// On-demand APIs, one per NDJSON line) that Kairos uses. Structured Contents objects share
// the identity fields and carry an abstract instead of article_body.
type enterpriseArticle struct {
	Name         string          `json:"name"`
	Identifier   json.RawMessage `json:"identifier"`
	URL          string          `json:"url"`
	DateModified string          `json:"date_modified"`
	Abstract     string          `json:"abstract"`
	Namespace    *struct {
		Identifier int `json:"identifier"`
	} `json:"namespace"`
	InLanguage struct {
		Identifier string `json:"identifier"`
	} `json:"in_language"`
	IsPartOf struct {
		Identifier string `json:"identifier"`
	} `json:"is_part_of"`
	ArticleBody struct {
		HTML     string `json:"html"`
		Wikitext string `json:"wikitext"`
	} `json:"article_body"`
}

// convertEnterprise converts one Enterprise record. The text comes from article_body.html
// (see HTMLSections); without html, from article_body.wikitext (CleanWikitext); without
// either (Structured Contents), from the abstract as the lead section. Pages outside the main
// namespace are skipped (SkipNamespace). Meta keeps "wiki" (is_part_of, e.g. "enwiki") and
// "language".
func convertEnterprise(rec rawRecord) (Document, string, error) {
	var a enterpriseArticle
	if err := json.Unmarshal(rec.data, &a); err != nil {
		return Document{}, "", jsonError(err)
	}
	if a.Namespace != nil && a.Namespace.Identifier != 0 {
		return Document{}, SkipNamespace, nil
	}
	id, err := jsonID(a.Identifier)
	if err != nil {
		return Document{}, "", fmt.Errorf("identifier: %w", err)
	}
	if id == "" {
		return Document{}, "", errors.New(`missing "identifier"`)
	}
	title := collapseSpace(a.Name)
	if title == "" {
		return Document{}, "", errors.New(`missing "name"`)
	}
	var date time.Time
	if a.DateModified != "" {
		if date, err = time.Parse(time.RFC3339Nano, a.DateModified); err != nil {
			return Document{}, "", fmt.Errorf("date_modified %q is not RFC 3339", a.DateModified)
		}
		date = date.UTC()
	}
	doc := Document{ID: id, Title: title, URL: a.URL, Date: date}
	for k, v := range map[string]string{"wiki": a.IsPartOf.Identifier, "language": a.InLanguage.Identifier} {
		if v != "" {
			if doc.Meta == nil {
				doc.Meta = map[string]string{}
			}
			doc.Meta[k] = v
		}
	}
	switch {
	case strings.TrimSpace(a.ArticleBody.HTML) != "":
		doc.Sections, err = HTMLSections(strings.NewReader(a.ArticleBody.HTML))
		if err != nil {
			return Document{}, "", fmt.Errorf("article_body.html: %w", err)
		}
	case strings.TrimSpace(a.ArticleBody.Wikitext) != "":
		doc.Sections = CleanWikitext(title, a.ArticleBody.Wikitext)
	default:
		doc.Sections = []Section{{Text: paragraphs(a.Abstract, false)}}
	}
	return doc, "", nil
}
