package corpus

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// wkLead is a shorthand for a document made of a wkLead section only.
func wkLead(text string) []Section { return []Section{{Name: "", Text: text}} }

func TestCleanWikitext(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Section
	}{
		{"plain", "Hello world.", wkLead("Hello world.")},
		{"bold italic", "'''Bold''' and ''italic'' and '''''both''''' and l''''eau''' and ''''''x", wkLead("Bold and italic and both and l'eau and 'x")},
		{"apostrophe", "It's Rock 'n' roll", wkLead("It's Rock 'n' roll")},
		{"links", "[[Paris]] and [[Paris, Texas|the other one]] and [[bus]]es", wkLead("Paris and the other one and buses")},
		{"pipe trick", "[[Mercury (planet)|]] is small", wkLead("Mercury is small")},
		{"section link", "see [[#History|below]] and [[#Notes]]", wkLead("see below and Notes")},
		{"link with markup label", "[[Foo|''Foo'' bar]]", wkLead("Foo bar")},
		{"visible category link", "[[:Category:Films|films]] and [[:Category:Books]]", wkLead("films and Category:Books")},
		{"interwiki", "[[wikt:fish]] and [[wikt:fish|fishes]]", wkLead("fish and fishes")},
		{"interlanguage", "Text.\n[[de:Text]]\n[[zh-min-nan:Bûn]]\n[[simple:Text]]", wkLead("Text.")},
		{"category", "Text.\n[[Category:Things|Sort]]\n[[category:Others]]", wkLead("Text.")},
		{"file with nested links", "A [[File:X.jpg|thumb|A [[cat]] on a [[mat|rug]].]] B", wkLead("A B")},
		{"image multi-line caption", "A [[Image:Y.png|thumb|left|line one\nline [[two]]]] B", wkLead("A B")},
		{"template", "A {{cite web|url=http://x|title=[[T]]}} B", wkLead("A B")},
		{"nested template", "A {{outer|{{inner|x}}|y={{z}}}} B", wkLead("A B")},
		{"multi-line infobox", "{{Infobox person\n| name = X\n| birth = {{birth date|1900|1|1}}\n}}\n'''X''' was a person.", wkLead("X was a person.")},
		{"template param", "{{{1}}} and {{{name|default}}} text", wkLead("and text")},
		{"unmatched braces", "a {{ b }} c }} d {{ e", wkLead("a c d e")},
		{"unmatched brackets", "a [[ b ]] c ]] d [[ e", wkLead("a b c d e")},
		{"four braces", "x {{{{y}} z", wkLead("x z")},
		{"convert", "It is {{convert|5|km|mi}} long and {{convert|2|to|3|m}} wide", wkLead("It is 5 km long and 2 to 3 m wide")},
		{"lang", "{{lang|fr|Bonjour}}, {{lang-de|Guten Tag}} and {{nowrap|10 kg}}", wkLead("Bonjour, Guten Tag and 10 kg")},
		{"dash templates", "1990{{ndash}}1995{{snd}}then", wkLead("1990–1995 – then")},
		{"as of", "{{As of|2016}}, it grew", wkLead("As of 2016, it grew")},
		{"quote", "{{quote|text=To be or not.|sign=Hamlet}}", wkLead("To be or not.")},
		{"pagename", "This is {{PAGENAME}}.", wkLead("This is Title.")},
		{"parser function", "A {{#if:x|yes|no}} {{DEFAULTSORT:X}} B", wkLead("A B")},
		{"table", "Before.\n{| class=\"wikitable\"\n|-\n! H1 !! H2\n|-\n| a || [[b]]\n|}\nAfter.", wkLead("Before.\n\nAfter.")},
		{"nested table", "A\n{|\n|\n{|\n| inner\n|}\n| outer\n|}\nB", wkLead("A\n\nB")},
		{"indented table", "A\n:{|\n| x\n|}\nB", wkLead("A\n\nB")},
		{"unclosed table", "A\n{|\n| x\n\nB", wkLead("A")},
		{"table in template", "{{box|\n{|\n| x\n|}\n}}\nText", wkLead("Text")},
		{"ref", "Fact.<ref name=\"a\">{{cite|x}} [[y]]</ref> More.<ref name=a /> End.<ref>z</ref>", wkLead("Fact. More. End.")},
		{"ref case", "A<REF>x</Ref> B<ref group=n>y</ref >.", wkLead("A B.")},
		{"references tag", "A\n<references />\n<references>\n<ref>x</ref>\n</references>", wkLead("A")},
		{"comment", "A <!-- hidden\n== Not a heading ==\n--> B", wkLead("A B")},
		{"unclosed comment", "A <!-- hidden", wkLead("A")},
		{"html tags kept text", "H<sub>2</sub>O, E=mc<sup>2</sup>, <span style=\"x\">s</span> <small>t</small>", wkLead("H2O, E=mc2, s t")},
		{"br", "one<br/>two<br>three", wkLead("one two three")},
		{"dropped tags", "A <math>x^{{2}}</math> B <gallery>\nF.jpg|cap\n</gallery> C <syntaxhighlight lang=go>x</syntaxhighlight> D", wkLead("A B C D")},
		{"nowiki", "<nowiki>[[not a link]] ''x''</nowiki> y", wkLead("[[not a link]] ''x'' y")},
		{"less than", "a < b and c<d", wkLead("a < b and c<d")},
		{"entities", "A &amp; B&nbsp;C &ndash; D &#233; &#x263A; &lt;ref&gt;", wkLead("A & B C – D é ☺ <ref>")},
		{"external links", "[http://example.com Example site] and [https://x.org] and [//y.org Proto]", wkLead("Example site and and Proto")},
		{"bare url kept", "see http://example.com now", wkLead("see http://example.com now")},
		{"unclosed external link", "[http://example.com text", wkLead("http://example.com text")},
		{"bracket text", "a [sic] b", wkLead("a [sic] b")},
		{"magic words", "__NOTOC__ Text __TOC__ here __ not", wkLead("Text here __ not")},
		{"paragraphs", "Line one\nline two.\n\nNext para.", wkLead("Line one line two.\n\nNext para.")},
		{"lists", "Intro:\n* one\n* two\n# three\n: four\n; term : def\nAfter.", wkLead("Intro:\n\none\ntwo\nthree\nfour\nterm : def\n\nAfter.")},
		{"empty list items", "* {{IMDb title|1}}\n* real", wkLead("real")},
		{"horizontal rule", "A\n----\nB", wkLead("A\n\nB")},
		{"whitespace", "  a \t b  \n   c  ", wkLead("a b c")},
		{"punctuation residue", "Paris ({{IPA|pa.ʁi}}) is , big {{sfn|x}}.", wkLead("Paris is, big.")},
		{"headings", "Lead.\n== History ==\nOld.\n=== Early life ===\nYoung.\n== Legacy ==\nNow.",
			[]Section{{"", "Lead."}, {"History", "Old."}, {"History > Early life", "Young."}, {"Legacy", "Now."}}},
		{"empty parent heading", "==A==\n===B===\ntext",
			[]Section{{"A > B", "text"}}},
		{"heading markup", "== ''[[Foo]]'' <ref>x</ref> ==\nText", []Section{{"Foo", "Text"}}},
		{"heading levels skip", "==A==\n====C====\nx\n===B===\ny",
			[]Section{{"A > C", "x"}, {"A > B", "y"}}},
		{"dropped sections", "Lead.\n== See also ==\n* [[X]]\n=== Sub ===\ns\n== References ==\n{{reflist}}\n== External links ==\n* [http://x X]\n== Notes ==\nn",
			wkLead("Lead.")},
		{"section after dropped", "== Further reading ==\nx\n== Works ==\ny", []Section{{"Works", "y"}}},
		{"not a heading", "=x\n= =\na == b ==", wkLead("=x\n\na == b ==")},
		{"redirect text survives cleaner", "#REDIRECT [[X]]", wkLead("REDIRECT X")},
		{"only markup", "{{Infobox}}\n[[Category:X]]\n<ref>r</ref>", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CleanWikitext("Title", tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("CleanWikitext(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanWikitextHostileNesting checks that deep nesting and many unmatched openers stay
// linear: each case is large enough that quadratic behaviour would take minutes.
func TestCleanWikitextHostileNesting(t *testing.T) {
	inputs := map[string]string{
		"unmatched templates": strings.Repeat("{{a ", 50_000),
		"unmatched links":     strings.Repeat("[[a ", 50_000),
		"unclosed refs":       strings.Repeat("<ref>a ", 50_000),
		"deep keep templates": strings.Repeat("{{nowrap|", 20_000) + "x" + strings.Repeat("}}", 20_000),
		"deep link labels":    strings.Repeat("[[a|", 20_000) + "x" + strings.Repeat("]]", 20_000),
		"tables":              strings.Repeat("{|\n", 20_000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, s := range CleanWikitext("T", in) {
				for _, m := range []string{"{{", "[[", "<ref", "{|"} {
					if strings.Contains(s.Text, m) {
						t.Errorf("output contains %q", m)
					}
				}
			}
		})
	}
}

func ExampleCleanWikitext() {
	wikitext := `{{Infobox city|name=Paris|population=2,165,423}}
'''Paris''' is the [[capital city|capital]] of [[France]].<ref>{{cite web|url=http://x}}</ref>

== History ==
Founded in the 3rd century BC by the [[Parisii]] &ndash; a Celtic people.
[[Category:Capitals in Europe]]`
	for _, s := range CleanWikitext("Paris", wikitext) {
		fmt.Printf("[%s] %s\n", s.Name, s.Text)
	}
	// Output:
	// [] Paris is the capital of France.
	// [History] Founded in the 3rd century BC by the Parisii – a Celtic people.
}

func FuzzCleanWikitext(f *testing.F) {
	for _, s := range []string{
		"'''a''' [[b|c]] {{d|e}} <ref>f</ref> == g ==\nh", "{|\n|x\n|}", "{{{{{{", "]]]]}}}}",
		"<nowiki>[[x]]</nowiki>", "&amp;&#x110000;&#0;", "[[File:a|[[b|[[c]]]]]]", "==\n=\n===",
		"<ref name=x/>{{convert|1|to|2|m}}", "[http://x [[y]] z]", "* a\n# b\n: c\n; d",
		"<!--", "<ref>", "{{lang|", "__NOTOC__", "'''''", "{{nowrap|{{nowrap|{{nowrap|x}}}}}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sections := CleanWikitext("T", in)
		for _, s := range sections {
			if s.Text == "" || s.Text != strings.TrimSpace(s.Text) || strings.Contains(s.Text, "\n\n\n") {
				t.Fatalf("badly delimited section %q", s)
			}
			if utf8.ValidString(in) && (!utf8.ValidString(s.Text) || !utf8.ValidString(s.Name)) {
				t.Fatalf("invalid UTF-8 from valid input: %q", s)
			}
		}
	})
}

// wkArticleTexts returns the wikitext of the main-namespace articles of a dump, decoded with
// encoding/xml directly so that the cleaner's benchmark does not depend on the reader.
func wkArticleTexts(b *testing.B, dump string) []string {
	dec := xml.NewDecoder(bytes.NewReader(mwReadDump(b, dump)))
	var texts []string
	for {
		var p mwXmlPage
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "page" {
			if err := dec.DecodeElement(&p, &se); err != nil {
				b.Fatal(err)
			}
			if p.NS == "0" && p.Redirect == nil && len(p.Revisions) > 0 {
				texts = append(texts, p.Revisions[len(p.Revisions)-1].Text)
			}
		}
	}
	return texts
}

func BenchmarkCleanWikitext(b *testing.B) {
	texts := wkArticleTexts(b, mwEnwikiDump)
	if len(texts) != 106 {
		b.Fatalf("%d articles", len(texts))
	}
	var total int64
	for _, s := range texts {
		total += int64(len(s))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			CleanWikitext("", s)
		}
	}
}
