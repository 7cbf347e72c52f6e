package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Link is one link target written in a Markdown file.
type Link struct {
	Line   int    // 1-based
	Target string // as written: "docs/indexing.md#update", "#resume", "https://..."
}

// Broken is a relative link that does not resolve.
type Broken struct {
	File   string // the Markdown file, relative to the root
	Line   int
	Target string
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", b.File, b.Line, b.Target, b.Reason)
}

var (
	// A reference definition: "[id]: target".
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	// href and src attributes of inline HTML (<a href>, <img src>).
	htmlRef = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*"([^"]*)"`)
	// Explicit anchors of inline HTML: <a id="x"> or <a name="x">.
	htmlAnchor = regexp.MustCompile(`(?i)<a\s+[^>]*\b(?:id|name)\s*=\s*"([^"]+)"`)
	// An ATX heading. Setext headings (a line of = or - under the text) are not read: the
	// docs use none, and a link to one is reported rather than passed.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:\s+(.*?))?\s*$`)
	// A heading's closing run of #s, which is not part of its text.
	closingHashes = regexp.MustCompile(`\s+#+$`)
	// A scheme ("https:", "mailto:") or a scheme-relative "//host": a link that leaves the
	// repository, which this package does not fetch.
	absolute = regexp.MustCompile(`^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)`)
	// Inline link syntax inside a heading: [text](target) reads as text.
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// fence returns the fence a line opens or closes ("```", "~~~~"), "" when it is none.
func fence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// proseLines returns the lines of md outside fenced code blocks, with their 1-based numbers;
// what a code block holds is an example, not a link or a heading.
func proseLines(md []byte) (lines []string, numbers []int) {
	open := ""
	for i, line := range strings.Split(string(md), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if f := fence(line); f != "" {
			switch {
			case open == "":
				open = f
				continue
			case f[0] == open[0] && len(f) >= len(open) && strings.TrimSpace(line) == f:
				open = ""
				continue
			}
		}
		if open != "" {
			continue
		}
		lines = append(lines, line)
		numbers = append(numbers, i+1)
	}
	return lines, numbers
}

// blankCodeSpans replaces each inline code span of line, backticks included, by spaces, so
// that `[x](y)` written as code is not read as a link, and columns are kept.
func blankCodeSpans(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		// The span ends at the next run of exactly n backticks.
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 { // an unmatched run is literal backticks
			i += n
			continue
		}
		for k := i; k < end; k++ {
			b[k] = ' '
		}
		i = end
	}
	return string(b)
}

// inlineTargets returns the targets of the inline links and images of line: what follows
// "](" up to the closing parenthesis, without the optional title.
func inlineTargets(line string) []string {
	var out []string
	for rest := line; ; {
		i := strings.Index(rest, "](")
		if i < 0 {
			return out
		}
		rest = rest[i+2:]
		s := strings.TrimLeft(rest, " ")
		var target string
		if strings.HasPrefix(s, "<") {
			end := strings.IndexByte(s, '>')
			if end < 0 {
				continue
			}
			target = s[1:end]
		} else {
			depth, end := 0, len(s)
		scan:
			for k, c := range s {
				switch {
				case c == '(':
					depth++
				case c == ')' && depth == 0, c == ' ', c == '\t':
					end = k
					break scan
				case c == ')':
					depth--
				}
			}
			target = s[:end]
		}
		if target != "" {
			out = append(out, target)
		}
	}
}

// Links returns the link targets of the Markdown text md, outside code blocks and code spans:
// inline links and images, reference definitions, and href/src attributes of inline HTML.
func Links(md []byte) []Link {
	var out []Link
	lines, numbers := proseLines(md)
	for i, line := range lines {
		line = blankCodeSpans(line)
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, Link{Line: numbers[i], Target: m[1]})
			continue
		}
		for _, t := range inlineTargets(line) {
			out = append(out, Link{Line: numbers[i], Target: t})
		}
		for _, m := range htmlRef.FindAllStringSubmatch(line, -1) {
			out = append(out, Link{Line: numbers[i], Target: m[1]})
		}
	}
	return out
}

