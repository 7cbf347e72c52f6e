// Package wikitext turns MediaWiki wikitext into clean text by section. Clean (or a Cleaner
// that knows a wiki's local namespace names) works in three passes over one page:
//
//  1. tags: comments and the tags whose content is not prose (<ref>, <math>, <gallery>, ...)
//     are removed with their content; other known HTML tags lose only their markup.
//     <nowiki> and <pre> content is entity-escaped so that the later passes leave it literal.
//  2. inline: templates ({{...}}), tables ({|...|}), files, categories and interlanguage
//     links are removed; links, external links, bold/italic and magic words become text.
//     A small set of templates that stand for prose ({{convert}}, {{lang}}, {{nowrap}}, ...)
//     is rendered instead of dropped.
//  3. blocks: lines become headings (new sections), list items or paragraph lines;
//     entities are decoded last, so escaped markup ("&lt;ref&gt;") survives as literal text.
//
// Brackets are matched with stacks computed once per string (never by rescanning to the end for
// every opener), so the cleaner stays linear on hostile input. Unmatched openers and closers are
// dropped, so bare "{{", "[[", "]]", "}}" never reach the output.
//
// Choices a caller may need to know:
//   - Dropped with their content: <ref>, <references>, <gallery>, <math>, <chem>, <ce>, <score>,
//     <timeline>, <graph>, <syntaxhighlight>, <source>, <imagemap>, <templatedata>, <mapframe>,
//     <includeonly>, <noinclude>, <table>, <indicator>. Formulas and code are not prose, and a
//     formula's LaTeX source would only add noise to the lexical index.
//   - Kept as text: <sub>, <sup>, <span>, <small>, <div>, <blockquote>, <poem>, <center>, <code>,
//     <nowiki>, <pre> and the other inline HTML tags; <br> becomes a space.
//   - Sections dropped (with their subsections) because they are only lists of sources or links:
//     see document.DroppedSection.
//   - Lines with no letter or digit left after cleaning (residue of removed markup) are dropped.
//
// A Cleaner is a value with no mutable state shared between calls: any number of goroutines
// may clean pages with the same Cleaner at once.
package wikitext
