package corpus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// drain reads r to the end, collecting documents and record errors; a fatal error stops it.
func drain(t testing.TB, r Reader) (docs []Document, recErrs []string, fatal error) {
	t.Helper()
	ctx := context.Background()
	for {
		d, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return docs, recErrs, nil
		}
		if err != nil {
			if !IsRecordError(err) {
				return docs, recErrs, err
			}
			recErrs = append(recErrs, err.Error())
			continue
		}
		docs = append(docs, d)
	}
}

// readData writes data to a file named name, opens it with opts and drains it (drain); path
// is the file's, which its errors name.
func readData(t testing.TB, name, data string, opts Options) (path string, docs []Document, recErrs []string, fatal error) {
	t.Helper()
	path = writeTemp(t, name, []byte(data))
	r, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs, recErrs, fatal = drain(t, r)
	return path, docs, recErrs, fatal
}

// fuzzDrain drains a reader of fuzzed JSON records and checks that its stats count what it
// returned and that every document has an id and a title.
func fuzzDrain(t *testing.T, r *jsonReader) {
	t.Helper()
	docs, recErrs, _ := drain(t, r)
	if st := r.Stats(); st.Documents != len(docs) || st.Bad != len(recErrs) {
		t.Fatalf("stats %+v for %d docs, %d errors", st, len(docs), len(recErrs))
	}
	for _, d := range docs {
		if d.ID == "" || d.Title == "" || isEmpty(d) {
			t.Fatalf("bad document %+v", d)
		}
	}
}

// writeTemp writes data to a file named name in a fresh directory and returns its path.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJSONLReader(t *testing.T) {
	input := strings.Join([]string{
		`{"_id": "a1", "title": "First", "text": "Alpha text.", "metadata": {}}`,
		``,
		`{"id": 42, "title": "Num id", "text": "Beta.", "url": "https://x/42", "date": "2021-03-04"}`,
		`{"title": "No id", "text": "Gamma.", "date": "2021-03-04T05:06:07+02:00"}`,
		`{"_id": "e", "title": "Empty", "text": "   "}`,
		"{\"_id\": \"u\", \"title\": \"Bad \xff UTF-8\", \"text\": \"Delta \xfe.\"}",
		`garbage`,
	}, "\n")
	path := writeTemp(t, "mixed.jsonl", []byte(input))
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, recErrs, fatal := drain(t, r)
	if fatal != nil {
		t.Fatal(fatal)
	}
	if len(docs) != 4 {
		t.Fatalf("%d docs: %+v", len(docs), docs)
	}
	want := []struct {
		id, title, url, text string
		date                 time.Time
	}{
		{"a1", "First", "", "Alpha text.", time.Time{}},
		{"42", "Num id", "https://x/42", "Beta.", time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)},
		{"3", "No id", "", "Gamma.", time.Date(2021, 3, 4, 3, 6, 7, 0, time.UTC)},
		{"u", "Bad \uFFFD UTF-8", "", "Delta \uFFFD.", time.Time{}},
	}
	for i, w := range want {
		d := docs[i]
		if d.ID != w.id || d.Title != w.title || d.URL != w.url || d.Sections[0].Text != w.text || !d.Date.Equal(w.date) || d.Source != "mixed" {
			t.Errorf("doc %d: %+v, want %+v", i, d, w)
		}
	}
	wantErr := path + ": line 7: invalid character 'g' looking for beginning of value"
	if len(recErrs) != 1 || recErrs[0] != wantErr {
		t.Errorf("record errors %q, want %q", recErrs, wantErr)
	}
	st := r.Stats()
	if st.Documents != 4 || st.Skipped[SkipEmpty] != 1 || st.Bad != 1 || st.Repaired != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestJSONLBadInput checks the exact error of each kind of malformed line, and that the
// reader goes on with the next line.
func TestJSONLBadInput(t *testing.T) {
	tests := []struct {
		line, wantErr string
	}{
		{`{"_id": "1", "title": "T", "text": "x"`, "line 2: unexpected end of JSON input"},
		{`{"_id": "1", "title": "T", "txt": "x"}`, `line 2: missing "text" field`},
		{`{"_id": "1", "title": 5, "text": "x"}`, `line 2: field "title": JSON number where a string was expected`},
		{`{"_id": {"a": 1}, "title": "T", "text": "x"}`, `line 2: id must be a string or a number, not {"a": 1}`},
		{`{"_id": "1", "title": "T", "text": "x", "date": "March 2020"}`, `line 2: date "March 2020" is neither RFC 3339 nor YYYY-MM-DD`},
		{`[1, 2]`, "line 2: record is a JSON array, not an object"},
		{`{"_id": "1", "text": "x", "block_type": "list"}`, `line 2: block_type "list": want "text", "table" or "infobox"`},
	}
	for _, tc := range tests {
		input := `{"_id": "ok1", "title": "A", "text": "a"}` + "\n" + tc.line + "\n" + `{"_id": "ok2", "title": "B", "text": "b"}` + "\n"
		path := writeTemp(t, "bad.jsonl", []byte(input))
		r, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		docs, recErrs, fatal := drain(t, r)
		if fatal != nil || len(docs) != 2 || docs[1].ID != "ok2" {
			t.Errorf("%s: docs %d, fatal %v", tc.line, len(docs), fatal)
		}
		if want := path + ": " + tc.wantErr; len(recErrs) != 1 || recErrs[0] != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.line, recErrs, want)
		}
		if st := r.Stats(); st.Bad != 1 || st.Documents != 2 {
			t.Errorf("%s: stats %+v", tc.line, st)
		}
	}
}