// Slug returns the anchor GitHub gives a heading of this text: inline markup reduced to its
// text, lower case, every character but letters, marks, digits, connector punctuation (_),
// hyphens and spaces dropped, and each space a hyphen.
func Slug(heading string) string {
	h := inlineLink.ReplaceAllString(heading, "$1")
	h = htmlTag.ReplaceAllString(h, "")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsNumber(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors returns the anchors of the Markdown text md: the slug of each ATX heading outside
// code blocks (a repeated slug numbered -1, -2, ... as GitHub numbers it) and the explicit
// anchors of inline HTML.
func Anchors(md []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	lines, _ := proseLines(md)
	for _, line := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := closingHashes.ReplaceAllString(m[1], "")
		if text == strings.Repeat("#", len(text)) { // "## ##": an empty heading
			text = ""
		}
		s := Slug(text)
		if n := seen[s]; n > 0 {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			seen[s] = 1
		}
		anchors[s] = true
	}
	return anchors
}

// CheckLinks checks the relative links of the Markdown files (paths relative to root): the
// file or directory a link names must exist inside root, and its #anchor must be a heading
// (or explicit anchor) of the Markdown page it names, the linking page itself when the link
// is only "#anchor". An anchor into a file that is not Markdown is not checked. Links that
// leave the repository (a scheme, "//host") are not fetched. The result is sorted by file
// and line.
func CheckLinks(root string, files []string) ([]Broken, error) {
	var broken []Broken
	anchorsOf := map[string]map[string]bool{} // by absolute path
	anchors := func(path string) (map[string]bool, error) {
		if a, ok := anchorsOf[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := Anchors(b)
		anchorsOf[path] = a
		return a, nil
	}
	for _, rel := range files {
		src := filepath.Join(root, filepath.FromSlash(rel))
		md, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", rel, err)
		}
		for _, l := range Links(md) {
			if absolute.MatchString(l.Target) {
				continue
			}
			bad := func(reason string) {
				broken = append(broken, Broken{File: rel, Line: l.Line, Target: l.Target, Reason: reason})
			}
			pathPart, anchor, _ := strings.Cut(l.Target, "#")
			pathPart, _, _ = strings.Cut(pathPart, "?")
			p, err := url.PathUnescape(pathPart)
			if err != nil {
				bad("bad escape in the path")
				continue
			}
			if anchor, err = url.PathUnescape(anchor); err != nil {
				bad("bad escape in the anchor")
				continue
			}
			dest := src
			if p != "" {
				if strings.HasPrefix(p, "/") {
					bad("an absolute path: write it relative to the page")
					continue
				}
				dest = filepath.Join(filepath.Dir(src), filepath.FromSlash(p))
				if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					bad("outside the repository")
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					bad("no such file or directory")
					continue
				}
			}
			if anchor == "" || !strings.EqualFold(filepath.Ext(dest), ".md") {
				continue
			}
			a, err := anchors(dest)
			if err != nil {
				bad(err.Error())
				continue
			}
			if !a[anchor] {
				bad("no heading with anchor #" + anchor)
			}
		}
	}
	sort.SliceStable(broken, func(i, j int) bool {
		if broken[i].File != broken[j].File {
			return broken[i].File < broken[j].File
		}
		return broken[i].Line < broken[j].Line
	})
	return broken, nil
}

// Root returns the module root above the working directory: the first directory, walking
// up, that holds go.mod.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// DocFiles returns the documentation files under root that the checks cover, relative to
// root: README.md, CHANGELOG.md and every docs/*.md, in that order.
func DocFiles(root string) ([]string, error) {
	files := []string{"README.md", "CHANGELOG.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(pages)
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files, nil
}
