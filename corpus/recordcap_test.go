package corpus

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordCap generates, for every format, an input whose second record is over a small
// cap, reads it through Open with that cap, and checks the error names the file, the
// record's position and the cap; readers that can resume go on to the third record.
func TestRecordCap(t *testing.T) {
	const max = 200
	big := strings.Repeat("x", 3*max)
	tests := []struct {
		name, file, input string
		format            string
		pos               string // the position in the error
		resumes           bool   // a bad record (*RecordError): the reader goes on
		after             string // what the next Next gives: "doc" (the third record), "eof", "fatal"
	}{
		{"jsonl", "c.jsonl", `{"_id":"1","text":"one"}` + "\n" + `{"_id":"2","text":"` + big + `"}` + "\n" + `{"_id":"3","text":"three"}` + "\n",
			"", "line 2", true, "doc"},
		{"jsonl long last line", "c.jsonl", `{"_id":"1","text":"one"}` + "\n" + `{"_id":"2","text":"` + big + `"}`,
			"", "line 2", true, "eof"},
		{"json array", "c.json", `[{"_id":"1","text":"one"},{"_id":"2","text":"` + big + `"},{"_id":"3","text":"three"}]`,
			FormatJSONL, "record 2 (byte 26)", true, "doc"},
		{"json array, never-ending record", "c.json", `[{"_id":"1","text":"one"},{"_id":"2","text":"` + strings.Repeat(big, 200),
			FormatJSONL, "record 2 (byte 25)", false, "fatal"},
		{"faq jsonl", "f.jsonl", `{"question":"q1","answer":"a1"}` + "\n" + `{"question":"q2","answer":"` + big + `"}` + "\n" + `{"question":"three","answer":"a3"}` + "\n",
			"", "line 2", true, "doc"},
		{"faq csv", "f.csv", "question,answer\nq1,a1\nq2," + big + "\nthree,a3\n", "", "row 2 (line 3)", true, "doc"},
		{"faq csv, never-ending quoted field", "f.csv", "question,answer\nq1,a1\nq2,\"" + strings.Repeat(big, 200), "", "row 2 (byte 22)", false, "fatal"},
		{"enterprise", "e.ndjson", `{"name":"One","identifier":1,"article_body":{"wikitext":"one"}}` + "\n" +
			`{"name":"Two","identifier":2,"article_body":{"wikitext":"` + big + `"}}` + "\n" +
			`{"name":"Three","identifier":3,"article_body":{"wikitext":"three"}}` + "\n", FormatEnterprise, "line 2", true, "doc"},
		{"mediawiki", "m.xml", "<mediawiki>\n<page><title>One</title><ns>0</ns><id>1</id><revision><text>one</text></revision></page>\n" +
			"<page><title>Two</title><ns>0</ns><id>2</id><revision><text>" + big + "</text></revision></page>\n" +
			"<page><title>Three</title><ns>0</ns><id>3</id><revision><text>three</text></revision></page>\n</mediawiki>\n",
			"", "page 2 (line 3)", true, "doc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.input), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(context.Background(), path, Options{Format: tt.format, MaxRecordBytes: max})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			if _, err := r.Next(ctx); err != nil {
				t.Fatalf("first record: %v", err)
			}
			_, err = r.Next(ctx)
			want := path + ": " + tt.pos + ": record larger than the cap of 200 bytes (MaxRecordBytes; kairos index --max-record-bytes)"
			if err == nil || err.Error() != want {
				t.Fatalf("oversized record:\n got %v\nwant %s", err, want)
			}
			if IsRecordError(err) != tt.resumes {
				t.Errorf("IsRecordError = %v, want %v (resumable)", IsRecordError(err), tt.resumes)
			}
			d, err := r.Next(ctx)
			switch tt.after {
			case "doc":
				if err != nil || !strings.Contains(d.Title+d.Sections[0].Text, "hree") {
					t.Errorf("after the oversized record: %+v %v", d, err)
				}
			case "eof":
				if err != io.EOF {
					t.Errorf("after the oversized last record: %v, want EOF", err)
				}
			case "fatal":
				if err == nil || errors.Is(err, io.EOF) {
					t.Errorf("a reader that cannot resume went on: %v", err)
				}
			}
			if st := r.Stats(); tt.resumes && st.Bad != 1 {
				t.Errorf("Stats().Bad = %d, want 1", st.Bad)
			}
		})
	}
}
