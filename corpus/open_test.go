package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The shared data sets (see ../shared/data/*/SOURCE.txt).
const (
	scifactPath      = "../../shared/data/beir-scifact/corpus.jsonl"
	faqPath          = "../../shared/data/faq-covid-deepset/faq_covidbert.csv"
	enterpriseNDJSON = "../../shared/data/wikimedia-enterprise/api-testdata/articles.ndjson"
	enterpriseJSON   = "../../shared/data/wikimedia-enterprise/api-testdata/articles.json"
	structuredJSON   = "../../shared/data/wikimedia-enterprise/api-testdata/structured-contents.json"
	electionsDir     = "../../shared/data/wikimedia-enterprise/structured-contents-elections"
	gensimEnwiki     = "../../shared/data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
	gensimBgwiki     = "../../shared/data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2"
)

// The -update flag rewrites golden files. It is registered only if another test file of the
// package has not registered it already (the MediaWiki tests may share it).
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
	return true
}()

func goldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestDetectFormat(t *testing.T) {
	utf16 := func(s string) []byte {
		b := []byte{0xff, 0xfe}
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return b
	}
	tests := []struct {
		path, head string
		want       string // "" = error
	}{
		{"enwiki.xml.bz2", `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">`, FormatMediaWiki},
		{"dump", "\uFEFF  <?xml version=\"1.0\"?>\n<mediawiki>", FormatMediaWiki},
		{"bg.xml", string(utf16(`<?xml version="1.0"?><mediawiki>`)), FormatMediaWiki},
		{"page.html", `<html><body>`, ""},
		{"articles.ndjson", `{"name":"Squirrel","identifier":28492,"abstract":"Squirrels are`, FormatEnterprise},
		{"x.json", "[\n  {\n    \"name\": \"Squirrel\",\n    \"identifier\": 1,\n    \"date_modified\": \"2018-09-20T12:17:53Z\"", FormatEnterprise},
		{"x.json", `{"name":"S","in_language":{"identifier":"en"}}`, FormatEnterprise},
		{"faq.json", `[{"question":"Why?","answer":"Because."}]`, FormatFAQJSON},
		{"faq.jsonl", `{"question":"Why?","answer":"Because."}`, FormatFAQJSONL},
		{"corpus.jsonl", `{"_id": "4983", "title": "Micro", "text": "Alter`, FormatJSONL},
		{"wiki.json", `{"id": "12", "revid": "1", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism", "text": "An`, FormatWikiExtractor},
		{"docs.txt", `{"id": 3, "text": "hello"}`, FormatJSONL},
		{"x.json", `{"foo": 1}`, ""},
		{"faq_covidbert.csv", "question,answer,answer_html,link\n", FormatFAQCSV},
		{"faq.txt", "\"Question\",\"Answer\"\nq,a\n", FormatFAQCSV},
		{"data.csv", "a,b\n1,2\n", FormatFAQCSV}, // extension decides; the reader then names the missing column
		{"empty.ndjson", "", FormatEnterprise},
		{"empty.jsonl.gz", "", FormatJSONL},
		{"notes.txt", "just text", ""},
		{"unknown", "", ""},
	}
	for _, tc := range tests {
		got, err := DetectFormat(tc.path, []byte(tc.head))
		if tc.want == "" {
			if err == nil {
				t.Errorf("DetectFormat(%q, %.30q) = %q, want an error", tc.path, tc.head, got)
			} else if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("DetectFormat(%q): error %q does not name the file", tc.path, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("DetectFormat(%q, %.30q) = %q, %v; want %q", tc.path, tc.head, got, err, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		opts    Options
		wantErr string
	}{
		{Options{}, ""},
		{Options{Format: FormatFAQCSV, FAQ: FAQColumns{Question: "q", Answer: "a", Date: "-"}}, ""},
		{Options{Format: "xml"}, `unknown format "xml"`},
		{Options{FAQ: FAQColumns{Question: "q", Answer: "q"}}, `FAQ column "q" is used as both question and answer`},
		{Options{FAQ: FAQColumns{Answer: "-"}}, "cannot be turned off"},
	}
	for _, tc := range tests {
		err := tc.opts.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: Validate() = %v, want %q", tc.opts, err, tc.wantErr)
		}
	}
}

func TestTrimKnownExts(t *testing.T) {
	for in, want := range map[string]string{
		"enwiki-20170820-pages-articles.xml.bz2": "enwiki-20170820-pages-articles",
		"faq_covidbert.csv":                      "faq_covidbert",
		"corpus.jsonl":                           "corpus",
		"wiki.v2.json.gz":                        "wiki.v2",
		".json":                                  ".json",
		"README":                                 "README",
	} {
		if got := trimKnownExts(in); got != want {
			t.Errorf("trimKnownExts(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpenRealFiles reads the shared inputs with detection and checks exact counts and
// the fields of known records.
func TestOpenRealFiles(t *testing.T) {
	docs, st := readPath(t, scifactPath, Options{})
	if len(docs) != 5183 || st.Documents != 5183 || st.Bad != 0 || st.BytesRead != 8005249 {
		t.Errorf("SciFact: %d docs, stats %+v; want 5183 docs and 8005249 bytes", len(docs), st)
	}
	if d := docs[0]; d.ID != "4983" || !strings.HasPrefix(d.Title, "Microstructural development of human newborn") ||
		d.Source != "corpus" || !strings.HasPrefix(d.Sections[0].Text, "Alterations of the architecture") {
		t.Errorf("SciFact first doc: %+v", d)
	}

	docs, st = readPath(t, faqPath, Options{})
	if len(docs) != 213 || st.Bad != 0 || st.Repaired != 0 {
		t.Errorf("FAQ: %d docs, stats %+v; want 213", len(docs), st)
	}
	first := docs[0]
	if first.ID != "1" || first.Title != "What is a novel coronavirus?" ||
		first.URL != "https://www.cdc.gov/coronavirus/2019-ncov/faq.html" ||
		!first.Date.Equal(time.Date(2020, 3, 17, 0, 0, 0, 0, time.UTC)) ||
		first.Meta["category"] != "Coronavirus Disease 2019 Basics" || first.Source != "faq_covidbert" ||
		len(first.Sections) != 2 || first.Sections[1].Text != first.Title || !strings.HasSuffix(first.Sections[0].Text, "common coronavirus diagnosis.") ||
		!strings.Contains(first.Sections[0].Text, "common cold.\n\nA diagnosis") {
		t.Errorf("FAQ row 1: %+v", first)
	}
	if docs[212].ID != "213" {
		t.Errorf("FAQ last id %q, want 213", docs[212].ID)
	}

	for _, path := range []string{enterpriseNDJSON, enterpriseJSON} {
		docs, st = readPath(t, path, Options{})
		if len(docs) != 3 || st.Bad != 0 {
			t.Fatalf("%s: %d docs, %+v", path, len(docs), st)
		}
		en := docs[1]
		if en.ID != "28492" || en.Title != "Squirrel" || en.URL != "https://en.wikipedia.org/wiki/Squirrel" ||
			!en.Date.Equal(time.Date(2023, 8, 24, 1, 14, 42, 0, time.UTC)) || en.Meta["wiki"] != "enwiki" || en.Meta["language"] != "en" {
			t.Errorf("%s: enwiki record: %+v", path, en)
		}
		var names []string
		for _, s := range en.Sections {
			names = append(names, s.Name)
		}
		want := "|Etymology|Characteristics|Behavior|Behavior > Feeding|Taxonomy|Taxonomy > Taxonomy list|Society"
		if got := strings.Join(names, "|"); !strings.HasPrefix(got, want) {
			t.Errorf("%s: enwiki sections %q, want prefix %q", path, got, want)
		}
	}

	docs, _ = readPath(t, structuredJSON, Options{})
	if len(docs) != 3 || docs[2].ID != "28492" || !strings.HasPrefix(docs[2].Sections[0].Text, "Squirrels are members of the family Sciuridae") {
		t.Errorf("structured-contents: %d docs, %+v", len(docs), docs)
	}

	files, _ := filepath.Glob(filepath.Join(electionsDir, "*.json"))
	if len(files) != 11 {
		t.Fatalf("%d election files, want 11", len(files))
	}
	for _, f := range files {
		docs, _ = readPath(t, f, Options{})
		year := filepath.Base(f)[:4]
		if len(docs) != 1 || !strings.HasPrefix(docs[0].Title, year+" United States presidential election") ||
			docs[0].Date.Year() < 2024 || !strings.Contains(docs[0].Sections[0].Text, year) {
			t.Errorf("%s: %+v", f, docs)
		}
	}
}

// TestOpenCompressed checks that gzip and bzip2 are read by magic bytes, that a misnamed
// file is refused, and that a tar.gz of NDJSON files (the Enterprise snapshot layout) is
// read entry by entry.
func TestOpenCompressed(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(faqPath)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gzPath := write("faq.csv.gz", gz.Bytes())
	write("faq.csv", raw)
	if out, err := exec.Command("bzip2", "-k", filepath.Join(dir, "faq.csv")).CombinedOutput(); err != nil {
		t.Fatalf("bzip2: %v %s", err, out)
	}
	for _, p := range []string{gzPath, filepath.Join(dir, "faq.csv.bz2"), write("noext", gz.Bytes())} {
		docs, st := readPath(t, p, Options{})
		if len(docs) != 213 || docs[0].Title != "What is a novel coronavirus?" {
			t.Errorf("%s: %d docs", p, len(docs))
		}
		if fi, _ := os.Stat(p); st.BytesRead != fi.Size() {
			t.Errorf("%s: BytesRead %d, file size %d", p, st.BytesRead, fi.Size())
		}
	}
	if _, err := Open(context.Background(), write("plain.gz", raw), Options{}); err == nil || !strings.Contains(err.Error(), "plain.gz: named .gz but not gzip data") {
		t.Errorf("misnamed .gz: err = %v", err)
	}

	// A tar.gz with two NDJSON entries and a directory.
	ndjson, err := os.ReadFile(enterpriseNDJSON)
	if err != nil {
		t.Fatal(err)
	}
	var tgz bytes.Buffer
	zw = gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "enwiki/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, name := range []string{"enwiki/a_0.ndjson", "enwiki/a_1.ndjson"} {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(ndjson))})
		tw.Write(ndjson)
	}
	tw.Close()
	zw.Close()
	docs, st := readPath(t, write("snapshot.tar.gz", tgz.Bytes()), Options{})
	if len(docs) != 6 || st.Documents != 6 || docs[4].ID != "28492" || docs[4].Source != "snapshot" {
		t.Errorf("tar.gz: %d docs, stats %+v", len(docs), st)
	}
}

// TestOpenForcedFormat reads SciFact as forced jsonl and checks that forcing a wrong format
// surfaces record errors rather than documents.
func TestOpenForcedFormat(t *testing.T) {
	docs, _ := readPath(t, scifactPath, Options{Format: FormatJSONL, Source: "scifact"})
	if len(docs) != 5183 || docs[0].Source != "scifact" {
		t.Errorf("forced jsonl: %d docs, source %q", len(docs), docs[0].Source)
	}
	ctx := context.Background()
	r, err := Open(ctx, scifactPath, Options{Format: FormatEnterprise})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Next(ctx)
	if err == nil || !IsRecordError(err) || err.Error() != scifactPath+`: line 1: missing "identifier"` {
		t.Errorf("scifact as enterprise: err = %v", err)
	}
}

// writeGolden compares got with testdata/golden/name, or rewrites it with -update.
func writeGolden(t *testing.T, name string, ps []Passage) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, p := range ps {
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", "golden", name)
	if goldenUpdate() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		gotLines, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("%s line %d differs:\n got %s\nwant %s\n(run go test -update if the change is intended)", path, i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", path, len(gotLines), len(wantLines))
	}
}

// TestGolden pins the first passages of the FAQ and of all three Enterprise articles.
func TestGolden(t *testing.T) {
	sp, _ := NewSplitter(SplitOptions{})
	for _, tc := range []struct {
		path, golden string
		n            int
	}{
		{faqPath, "faq_covidbert.jsonl", 30},
		{enterpriseNDJSON, "enterprise_articles.jsonl", 1000},
		{structuredJSON, "enterprise_structured.jsonl", 1000},
	} {
		docs, _ := readPath(t, tc.path, Options{})
		var ps []Passage
		for _, d := range docs {
			ps = append(ps, sp.Split(d)...)
		}
		writeGolden(t, tc.golden, ps[:min(tc.n, len(ps))])
	}
}

func FuzzDetectFormat(f *testing.F) {
	f.Add("a.jsonl", []byte(`{"_id": "1", "text": "x"}`))
	f.Add("a.xml.bz2", []byte("\xff\xfe<\x00m\x00"))
	f.Add("a.json", []byte(`[{"question": "q", "answer": {"x": [1, {"y": 2}]}`))
	f.Fuzz(func(t *testing.T, path string, head []byte) {
		format, err := DetectFormat(path, head)
		if err == nil && !slices.Contains(Formats(), format) {
			t.Fatalf("DetectFormat returned unknown format %q", format)
		}
	})
}

// TestOpenStdin reads a gzip stream from standard input ("-"), detecting its format.
func TestOpenStdin(t *testing.T) {
	raw, err := os.ReadFile(faqPath)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	f, err := os.Open(writeTemp(t, "stdin.gz", gz.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	docs, st := readPath(t, "-", Options{})
	if len(docs) != 213 || docs[0].Source != "stdin" || st.BytesRead != int64(gz.Len()) {
		t.Errorf("stdin: %d docs, source %q, stats %+v", len(docs), docs[0].Source, st)
	}
}
