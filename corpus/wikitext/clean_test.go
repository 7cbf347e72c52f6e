package wikitext

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-rag/kairos/corpus/document"
)

// lead is a shorthand for a document made of a lead section only.
func lead(text string) []document.Section { return []document.Section{{Name: "", Text: text}} }

func TestClean(t *testing.T) {
	tests := []struct {
		name, in string
		want     []document.Section
	}{
		{"plain", "Hello world.", lead("Hello world.")},
		{"bold italic", "'''Bold''' and ''italic'' and '''''both''''' and l''''eau''' and ''''''x", lead("Bold and italic and both and l'eau and 'x")},
		{"apostrophe", "It's Rock 'n' roll", lead("It's Rock 'n' roll")},
		{"links", "[[Paris]] and [[Paris, Texas|the other one]] and [[bus]]es", lead("Paris and the other one and buses")},
		{"pipe trick", "[[Mercury (planet)|]] is small", lead("Mercury is small")},
		{"section link", "see [[#History|below]] and [[#Notes]]", lead("see below and Notes")},
		{"link with markup label", "[[Foo|''Foo'' bar]]", lead("Foo bar")},
		{"visible category link", "[[:Category:Films|films]] and [[:Category:Books]]", lead("films and Category:Books")},
		{"interwiki", "[[wikt:fish]] and [[wikt:fish|fishes]]", lead("fish and fishes")},
		{"interlanguage", "Text.\n[[de:Text]]\n[[zh-min-nan:Bûn]]\n[[simple:Text]]", lead("Text.")},
		{"category", "Text.\n[[Category:Things|Sort]]\n[[category:Others]]", lead("Text.")},
		{"file with nested links", "A [[File:X.jpg|thumb|A [[cat]] on a [[mat|rug]].]] B", lead("A B")},
		{"image multi-line caption", "A [[Image:Y.png|thumb|left|line one\nline [[two]]]] B", lead("A B")},
		{"template", "A {{cite web|url=http://x|title=[[T]]}} B", lead("A B")},
		{"nested template", "A {{outer|{{inner|x}}|y={{z}}}} B", lead("A B")},
		{"multi-line infobox", "{{Infobox person\n| name = X\n| birth = {{birth date|1900|1|1}}\n}}\n'''X''' was a person.", lead("X was a person.")},
		{"template param", "{{{1}}} and {{{name|default}}} text", lead("and text")},
		{"unmatched braces", "a {{ b }} c }} d {{ e", lead("a c d e")},
		{"unmatched brackets", "a [[ b ]] c ]] d [[ e", lead("a b c d e")},
		{"four braces", "x {{{{y}} z", lead("x z")},
		{"convert", "It is {{convert|5|km|mi}} long and {{convert|2|to|3|m}} wide", lead("It is 5 km long and 2 to 3 m wide")},
		{"lang", "{{lang|fr|Bonjour}}, {{lang-de|Guten Tag}} and {{nowrap|10 kg}}", lead("Bonjour, Guten Tag and 10 kg")},
		{"dash templates", "1990{{ndash}}1995{{snd}}then", lead("1990–1995 – then")},
		{"as of", "{{As of|2016}}, it grew", lead("As of 2016, it grew")},
		{"quote", "{{quote|text=To be or not.|sign=Hamlet}}", lead("To be or not.")},
		{"pagename", "This is {{PAGENAME}}.", lead("This is Title.")},
		{"parser function", "A {{#if:x|yes|no}} {{DEFAULTSORT:X}} B", lead("A B")},
		{"table", "Before.\n{| class=\"wikitable\"\n|-\n! H1 !! H2\n|-\n| a || [[b]]\n|}\nAfter.", lead("Before.\n\nAfter.")},
		{"nested table", "A\n{|\n|\n{|\n| inner\n|}\n| outer\n|}\nB", lead("A\n\nB")},
		{"indented table", "A\n:{|\n| x\n|}\nB", lead("A\n\nB")},
		{"unclosed table", "A\n{|\n| x\n\nB", lead("A")},
		{"unclosed table before a heading", "A\n{|\n| x\n== History ==\nB", []document.Section{{Name: "", Text: "A"}, {Name: "History", Text: "B"}}},
		{"table closed by a template", "A\n{| class=wikitable\n|x\n{{end}}\nB\n== History ==\nC", []document.Section{{Name: "", Text: "A\n\nB"}, {Name: "History", Text: "C"}}},
		{"table closed by table end", "A\n{|\n|x\n{{Table_end}}\nB", lead("A\n\nB")},
		{"an end template inside a cell is no close", "A\n{|\n| x {{end}} y\n|}\nB", lead("A\n\nB")},
		{"table in template", "{{box|\n{|\n| x\n|}\n}}\nText", lead("Text")},
		{"ref", "Fact.<ref name=\"a\">{{cite|x}} [[y]]</ref> More.<ref name=a /> End.<ref>z</ref>", lead("Fact. More. End.")},
		{"ref case", "A<REF>x</Ref> B<ref group=n>y</ref >.", lead("A B.")},
		{"references tag", "A\n<references />\n<references>\n<ref>x</ref>\n</references>", lead("A")},
		{"comment", "A <!-- hidden\n== Not a heading ==\n--> B", lead("A B")},
		{"unclosed comment", "A <!-- hidden", lead("A")},
		{"html tags kept text", "H<sub>2</sub>O, E=mc<sup>2</sup>, <span style=\"x\">s</span> <small>t</small>", lead("H2O, E=mc2, s t")},
		{"br", "one<br/>two<br>three", lead("one two three")},
		{"dropped tags", "A <math>x^{{2}}</math> B <gallery>\nF.jpg|cap\n</gallery> C <syntaxhighlight lang=go>x</syntaxhighlight> D", lead("A B C D")},
		{"nowiki", "<nowiki>[[not a link]] ''x''</nowiki> y", lead("[[not a link]] ''x'' y")},
		{"less than", "a < b and c<d", lead("a < b and c<d")},
		{"entities", "A &amp; B&nbsp;C &ndash; D &#233; &#x263A; &lt;ref&gt;", lead("A & B C – D é ☺ <ref>")},
		{"external links", "[http://example.com Example site] and [https://x.org] and [//y.org Proto]", lead("Example site and and Proto")},
		{"bare url kept", "see http://example.com now", lead("see http://example.com now")},
		{"unclosed external link", "[http://example.com text", lead("http://example.com text")},
		{"bracket text", "a [sic] b", lead("a [sic] b")},
		{"magic words", "__NOTOC__ Text __TOC__ here __ not", lead("Text here __ not")},
		{"paragraphs", "Line one\nline two.\n\nNext para.", lead("Line one line two.\n\nNext para.")},
		{"lists", "Intro:\n* one\n* two\n# three\n: four\n; term : def\nAfter.", lead("Intro:\n\none\ntwo\nthree\nfour\nterm : def\n\nAfter.")},
		{"empty list items", "* {{IMDb title|1}}\n* real", lead("real")},
		{"horizontal rule", "A\n----\nB", lead("A\n\nB")},
		{"whitespace", "  a \t b  \n   c  ", lead("a b c")},
		{"punctuation residue", "Paris ({{IPA|pa.ʁi}}) is , big {{sfn|x}}.", lead("Paris is, big.")},
		{"headings", "Lead.\n== History ==\nOld.\n=== Early life ===\nYoung.\n== Legacy ==\nNow.",
			[]document.Section{{Name: "", Text: "Lead."}, {Name: "History", Text: "Old."}, {Name: "History > Early life", Text: "Young."}, {Name: "Legacy", Text: "Now."}}},
		{"empty parent heading", "==A==\n===B===\ntext",
			[]document.Section{{Name: "A > B", Text: "text"}}},
		{"heading markup", "== ''[[Foo]]'' <ref>x</ref> ==\nText", []document.Section{{Name: "Foo", Text: "Text"}}},
		{"heading levels skip", "==A==\n====C====\nx\n===B===\ny",
			[]document.Section{{Name: "A > C", Text: "x"}, {Name: "A > B", Text: "y"}}},
		{"dropped sections", "Lead.\n== See also ==\n* [[X]]\n=== Sub ===\ns\n== References ==\n{{reflist}}\n== External links ==\n* [http://x X]\n== Notes ==\nn",
			lead("Lead.")},
		{"section after dropped", "== Further reading ==\nx\n== Works ==\ny", []document.Section{{Name: "Works", Text: "y"}}},
		{"not a heading", "=x\n= =\na == b ==", lead("=x\n\na == b ==")},
		{"redirect text survives cleaner", "#REDIRECT [[X]]", lead("REDIRECT X")},
		{"only markup", "{{Infobox}}\n[[Category:X]]\n<ref>r</ref>", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clean("Title", tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Clean(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanLangTemplates holds {{lang}} and its kin to their text, malformed forms included:
// "{{lang}}" with no argument once indexed pos[-1] and panicked, which stopped a whole build.
func TestCleanLangTemplates(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a {{lang}} b", "a b"},
		{"a {{lang|}} b", "a b"},
		{"a {{lang|fr}} b", "a b"}, // a code and no text
		{"a {{lang|fr|}} b", "a b"},
		{"a {{lang|fr|Bonjour}} b", "a Bonjour b"},
		{"a {{lang|fr|Bonjour|italic=no}} b", "a Bonjour b"},
		{"a {{lang|code=fr|text=Bonjour}} b", "a Bonjour b"},
		{"a {{lang|text=Bonjour|code=fr}} b", "a Bonjour b"},
		{"a {{lang|fr|text=Bonjour}} b", "a Bonjour b"},
		{"a {{lang|code=fr|Bonjour}} b", "a Bonjour b"},
		{"a {{lang|code=fr}} b", "a b"},
		{"a {{lang|=}} b", "a b"},
		{"a {{lang-rtl}} b", "a b"},
		{"a {{lang-rtl|he|שלום}} b", "a שלום b"},
		{"a {{transl}} b", "a b"},
		{"a {{transl|ar|DIN|qalb}} b", "a qalb b"},
		{"a {{transliteration|ar|qalb}} b", "a qalb b"},
		{"a {{script}} b", "a b"},
		{"a {{script|Arab|قلب}} b", "a قلب b"},
		{"a {{unicode}} b", "a b"},
		{"a {{unicode|ǂ}} b", "a ǂ b"},
		{"a {{unicode|text=ǂ}} b", "a ǂ b"},
		{"a {{resize}} b", "a b"},
		{"a {{resize|big}} b", "a big b"},
		{"a {{resize|90%|small}} b", "a small b"},
		{"a {{lang-}} b", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Clean("T", tt.in); !slices.Equal(got, lead(tt.want)) {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanLinkPrefixes keeps links whose title holds a colon after something that is no
// language code nor namespace: "[[CSI: Miami]]" vanished when any two or three letters before a
// colon read as an interlanguage link.
func TestCleanLinkPrefixes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[[CSI: Miami]] aired.", "CSI: Miami aired."},
		{"[[CSI: Miami|the show]] aired.", "the show aired."},
		{"[[Ion: A Story]] and [[USA: Road]].", "Ion: A Story and USA: Road."},
		{"[[ABC:Def]] and [[Fox-News:X]].", "ABC:Def and Fox-News:X."},
		{"[[Star Wars: Episode I]]", "Star Wars: Episode I"},
		{"[[Help:Contents]] here", "Help:Contents here"},
		{"Text.\n[[de:Text]]\n[[fr: Paris]]\n[[zh-min-nan:Bûn]]\n[[be-tarask:Y]]\n[[nb:Z]]", "Text."},
		{"Text.\n[[EN:Text]] [[Simple:Text]]", "Text."},
		{"Text.\n[[zh-tw:臺北]] [[jp:東京]] [[tlh:X]] [[mo:Y]] [[tokipona:Z]]", "Text."},
		{"see [[:de:Text]]", "see de:Text"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Clean("T", tt.in); !slices.Equal(got, lead(tt.want)) {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanTidyPunct holds the tidying of what removed markup leaves ("word ,", "( )") to the
// residue only: ".NET", ".22" and "main()" are text of the same shapes, and were once tidied
// into "uses.NET", "a.22" and "main".
func TestCleanTidyPunct(t *testing.T) {
	tests := []struct{ in, want string }{
		{"It uses .NET and .22 rounds.", "It uses .NET and .22 rounds."},
		{"Call main() or f( ) or g_() first.", "Call main() or f() or g_() first."},
		{"The .com boom , then .", "The .com boom, then."},
		{"Paris ({{IPA|x}}) is , big {{sfn|x}}.", "Paris is, big."},
		{"A ( ( {{x}} ) ) B", "A B"},
		{"A ({{x}}; born 1900) B", "A (born 1900) B"},
		{"A ({{x}}, 1900 {{y}}) B ,, C", "A (1900) B, C"},
		{"Ends {{sfn|x}} .", "Ends."},
		{"our friend ... has", "our friend ... has"},
		{"Паріж ({{IPA|x}}) і .ua", "Паріж і .ua"},
		{"Ünïcode() stays", "Ünïcode() stays"},
		{"北京({{IPA|x}})是首都。", "北京是首都。"},
		{"กรุงเทพ({{IPA|x}})เป็น", "กรุงเทพเป็น"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Clean("T", tt.in); !slices.Equal(got, lead(tt.want)) {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanHostileNesting checks that deep nesting and many unmatched openers stay
// linear: each case is large enough that quadratic behaviour would take minutes.
func TestCleanHostileNesting(t *testing.T) {
	inputs := map[string]string{
		"unmatched templates": strings.Repeat("{{a ", 50_000),
		"unmatched links":     strings.Repeat("[[a ", 50_000),
		"unclosed refs":       strings.Repeat("<ref>a ", 50_000),
		"deep keep templates": strings.Repeat("{{nowrap|", 20_000) + "x" + strings.Repeat("}}", 20_000),
		"deep link labels":    strings.Repeat("[[a|", 20_000) + "x" + strings.Repeat("]]", 20_000),
		"tables":              strings.Repeat("{|\n", 20_000),
		// Each costs a scan to the end of the page per opening when the scans are not shared.
		"unclosed tags":              strings.Repeat("<span ", 200_000),
		"unknown tags closed late":   strings.Repeat("<zz ", 200_000) + ">",
		"unclosed external links":    strings.Repeat("[http://x ", 200_000),
		"external links closed late": strings.Repeat("[http://x ", 200_000) + "\n]",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, s := range Clean("T", in) {
				for _, m := range []string{"{{", "[[", "<ref", "{|"} {
					if strings.Contains(s.Text, m) {
						t.Errorf("output contains %q", m)
					}
				}
			}
		})
	}
}

func ExampleClean() {
	wikitext := `{{Infobox city|name=Paris|population=2,165,423}}
'''Paris''' is the [[capital city|capital]] of [[France]].<ref>{{cite web|url=http://x}}</ref>

== History ==
Founded in the 3rd century BC by the [[Parisii]] &ndash; a Celtic people.
[[Category:Capitals in Europe]]`
	for _, s := range Clean("Paris", wikitext) {
		fmt.Printf("[%s] %s\n", s.Name, s.Text)
	}
	// Output:
	// [] Paris is the capital of France.
	// [History] Founded in the 3rd century BC by the Parisii – a Celtic people.
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"'''a''' [[b|c]] {{d|e}} <ref>f</ref> == g ==\nh", "{|\n|x\n|}", "{{{{{{", "]]]]}}}}",
		"<nowiki>[[x]]</nowiki>", "&amp;&#x110000;&#0;", "[[File:a|[[b|[[c]]]]]]", "==\n=\n===",
		"<ref name=x/>{{convert|1|to|2|m}}", "[http://x [[y]] z]", "* a\n# b\n: c\n; d",
		"<!--", "<ref>", "{{lang|", "{{lang}}", "{{resize}}", "{{lang|code=x|text=y}}", "__NOTOC__", "'''''", "{{nowrap|{{nowrap|{{nowrap|x}}}}}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sections := Clean("T", in)
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
