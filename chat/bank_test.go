package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/internal/sharedtest"
)

var topicalDir = sharedtest.Join("data/topical-chat")

func TestDeriveTopicalChatAndBankRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	st, err := DeriveTopicalChat(context.Background(), topicalDir, &buf, TopicalChatOptions{Splits: []string{"test_freq"}, Max: 300})
	if err != nil {
		t.Fatal(err)
	}
	if st.Examples != 300 {
		t.Fatalf("derived %d examples, want 300 (stats %+v)", st.Examples, st)
	}
	if st.Skipped["first turn"] == 0 || st.Skipped["not grounded in a reading-set entity"] == 0 {
		t.Errorf("skip reasons not counted: %+v", st.Skipped)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 300 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		var e Example
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if e.Topic == "" || e.Knowledge == "" || e.Response == "" || len(e.History) == 0 || len(e.History) > 3 {
			t.Fatalf("line %d: incomplete example %+v", i+1, e)
		}
	}

	// A bad line and an empty response are skipped with their positions, the rest is built.
	input := buf.String() + "{not json\n" + `{"topic":"x","history":["hi"],"response":"  "}` + "\n"
	bank, bst, err := BuildBank(context.Background(), strings.NewReader(input), "derived.jsonl", HashEncoder{}, BankBuildOptions{Encoder: "hash-256", BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	if bst.Examples != 300 || len(bst.Skipped) != 2 || !strings.HasPrefix(bst.Skipped[0], "derived.jsonl:301:") || !strings.Contains(bst.Skipped[1], "derived.jsonl:302: empty response") {
		t.Errorf("build stats %+v", bst)
	}
	path := filepath.Join(t.TempDir(), "bank.jsonl")
	if err := bank.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBank(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Examples, bank.Examples) || !reflect.DeepEqual(got.Vectors, bank.Vectors) || got.Header != bank.Header {
		t.Error("bank changed in a write/read round trip")
	}
	// The nearest example to an example's own context is itself.
	q, _ := HashEncoder{}.Encode(context.Background(), []string{ContextText(got.Examples[42].Topic, got.Examples[42].History)})
	top, err := got.TopN(q[0], 1, nil)
	if err != nil || got.Vectors[top[0].Index] == nil || top[0].Score < 0.999 {
		t.Errorf("top-1 of example 42's own context: %+v %v", top, err)
	}
	if _, err := got.TopN([]float32{1, 2}, 1, nil); err == nil {
		t.Error("wrong query dimension accepted")
	}
}

func TestReadBankRejectsDamage(t *testing.T) {
	bank, _, err := BuildBank(context.Background(), strings.NewReader(`{"topic":"Cats","history":["do you like cats"],"response":"I love cats"}`+"\n"), "one.jsonl", HashEncoder{Dim: 8}, BankBuildOptions{Encoder: "hash-8"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := bank.WriteFile(good); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	nl := bytes.IndexByte(raw, '\n')
	tests := map[string]struct {
		data []byte
		want string
	}{
		"flipped byte":  {append(append([]byte{}, raw[:len(raw)-5]...), 'X', raw[len(raw)-4], raw[len(raw)-3], raw[len(raw)-2], raw[len(raw)-1]), "checksum"},
		"truncated":     {raw[:len(raw)-10], "checksum"},
		"other version": {bytes.Replace(raw, []byte(`"version":1`), []byte(`"version":9`), 1), "version 9"},
		"not a bank":    {[]byte("{\"format\":\"other\"}\n"), "format"},
		"no header":     {[]byte("x"), "line 1"},
		"bad header":    {append([]byte("{oops\n"), raw[nl+1:]...), "line 1"},
	}
	for name, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBank(p); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v, want one naming the file and %q", name, err, tt.want)
		}
	}
}

func FuzzReadBank(f *testing.F) {
	bank, _, _ := BuildBank(context.Background(), strings.NewReader(`{"topic":"a","history":["b"],"response":"c"}`+"\n"), "f", HashEncoder{Dim: 4}, BankBuildOptions{Encoder: "h"})
	dir := f.TempDir()
	p := filepath.Join(dir, "seed")
	_ = bank.WriteFile(p)
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "b")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := ReadBank(p)
		if err != nil {
			return
		}
		if len(b.Examples) != b.Header.Count || len(b.Vectors) != len(b.Examples) {
			t.Errorf("inconsistent bank accepted")
		}
	})
}
