package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/internal/sharedtest"
)

// TestBuildLanguage: the language of a build is forced, detected, or English; inputs in
// different languages make a multilingual index, as does --language multilingual; one input
// whose documents change language is refused unless forced; the manifest records the choice.
func TestBuildLanguage(t *testing.T) {
	bg := sharedtest.Path(t, "data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2")
	en := sharedtest.Path(t, "data/mediawiki-xml-gensim/testcorpus.xml.bz2")
	mixed := sharedtest.Path(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson") // de, en, ru
	jsonl := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"id":"1","title":"A","text":"Squirrels climb trees."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		inputs         []string
		force          string
		lang, analyzer string
		fallback       bool
		langs          []string // the languages of a multilingual index
		errHas         []string // refused, naming these
	}{
		{name: "detected bg", inputs: []string{bg}, lang: "bg", analyzer: "bg"},
		{name: "forced en over bg", inputs: []string{bg}, force: "en", lang: "en", analyzer: "en"},
		{name: "nothing detected: en", inputs: []string{jsonl}, lang: "en", analyzer: "en"},
		{name: "unknown language: Unicode fallback", inputs: []string{jsonl}, force: "sw", lang: "sw", analyzer: "standard", fallback: true},
		{name: "two dumps in two languages", inputs: []string{bg, en}, analyzer: "multilingual", langs: []string{"bg", "en"}},
		{name: "one file in three languages", inputs: []string{mixed}, errHas: []string{"de", "en", mixed, "--language multilingual"}},
		{name: "one file in three languages, multilingual", inputs: []string{mixed}, force: "multilingual", analyzer: "multilingual", langs: []string{"de", "en", "ru"}},
		{name: "three languages forced to one", inputs: []string{mixed}, force: "ru", lang: "ru", analyzer: "ru"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Dir: dir, Build: BuildOptions{Language: tc.force}}
			for _, in := range tc.inputs {
				opts.Inputs = append(opts.Inputs, InputSpec{Path: in})
			}
			sum, err := Build(context.Background(), opts)
			if tc.errHas != nil {
				wantRefusal(t, err, tc.errHas)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := sum.Language; c.Language != tc.lang || c.Analyzer != tc.analyzer || c.Fallback != tc.fallback || c.Forced != (tc.force != "") {
				t.Errorf("summary language %+v", c)
			}
			// Manifest round trip: the recorded language and analyzer come back on open.
			g, err := openDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			m := g.Manifest
			if m.FormatVersion != FormatVersion || m.Language() != tc.lang || m.Options.Analyzer != tc.analyzer {
				t.Errorf("manifest format %d language %q analyzer %q", m.FormatVersion, m.Language(), m.Options.Analyzer)
			}
			if tc.langs != nil {
				sum := 0
				for _, n := range m.Languages {
					sum += n
				}
				if got := slices.Sorted(maps.Keys(m.Languages)); !slices.Equal(got, tc.langs) || sum != m.Counts.Passages {
					t.Errorf("manifest languages %v, want %v adding up to the %d passages", m.Languages, tc.langs, m.Counts.Passages)
				}
			}
			// BM25 lengths are counted with the same analyzer.
			a, err := m.PassageAnalysis()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := liveTokens(t.Context(), g.Passages, a); err != nil || n != m.BM25.Tokens {
				t.Errorf("manifest tokens %d, recounted with %s: %d (%v)", m.BM25.Tokens, tc.analyzer, n, err)
			}
		})
	}
}

// TestOldManifestsReadAsEnglish: a manifest that records no language, only an English analyzer or none,
// is English.
func TestOldManifestsReadAsEnglish(t *testing.T) {
	for _, tc := range []struct {
		opts BuildOptions
		want string
	}{
		{BuildOptions{Analyzer: "en"}, "en"},
		{BuildOptions{}, "en"},
		{BuildOptions{Language: "bg", Analyzer: "bg"}, "bg"},
	} {
		m := Manifest{FormatVersion: 3, Options: tc.opts}
		if got := m.Language(); got != tc.want {
			t.Errorf("%+v: language %q, want %q", tc.opts, got, tc.want)
		}
		if _, err := m.TextAnalyzer(); err != nil {
			t.Errorf("%+v: %v", tc.opts, err)
		}
	}
}

