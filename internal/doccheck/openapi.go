package doccheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The generated part of docs/http-api.md lies between these two lines; the prose around them
// is written by hand.
const (
	BeginGenerated = "<!-- BEGIN generated from server/openapi.json: go test ./internal/doccheck -run OpenAPI -update -->"
	EndGenerated   = "<!-- END generated -->"
)

// referenceSchemas are the request and result shapes the reference lists field by field, in
// this order: what a client writes and reads most.
var referenceSchemas = []string{"Query", "Filters", "Hit", "ChatRequest", "WikiChatRequest", "WikiChatFilter", "WikiChatV1Request"}

// methodOrder lists an endpoint's methods in a fixed order.
var methodOrder = []string{"get", "post", "put", "patch", "delete"}

type spec struct {
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	Summary  string                `json:"summary"`
	Security []map[string][]string `json:"security"`
}

type schema struct {
	Type             string            `json:"type"`
	Description      string            `json:"description"`
	Ref              string            `json:"$ref"`
	Enum             []any             `json:"enum"`
	Default          any               `json:"default"`
	Minimum          *float64          `json:"minimum"`
	Maximum          *float64          `json:"maximum"`
	ExclusiveMinimum bool              `json:"exclusiveMinimum"`
	MinLength        *int              `json:"minLength"`
	MaxLength        *int              `json:"maxLength"`
	MaxItems         *int              `json:"maxItems"`
	Items            *schema           `json:"items"`
	OneOf            []schema          `json:"oneOf"`
	Properties       map[string]schema `json:"properties"`
	Required         []string          `json:"required"`
}

// HTTPReference renders the reference part of docs/http-api.md from the OpenAPI document
// spec: one table of every endpoint (method, path, summary, whether the API key applies) and
// one table of fields for each schema of referenceSchemas.
func HTTPReference(specJSON []byte) (string, error) {
	var s spec
	if err := json.Unmarshal(specJSON, &s); err != nil {
		return "", fmt.Errorf("openapi.json: %w", err)
	}
	if len(s.Paths) == 0 {
		return "", errors.New("openapi.json: no paths")
	}
	var b strings.Builder
	b.WriteString("### Endpoints\n\n")
	b.WriteString("| Method | Path | What it does | API key |\n|---|---|---|---|\n")
	paths := make([]string, 0, len(s.Paths))
	for p := range s.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, m := range methodOrder {
			op, ok := s.Paths[p][m]
			if !ok {
				continue
			}
			key := "no"
			if len(op.Security) > 0 {
				key = "yes"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", strings.ToUpper(m), p, cell(op.Summary), key)
		}
	}
	for _, name := range referenceSchemas {
		sc, ok := s.Components.Schemas[name]
		if !ok {
			return "", fmt.Errorf("openapi.json: no schema %s", name)
		}
		order, err := propertyOrder(specJSON, name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n### %s\n\n", name)
		if sc.Description != "" {
			b.WriteString(cell(sc.Description) + "\n\n")
		}
		b.WriteString("| Field | Type | Description |\n|---|---|---|\n")
		required := map[string]bool{}
		for _, r := range sc.Required {
			required[r] = true
		}
		for _, f := range order {
			p := sc.Properties[f]
			typ := typeOf(p)
			if required[f] {
				typ += ", required"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f, typ, cell(p.Description))
		}
	}
	return b.String(), nil
}

// propertyOrder returns the property names of the schema name in the order openapi.json
// writes them (a reader meets text before filters, as the file's authors chose).
func propertyOrder(specJSON []byte, name string) ([]string, error) {
	var raw struct {
		Components struct {
			Schemas map[string]struct {
				Properties json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(specJSON, &raw); err != nil {
		return nil, err
	}
	props := raw.Components.Schemas[name].Properties
	if len(props) == 0 {
		return nil, fmt.Errorf("openapi.json: schema %s has no properties", name)
	}
	dec := json.NewDecoder(strings.NewReader(string(props)))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		order = append(order, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// typeOf describes a property's type and bounds in a few words: "integer, 1 to 300, default
// 10", "`bm25` \| `dense` \| `hybrid`", "[Filters](#filters)" (a link only to a schema the
// reference lists).
func typeOf(p schema) string {
	if p.Ref != "" {
		name := p.Ref[strings.LastIndexByte(p.Ref, '/')+1:]
		if name == "StringOrList" {
			return "string or list of strings"
		}
		if slices.Contains(referenceSchemas, name) {
			return fmt.Sprintf("[%s](#%s)", name, Slug(name))
		}
		return "object (`" + name + "` in openapi.json)" // a schema this page does not list
	}
	if len(p.OneOf) > 0 {
		var alts []string
		for _, o := range p.OneOf {
			alts = append(alts, typeOf(o))
		}
		return strings.Join(alts, " or ")
	}
	var parts []string
	if len(p.Enum) > 0 {
		var vals []string
		for _, v := range p.Enum {
			vals = append(vals, fmt.Sprintf("`%v`", v))
		}
		parts = append(parts, strings.Join(vals, " \\| "))
	} else if p.Type == "array" && p.Items != nil {
		parts = append(parts, "list of "+typeOf(*p.Items))
	} else if p.Type != "" {
		parts = append(parts, p.Type)
	}
	if p.MinLength != nil || p.MaxLength != nil {
		parts = append(parts, bounds(intPtr(p.MinLength), intPtr(p.MaxLength), false)+" characters")
	}
	if p.Minimum != nil || p.Maximum != nil {
		parts = append(parts, bounds(p.Minimum, p.Maximum, p.ExclusiveMinimum))
	}
	if p.MaxItems != nil {
		parts = append(parts, fmt.Sprintf("at most %d", *p.MaxItems))
	}
	if p.Default != nil {
		parts = append(parts, fmt.Sprintf("default `%v`", p.Default))
	}
	return strings.Join(parts, ", ")
}

func intPtr(p *int) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

// bounds writes a range: "1 to 300", "at least 0", "above 0", "at most 1000".
func bounds(lo, hi *float64, exclusiveLo bool) string {
	switch {
	case lo != nil && hi != nil && exclusiveLo:
		return fmt.Sprintf("above %g, at most %g", *lo, *hi)
	case lo != nil && hi != nil:
		return fmt.Sprintf("%g to %g", *lo, *hi)
	case lo != nil && exclusiveLo:
		return fmt.Sprintf("above %g", *lo)
	case lo != nil:
		return fmt.Sprintf("at least %g", *lo)
	default:
		return fmt.Sprintf("at most %g", *hi)
	}
}

// cell makes text fit one Markdown table cell: no line breaks, pipes escaped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// Splice returns page with what lies between its BeginGenerated and EndGenerated lines
// replaced by generated.
func Splice(page, generated string) (string, error) {
	begin := strings.Index(page, BeginGenerated)
	end := strings.Index(page, EndGenerated)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("no %q ... %q section", BeginGenerated, EndGenerated)
	}
	return page[:begin] + BeginGenerated + "\n\n" + generated + "\n" + page[end:], nil
}
