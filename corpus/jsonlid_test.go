package corpus

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestJSONLIDFields(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"id", `{"id":"a","_id":"b","text":"t"}`, "a"},
		{"_id", `{"_id":"b","docid":"c","text":"t"}`, "b"},
		{"docid", `{"docid":"D1","pid":"p","text":"t"}`, "D1"},
		{"doc_id", `{"doc_id":7,"pid":"p","text":"t"}`, "7"},
		{"pid (SQuAD)", `{"pid":"Super_Bowl_50#0","title":"Super Bowl 50","text":"t"}`, "Super_Bowl_50#0"},
		{"none: record number", `{"text":"t"}`, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newJSONReader(strings.NewReader(tt.line+"\n"), "ids.jsonl", "ids", convertJSONL(false))
			d, err := r.Next(context.Background())
			if err != nil || d.ID != tt.want {
				t.Fatalf("id %q (%v), want %q", d.ID, err, tt.want)
			}
		})
	}
}

// TestSQuADPassageIDs reads the shared SQuAD passages and checks every document keeps its pid.
func TestSQuADPassageIDs(t *testing.T) {
	path := "../../shared/data/squad-v1.1-dev/v1.1-passages.jsonl"
	if dir := os.Getenv("KAIROS_SHARED"); dir != "" {
		path = dir + "/data/squad-v1.1-dev/v1.1-passages.jsonl"
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			PID string `json:"pid"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, rec.PID)
	}
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, want := range pids {
		d, err := r.Next(context.Background())
		if err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		if d.ID != want {
			t.Fatalf("record %d: id %q, want pid %q", i+1, d.ID, want)
		}
	}
	if len(pids) < 100 {
		t.Fatalf("only %d passages read", len(pids))
	}
}
