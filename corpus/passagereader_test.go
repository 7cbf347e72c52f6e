package corpus

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPassageReader: documents come back in order with their passages, a malformed record in
// its place as a *RecordError, the documents Want refuses without passages, and the stats
// of the end are the Reader's.
func TestPassageReader(t *testing.T) {
	var lines []string
	for i := range 40 {
		if i == 17 {
			lines = append(lines, `{"id": "bad", "title": `) // malformed
			continue
		}
		lines = append(lines, `{"id":"d`+itoa(i)+`","title":"T`+itoa(i)+`","text":"`+strings.Repeat("word ", 50*(i%4+1))+`"}`)
	}
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	split, err := NewSplitter(SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		ctx := context.Background()
		r, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pr := NewPassageReader(ctx, r, split, PassageReaderOptions{Workers: workers, Want: func(n int, d *Document) bool { return n > 5 }})
		var ids []string
		bad := 0
		for {
			d, ps, err := pr.Next(ctx)
			if err == io.EOF {
				break
			}
			if IsRecordError(err) {
				bad++
				if len(ids) != 17 {
					t.Errorf("record error after %d documents, want 17", len(ids))
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
			want := split.Split(d)
			if len(ids) <= 5 {
				want = nil
			}
			if len(ps) != len(want) {
				t.Errorf("%s: %d passages, want %d", d.ID, len(ps), len(want))
			}
		}
		st := pr.Stats()
		pr.Close()
		r.Close()
		if len(ids) != 39 || bad != 1 || st.Documents != 39 || st.Bad != 1 {
			t.Errorf("workers %d: %d documents, %d bad; stats %+v", workers, len(ids), bad, st)
		}
		for i, id := range ids {
			n := i
			if i >= 17 {
				n++
			}
			if id != "d"+itoa(n) {
				t.Fatalf("workers %d: document %d is %s, want d%d", workers, i, id, n)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
