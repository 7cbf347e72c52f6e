package corpus

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestHTMLSections(t *testing.T) {
	tests := []struct {
		name, html string
		want       []Section
	}{
		{
			name: "lead, headings as paths, inline markup flattened",
			html: `<html><head><title>T</title><style>.x{}</style></head><body>
<section><p>The <b>squirrel</b> is a <a href="./Rodent">rodent</a>.</p><p>Second&nbsp;para &amp; more.</p></section>
<section><h2 id="Behavior">Behavior</h2><p>Eats nuts.</p>
<section><h3>Diet</h3><p>Seeds.</p></section></section>
<section><h2>Range</h2><ul><li>Asia</li><li>Africa</li></ul></section></body></html>`,
			want: []Section{
				{Text: "The squirrel is a rodent.\n\nSecond para & more."},
				{Name: "Behavior", Text: "Eats nuts."},
				{Name: "Behavior > Diet", Text: "Seeds."},
				{Name: "Range", Text: "Asia\n\nAfrica"},
			},
		},
		{
			name: "navboxes, refs, figures, hatnotes, hidden text dropped; infobox a block after the prose",
			html: `<body><div class="shortdescription" style="display:none">Family of rodents</div>
<div role="note" class="hatnote">For other uses, see X.</div>
<table class="infobox"><tr><td>Kingdom: Animalia</td></tr></table>
<p>Squirrels<sup class="mw-ref reference" typeof="mw:Extension/ref"><a>[1]</a></sup> live in trees.<sup class="noprint Inline-Template">[citation needed]</sup></p>
<figure typeof="mw:File/Thumb"><img src="x.jpg"/><figcaption>A grey squirrel</figcaption></figure>
<span class="mwe-math-element"><math><mi>x</mi></math></span>
<script>var x = 1;</script>
<div class="navbox" role="navigation">Rodent families: ...</div>
<h2>References</h2><ol class="references"><li>Smith 2001.</li></ol>
<h3>Sub of references</h3><p>Still dropped.</p>
<h2>External links</h2><ul><li>Official site</li></ul></body>`,
			want: []Section{{Text: "Squirrels live in trees."}, {Text: "Kingdom: Animalia", Block: "infobox"}},
		},
		{
			name: "tables and infoboxes: one paragraph per row, named after their section, after all prose",
			html: `<body><table class="infobox vcard"><caption>Red squirrel</caption>
<tr><th colspan="2">Scientific classification</th></tr>
<tr><th>Kingdom</th><td>Animalia<sup class="reference">[2]</sup></td></tr>
<tr><td>Order:</td><td><a>Rodentia</a></td></tr></table>
<p>Lead.</p><h2>Range</h2><p>Europe.</p>
<table class="wikitable"><tr><th>Country</th><th>Population</th></tr><tr><td>UK</td><td>140<br/>000</td></tr>
<tr><td>Nested<table><tr><td>inner</td><td>cell</td></tr></table></td><td>x</td></tr></table>
<table class="navbox"><tr><td>Rodents</td></tr></table>
<h2>See also</h2><table><tr><td>dropped with its section</td></tr></table>
<h2>Diet</h2><p>Nuts.</p><table><tr><td> </td></tr></table></body>`,
			want: []Section{
				{Text: "Lead."},
				{Name: "Range", Text: "Europe."},
				{Name: "Diet", Text: "Nuts."},
				{Text: "Red squirrel\n\nScientific classification\n\nKingdom: Animalia\n\nOrder: Rodentia", Block: "infobox"},
				{Name: "Range", Text: "Country; Population\n\nUK; 140 000\n\nNested; x\n\ninner; cell", Block: "table"},
			},
		},
		{
			name: "a dropped section ends at the next heading of its level",
			html: `<h2>See also</h2><p>Chipmunk</p><h2>Society</h2><p>Pets.</p>`,
			want: []Section{{Name: "Society", Text: "Pets."}},
		},
		{
			name: "empty sections omitted, headings with markup",
			html: `<h2>Empty</h2><h2><span>Real</span> <i>name</i></h2><div><p>Text</p> tail</div>`,
			want: []Section{{Name: "Real name", Text: "Text\n\ntail"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HTMLSections(strings.NewReader(tc.html))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestEnterpriseHTMLClean checks the real enwiki article: no markup, citation marks,
// reference sections or infobox content left, and the text of known paragraphs present.
func TestEnterpriseHTMLClean(t *testing.T) {
	docs, _ := readPath(t, enterpriseNDJSON, Options{})
	en := docs[1]
	var all strings.Builder
	var infobox string
	for _, s := range en.Sections {
		all.WriteString(s.Name + "\n" + s.Text + "\n")
		if s.Block == "" && strings.Contains(s.Text, "Scientific classification") {
			t.Errorf("infobox text in prose section %q", s.Name)
		}
		if s.Block == "infobox" {
			infobox = s.Text
		}
		if s.Name == "References" || s.Name == "External links" || s.Name == "See also" || strings.HasPrefix(s.Name, "Notes") {
			t.Errorf("reference-like section kept: %q", s.Name)
		}
	}
	text := all.String()
	for _, bad := range []string{"<", "[1]", "citation needed", "mw-parser-output", "displaystyle", "{{"} {
		if strings.Contains(text, bad) {
			i := strings.Index(text, bad)
			t.Errorf("%q left in text: %q", bad, text[max(0, i-60):min(len(text), i+60)])
		}
	}
	// The infobox is a block of its own, its rows "label: value" (the taxobox's labels are td
	// cells ending in a colon).
	if !strings.Contains(infobox, "Kingdom: Animalia") || !strings.HasPrefix(infobox, "Squirrels") {
		t.Errorf("infobox block: %q", infobox)
	}
	for _, want := range []string{
		"Squirrels are members of the family Sciuridae",
		"The word squirrel, first attested in 1327, comes from the Anglo-Norman esquirel",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// TestEnterpriseWikitextFallback: a record with wikitext but no html is cleaned with
// CleanWikitext, and gives the same lead as the html of the same revision.
func TestEnterpriseWikitextFallback(t *testing.T) {
	raw, err := readLine(enterpriseNDJSON, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Blank out the html: "html":"..." -> "html":"".
	i := strings.Index(raw, `"html":"`)
	j := strings.Index(raw[i+8:], `","wikitext"`)
	if i < 0 || j < 0 {
		t.Fatal("html field not found")
	}
	noHTML := raw[:i+8] + raw[i+8+j:]
	doc, skip, err := convertEnterprise(rawRecord{data: []byte(noHTML), n: 1, pos: "line 1"})
	if err != nil || skip != "" {
		t.Fatal(err, skip)
	}
	fromHTML, _, _ := convertEnterprise(rawRecord{data: []byte(raw), n: 1, pos: "line 1"})
	if len(doc.Sections) < 5 || !strings.HasPrefix(doc.Sections[0].Text, "Squirrels are members of the family Sciuridae") {
		t.Errorf("wikitext sections: %d, lead %.80q", len(doc.Sections), doc.Sections[0].Text)
	}
	nameSet := map[string]bool{}
	for _, s := range fromHTML.Sections {
		nameSet[s.Name] = true
	}
	for _, s := range doc.Sections {
		if !nameSet[s.Name] {
			t.Errorf("wikitext section %q has no html counterpart", s.Name)
		}
	}
}

// readLine returns line n (1-based) of a file.
func readLine(path string, n int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		return "", fmt.Errorf("%s has %d lines", path, len(lines))
	}
	return lines[n-1], nil
}

func TestEnterpriseBadInput(t *testing.T) {
	tests := []struct {
		line, wantErr string
	}{
		{`{"name": "X", "identifier": 1, "article_body": {"html": "<p>x</p>"}`, "line 2: unexpected end of JSON input"},
		{`{"name": "X", "article_body": {"html": "<p>x</p>"}}`, `line 2: missing "identifier"`},
		{`{"identifier": 5, "article_body": {"html": "<p>x</p>"}}`, `line 2: missing "name"`},
		{`{"name": "X", "identifier": 5, "date_modified": "yesterday"}`, `line 2: date_modified "yesterday" is not RFC 3339`},
		{`{"name": "X", "identifier": 5, "article_body": {"html": 3}}`, `line 2: field "article_body.html": JSON number where a string was expected`},
	}
	good := `{"name": "A", "identifier": 1, "date_modified": "2023-01-02T03:04:05Z", "article_body": {"html": "<p>Alpha.</p>"}}`
	for _, tc := range tests {
		path := writeTemp(t, "e.ndjson", []byte(good+"\n"+tc.line+"\n"+strings.Replace(good, `"identifier": 1`, `"identifier": 2`, 1)+"\n"))
		r, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		docs, recErrs, fatal := drain(t, r)
		if fatal != nil || len(docs) != 2 || docs[1].ID != "2" {
			t.Errorf("%s: %d docs, fatal %v", tc.line, len(docs), fatal)
		}
		if want := path + ": " + tc.wantErr; len(recErrs) != 1 || recErrs[0] != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.line, recErrs, want)
		}
	}
}

func TestEnterpriseSkips(t *testing.T) {
	input := `{"name": "Talk:A", "identifier": 1, "namespace": {"identifier": 1}, "article_body": {"html": "<p>x</p>"}}
{"name": "Only a navbox", "identifier": 2, "article_body": {"html": "<table class=\"navbox\"><tr><td>x</td></tr></table>"}}
{"name": "Kept", "identifier": 3, "article_body": {"html": "<p>Text.</p>"}}`
	r := newJSONReader(strings.NewReader(input), "s.ndjson", "s", convertEnterprise)
	docs, recErrs, fatal := drain(t, r)
	st := r.Stats()
	if len(docs) != 1 || len(recErrs) != 0 || fatal != nil || st.Skipped[SkipNamespace] != 1 || st.Skipped[SkipEmpty] != 1 || st.Documents != 1 {
		t.Errorf("docs %d, errors %v, fatal %v, stats %+v", len(docs), recErrs, fatal, st)
	}
}

func FuzzHTMLSections(f *testing.F) {
	f.Add(`<body><p>a<b>b</b></p><h2>S</h2><table><tr><td>x</td></tr></table><p>c</p></body>`)
	f.Add(`<h2>References</h2><h3>x</h3><p>y</p><h1>z</h1>w`)
	f.Add(`<p>unclosed <i>italic <sup class="reference">[1]</sup>`)
	f.Add(`<table class="infobox"><caption>c</caption><tr><th>k</th><td>v<table><tr><td>n</td></tr></table></td></tr></table><div class="infobox">d</div>`)
	f.Fuzz(func(t *testing.T, s string) {
		secs, err := HTMLSections(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, sec := range secs {
			if strings.TrimSpace(sec.Text) == "" {
				t.Fatalf("empty section %q", sec.Name)
			}
			if sec.Block != "" && sec.Block != "table" && sec.Block != "infobox" {
				t.Fatalf("block type %q", sec.Block)
			}
			if strings.Contains(sec.Text, "\n\n\n") || strings.HasPrefix(sec.Text, "\n") || strings.HasSuffix(sec.Text, "\n") {
				t.Fatalf("paragraphs not normalised: %q", sec.Text)
			}
		}
	})
}

func FuzzEnterprise(f *testing.F) {
	f.Add([]byte(`{"name": "A", "identifier": 1, "date_modified": "2023-01-02T03:04:05Z", "article_body": {"html": "<p>Alpha.</p><h2>S</h2><p>x</p>"}}`))
	f.Add([]byte(`{"name": "A", "identifier": "x", "article_body": {"wikitext": "'''A''' is [[b|c]].\n== H ==\n{{t}}x"}}` + "\n" + `{"name": "B", "identifier": 2, "abstract": "B."}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDrain(t, newJSONReader(bytes.NewReader(data), "f.ndjson", "f", convertEnterprise))
	})
}