// TestUpdateKeepsLanguage: an update analyses as the index does, and refuses another
// forced language.
func TestUpdateKeepsLanguage(t *testing.T) {
	bg := sharedtest.Path(t, "data/mediawiki-xml-gensim/bgwiki-latest-pages-articles-shortened.xml.bz2")
	dir := t.TempDir()
	if _, err := Build(context.Background(), Options{Dir: dir, Inputs: []InputSpec{{Path: bg}}}); err != nil {
		t.Fatal(err)
	}
	opts := UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: bg}}, Build: BuildOptions{Language: "de"}}}
	if _, err := updateIndex(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("update forced to de on a bg index: %v", err)
	}
	opts.Build.Language = ""
	sum, err := updateIndex(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Language.Language != "bg" || sum.Language.Analyzer != "bg" {
		t.Errorf("update language %+v", sum.Language)
	}
}

// wikiDump writes a MediaWiki dump of the wiki db (dewiki, frwiki) with the given pages,
// numbered from 1 as every Wikipedia numbers its own.
func wikiDump(t *testing.T, dir, db string, texts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10"><siteinfo><dbname>` + db + `</dbname></siteinfo>`)
	for i, text := range texts {
		fmt.Fprintf(&b, `<page><title>P%d</title><ns>0</ns><id>%d</id><revision><timestamp>2020-01-0%dT00:00:00Z</timestamp><text>%s</text></revision></page>`, i+1, i+1, i+1, text)
	}
	b.WriteString(`</mediawiki>`)
	path := filepath.Join(dir, db+".xml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUpdateMultilingual: an update of a multilingual index keeps each input's language,
// replaces a changed page of one Wikipedia without touching the same page number of the
// other, and keeps the language counts and BM25 token count exact; another forced language
// is refused.
func TestUpdateMultilingual(t *testing.T) {
	src, dir := t.TempDir(), filepath.Join(t.TempDir(), "idx")
	de := wikiDump(t, src, "dewiki", "Die Häuser stehen am Fluss.", "Im Wald wachsen Bäume.")
	fr := wikiDump(t, src, "frwiki", "Les chevaux galopent.", "Les journaux du matin.")
	ctx := context.Background()
	if _, err := Build(ctx, Options{Dir: dir, Inputs: []InputSpec{{Path: de}, {Path: fr}}}); err != nil {
		t.Fatal(err)
	}
	fr = wikiDump(t, src, "frwiki", "Les chevaux galopent dans les prairies de Normandie.", "Les journaux du matin.")
	opts := UpdateOptions{Options: Options{Dir: dir, Inputs: []InputSpec{{Path: fr}}, Build: BuildOptions{Language: "fr"}}}
	if _, err := updateIndex(ctx, opts); err == nil || !strings.Contains(err.Error(), "multilingual") {
		t.Errorf("update forced to fr on a multilingual index: %v", err)
	}
	opts.Build.Language = ""
	sum, err := updateIndex(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Update.Changed != 1 || sum.Update.Unchanged != 1 || sum.Update.Added != 0 {
		t.Errorf("update: %+v, want fr:1 changed and fr:2 unchanged, nothing added", sum.Update)
	}
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	m := g.Manifest
	if !maps.Equal(m.Languages, map[string]int{"de": 2, "fr": 2}) || m.Counts.Passages != 4 {
		t.Errorf("languages %v, %d passages; want de 2, fr 2", m.Languages, m.Counts.Passages)
	}
	an, err := m.PassageAnalysis()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := liveTokens(t.Context(), g.Passages, an); err != nil || n != m.BM25.Tokens {
		t.Errorf("manifest tokens %d, recounted %d (%v)", m.BM25.Tokens, n, err)
	}
	langs := map[string]string{}
	if err := g.Passages.Each(t.Context(), func(_ uint32, p Passage) error { langs[p.DocID] = p.Language; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"de:1": "de", "de:2": "de", "fr:1": "fr", "fr:2": "fr"}; !maps.Equal(langs, want) {
		t.Errorf("live passages by document: %v, want %v", langs, want)
	}
}

// TestStreamInput: an input that can be read only once (a pipe here; standard input alike) is
// read by the build alone. Opened ahead to detect its language and again to hash it, it lost
// its first documents to them; now the build takes English and says why, stops at a document
// in another language, records the sum of the bytes it read, and refuses to resume a
// checkpoint of a stream, which it could not check.
func TestStreamInput(t *testing.T) {
	var english strings.Builder
	for i := range 3000 { // more than the 64 KiB that detection read ahead
		fmt.Fprintf(&english, `{"id":"%d","title":"T%d","text":"Squirrels climb trees number %d."}`+"\n", i, i, i)
	}
	mixed, err := os.ReadFile(sharedtest.Path(t, "data/wikimedia-enterprise/api-testdata/articles.ndjson")) // de, en, ru
	if err != nil {
		t.Fatal(err)
	}
	// pipe makes a named pipe in dir that carries data to its first reader.
	pipe := func(t *testing.T, dir, data string) string {
		fifo := filepath.Join(dir, "in.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.WriteString(data) // fails once a stopped build has closed its end
				f.Close()
			}
		}()
		return fifo
	}
	for _, tc := range []struct {
		name, data, format string
		docs               int
		errHas             []string
	}{
		{name: "english", data: english.String(), format: "jsonl", docs: 3000},
		{name: "three languages", data: string(mixed), format: "enterprise", errHas: []string{"is in de", "--language"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := pipe(t, dir, tc.data)
			sum, err := Build(t.Context(), Options{Dir: filepath.Join(dir, "ix"), Inputs: []InputSpec{{Path: fifo, Options: corpus.Options{Format: tc.format}}}})
			if tc.errHas != nil {
				wantRefusal(t, err, tc.errHas)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Counts.Documents != tc.docs || sum.Language.Language != "en" || !strings.Contains(sum.Language.From, "stream") {
				t.Errorf("built %d documents (want %d), language %+v", sum.Counts.Documents, tc.docs, sum.Language)
			}
			g := openForTest(t, filepath.Join(dir, "ix"))
			want := sha256.Sum256([]byte(tc.data))
			if in := g.Manifest.Inputs; len(in) != 1 || in[0].SHA256 != hex.EncodeToString(want[:]) || in[0].Size != int64(len(tc.data)) {
				t.Errorf("manifest inputs %+v, want the sum of the %d bytes piped", in, len(tc.data))
			}
		})
	}
	t.Run("resumed", func(t *testing.T) {
		dir := t.TempDir()
		stop := errors.New("stopped after a checkpoint")
		o := Options{Dir: filepath.Join(dir, "ix"), Inputs: []InputSpec{{Path: pipe(t, dir, english.String())}},
			Build: BuildOptions{BatchSize: 100}, CheckpointEvery: 500, CheckpointAfter: -1,
			faultAt: func(point string) error {
				if point == "checkpoint-recorded" {
					return stop
				}
				return nil
			}}
		if _, err := Build(t.Context(), o); !errors.Is(err, stop) {
			t.Fatalf("interrupted build: %v", err)
		}
		o.faultAt = nil
		_, err := resumeBuild(t.Context(), o)
		for _, s := range []string{"is a stream", "--force"} {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("resuming a stream's checkpoint: %v, want a refusal naming %q", err, s)
			}
		}
	})
}

// wantRefusal fails t unless err is a refusal naming every string of has.
func wantRefusal(t *testing.T, err error, has []string) {
	t.Helper()
	if err == nil {
		t.Fatal("built an index of mixed languages")
	}
	for _, s := range has {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}
