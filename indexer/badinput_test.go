package indexer

import (
	"bytes"
	"compress/bzip2"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
)

// TestBadInputsKeepLiveIndex runs the bad inputs of issue 18 against a live index with
// SkipBad on: a truncated dump is fatal (the live generation untouched); an oversized record
// is a counted bad record, never silently dropped or buffered whole.
func TestBadInputsKeepLiveIndex(t *testing.T) {
	fx := faultFixture(t)
	starts := faultStarts(t, fx)
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f, err := os.Open(shared(t, "data/mediawiki-xml-gensim/testcorpus.xml.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	xml, err := io.ReadAll(bzip2.NewReader(f))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	third := 0
	for range 3 {
		third += 1 + bytes.Index(xml[third+1:], []byte("<page>"))
	}
	truncated := write("cut.xml", xml[:third+50])
	big := strings.Repeat("y", 5000)
	oversized := write("big.jsonl", []byte(`{"_id":"a","text":"alpha words"}`+"\n"+`{"_id":"b","text":"`+big+`"}`+"\n"+`{"_id":"c","text":"gamma words"}`+"\n"))
	tests := []struct {
		name    string
		input   InputSpec
		wantErr string // "" : the build succeeds
		bad     int
	}{
		{"truncated plain XML with skip-bad", InputSpec{Path: truncated}, truncated + ": truncated input: end of file inside page 3", 0},
		{"oversized JSONL record with skip-bad", InputSpec{Path: oversized, Options: corpus.Options{MaxRecordBytes: 1000}}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			copyTree(t, starts["older"], dir)
			live := mustCurrent(t, dir)
			want := livePassages(t, dir)
			o := fx.options(dir, "", nil)
			o.Inputs, o.SkipBad = []InputSpec{tt.input}, true
			sum, err := Build(context.Background(), o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if cur := mustCurrent(t, dir); cur != live || !reflect.DeepEqual(livePassages(t, dir), want) {
					t.Fatalf("the live generation changed: %s -> %s", live, cur)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Counts.Bad != tt.bad || sum.Counts.Documents != 2 || len(sum.BadRecords) != 1 ||
				!strings.Contains(sum.BadRecords[0], "line 2: record larger than the cap of 1000 bytes") {
				t.Errorf("counts %+v, bad records %q: want 2 documents and line 2 reported over the cap", sum.Counts, sum.BadRecords)
			}
		})
	}
}