// TestJSONLBlockType: "block_type" reaches the sections, "text" and absent alike as prose.
func TestJSONLBlockType(t *testing.T) {
	input := `{"_id": "1", "text": "a", "block_type": "table"}
{"_id": "2", "text": "b", "block_type": "infobox"}
{"_id": "3", "text": "c", "block_type": "text"}
{"_id": "4", "text": "d"}
`
	docs, recErrs, fatal := drain(t, newJSONReader(strings.NewReader(input), "b.jsonl", "b", convertJSONL(false)))
	if fatal != nil || len(recErrs) != 0 || len(docs) != 4 {
		t.Fatalf("docs %d, errors %v, fatal %v", len(docs), recErrs, fatal)
	}
	for i, want := range []string{"table", "infobox", "", ""} {
		if got := docs[i].Sections[0].Block; got != want {
			t.Errorf("doc %s: block %q, want %q", docs[i].ID, got, want)
		}
	}
}

// TestJSONLHugeLine reads a 6 MB single-line record between two small ones.
func TestJSONLHugeLine(t *testing.T) {
	big := strings.Repeat("word ", 1_200_000)
	input := `{"_id":"s1","title":"S","text":"small"}` + "\n" +
		`{"_id":"big","title":"Big","text":"` + big + `"}` + "\n" +
		`{"_id":"s2","title":"S","text":"small"}` // no final newline
	r := newJSONReader(strings.NewReader(input), "huge.jsonl", "huge", convertJSONL(false))
	docs, recErrs, fatal := drain(t, r)
	if fatal != nil || len(recErrs) != 0 || len(docs) != 3 {
		t.Fatalf("docs %d, errors %v, fatal %v", len(docs), recErrs, fatal)
	}
	if n := len(strings.Fields(docs[1].Sections[0].Text)); n != 1_200_000 || docs[2].ID != "s2" {
		t.Errorf("big doc has %d words; last id %q", n, docs[2].ID)
	}
}

func TestWikiExtractor(t *testing.T) {
	input := `{"id": "12", "revid": "1", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism", "text": "Anarchism\nAnarchism is a political philosophy.\nIt is anti-authoritarian.\n\nHistory.\nOld."}`
	path := writeTemp(t, "wiki_00.json", []byte(input+"\n"))
	docs, st := readPath(t, path, Options{})
	if len(docs) != 1 || st.Documents != 1 {
		t.Fatalf("%d docs", len(docs))
	}
	d := docs[0]
	want := "Anarchism is a political philosophy.\n\nIt is anti-authoritarian.\n\nHistory.\n\nOld."
	if d.ID != "12" || d.Title != "Anarchism" || d.URL != "https://en.wikipedia.org/wiki?curid=12" || d.Sections[0].Text != want {
		t.Errorf("got %+v", d)
	}
}

func TestJSONArrayFatalSyntaxError(t *testing.T) {
	input := `[{"_id": "1", "title": "A", "text": "a"},` + "\n" + `{"_id": "2", "title": "B", "text": }]`
	r := newJSONReader(strings.NewReader(input), "arr.json", "arr", convertJSONL(false))
	docs, _, fatal := drain(t, r)
	if len(docs) != 1 || fatal == nil || fatal.Error() != "arr.json: record 2 (byte 40): invalid character '}' looking for beginning of value" {
		t.Errorf("docs %d, fatal %v", len(docs), fatal)
	}
}

func TestJSONReaderContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := newJSONReader(strings.NewReader(`{"_id":"1","text":"a"}`), "c.jsonl", "c", convertJSONL(false))
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"_id": "1", "title": "T", "text": "x. Y."}` + "\n" + `{"id": 2, "text": "y", "date": "2020-01-02"}`))
	f.Add([]byte(`[{"_id": "1", "text": "x"}, {"_id": 2}]`))
	f.Add([]byte("[\n{\"_id\": \"1\", \"text\": \"x\"},\n{\"_id\": 2, \"text\": \"y\"}")) // no ']'
	f.Add([]byte(`[{"_id": "1", "text": "x"}] {"_id": 2}`))
	f.Add([]byte("{\"_id\": \"1\", \"text\": \"x\"\n{\"_id\": \"2\", \"text\": \"y\"}\n")) // bad first line
	f.Add([]byte("{\n \"_id\": \"1\",\n \"text\": \"x\"\n}\n{\"_id\":\"2\",\"text\":\"y\"}"))
	f.Add([]byte("\xff\xfe{\"_id\": \"\xc3\x28\", \"text\": \"\xff\"}\n\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newJSONReader(bytes.NewReader(data), "f.jsonl", "f", convertJSONL(false))
		docs, recErrs, _ := drain(t, r)
		st := r.Stats()
		if st.Documents != len(docs) || st.Bad != len(recErrs) {
			t.Fatalf("stats %+v for %d docs, %d errors", st, len(docs), len(recErrs))
		}
		for _, d := range docs {
			if d.ID == "" || isEmpty(d) {
				t.Fatalf("bad document %+v", d)
			}
			for _, e := range recErrs {
				if !strings.HasPrefix(e, "f.jsonl: ") {
					t.Fatalf("error without file: %q", e)
				}
			}
		}
	})
}

// TestJSONLLeadingBlankLines: more blank lines before the first record than the reader's
// buffer holds used to fail with "bufio: buffer full" and no position. The records are read,
// and the line numbers of errors still count the blank lines.
func TestJSONLLeadingBlankLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		blank string
		lines int
	}{
		{"100k newlines", strings.Repeat("\n", 100_000), 100_000},
		{"100k CRLF and spaces", strings.Repeat(" \r\n", 50_000), 50_000},
		{"one 100k line of spaces", strings.Repeat(" ", 100_000) + "\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := tc.blank + `{"_id":"a","title":"A","text":"alpha"}` + "\n" + `{"_id":"b","title":"B"}` + "\n"
			r := newJSONReader(strings.NewReader(input), "blank.jsonl", "blank", convertJSONL(false))
			docs, recErrs, fatal := drain(t, r)
			if fatal != nil || len(docs) != 1 || docs[0].ID != "a" {
				t.Fatalf("docs %d, fatal %v", len(docs), fatal)
			}
			want := "blank.jsonl: line " + strconv.Itoa(tc.lines+2) + `: missing "text" field`
			if len(recErrs) != 1 || recErrs[0] != want {
				t.Errorf("errors %q, want %q", recErrs, want)
			}
		})
	}
}

// TestJSONLBadFirstLine reads a JSON lines file whose first line is broken as JSON lines: the
// broken "{" line was taken for the start of pretty-printed JSON, and the whole file failed
// with a syntax error at byte 0. Pretty-printed values are still read as such.
func TestJSONLBadFirstLine(t *testing.T) {
	const l2, l3 = `{"_id": "2", "text": "y"}`, `{"_id": "3", "text": "z"}`
	tests := []struct {
		name, data string
		ids        []string
		errs       []string // record errors, after "path: "
		fatal      string   // after "path: "
	}{
		{"unclosed first line", `{"_id": "1", "text": "x"` + "\n" + l2 + "\n" + l3 + "\n", []string{"2", "3"},
			[]string{"line 1: unexpected end of JSON input"}, ""},
		{"trailing comma", `{"_id": "1", "text": "x",}` + "\n\n" + l2 + "\n", []string{"2"},
			[]string{"line 1: invalid character '}' looking for beginning of object key string"}, ""},
		{"garbage", "{bad\n" + l2 + "\n", []string{"2"},
			[]string{"line 1: invalid character 'b' looking for beginning of object key string"}, ""},
		{"pretty-printed", "{\n \"_id\": \"1\",\n \"text\": \"x\"\n}\n" + l2, []string{"1", "2"}, nil, ""},
		{"pretty-printed, broken", "{\n \"_id\": \"1\",\n \"text\" \"x\"\n}\n" + l2, nil, nil,
			"record 1 (byte 0): invalid character '\"' after object key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, docs, recErrs, fatal := readData(t, "a.jsonl", tt.data, Options{})
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			var errs []string
			for _, e := range tt.errs {
				errs = append(errs, path+": "+e)
			}
			if strings.Join(ids, ",") != strings.Join(tt.ids, ",") || strings.Join(recErrs, "\n") != strings.Join(errs, "\n") {
				t.Errorf("ids %q, errors %q\nwant ids %q, errors %q", ids, recErrs, tt.ids, errs)
			}
			if (fatal == nil) != (tt.fatal == "") || fatal != nil && fatal.Error() != path+": "+tt.fatal {
				t.Errorf("fatal %v, want %q", fatal, tt.fatal)
			}
		})
	}
}
