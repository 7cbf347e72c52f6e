package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/embed"
)

var tinyEncoder = filepath.Join("..", "..", "..", "shared", "models", "synthetic", "tiny-encoder")

func requireORTLib(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(embed.ResolveORTLib("")); err != nil {
		t.Fatalf("ONNX Runtime library missing: run make ort (%v)", err)
	}
}

func TestCmdEmbed(t *testing.T) {
	requireORTLib(t)
	in := strings.Join([]string{
		`{"id": "a", "text": "How old is the universe?"}`,
		`{"id": 7, "text": "   "}`,
		``,
		`{"_id": "beir-1", "text": "Microstructural development of human newborn cerebral white matter."}`,
		`{"id": "c", "text": "` + strings.Repeat("long text ", 300) + `"}`,
	}, "\n")
	out := filepath.Join(t.TempDir(), "vectors.jsonl")
	var stdout, stderr bytes.Buffer
	err := cmdEmbed(context.Background(), []string{"--model", tinyEncoder, "--backend", "ort", "--output", out, "--batch", "2"},
		IO{Stdin: strings.NewReader(in), Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Vector []float32       `json:"vector"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var n float64
		for _, x := range r.Vector {
			n += float64(x) * float64(x)
		}
		if len(r.Vector) != 64 || math.Abs(n-1) > 1e-4 {
			t.Errorf("id %s: dim %d, squared norm %.5f", r.ID, len(r.Vector), n)
		}
		ids = append(ids, string(r.ID))
	}
	if got := strings.Join(ids, ","); got != `"a","beir-1","c"` {
		t.Errorf("ids = %s", got)
	}
	for _, want := range []string{"backend ort", "embedded 3 texts", "texts/s", "tokens/s", "skipped 1 records", "stdin:2"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestCmdEmbedErrors(t *testing.T) {
	requireORTLib(t)
	for _, tc := range []struct {
		name, in string
		args     []string
		want     string
		usage    bool
	}{
		{"bad json names the line", "{\"id\":1,\"text\":\"ok\"}\n{oops", nil, "stdin:2", false},
		{"missing text", `{"id": 1}`, nil, `stdin:1: record needs "id" and "text"`, false},
		{"unknown backend", "", []string{"--backend", "gpu"}, "unknown backend", true},
		{"no model", "", []string{"--model", ""}, "need --model", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--model", tinyEncoder, "--backend", "ort"}, tc.args...)
			var stdout, stderr bytes.Buffer
			err := cmdEmbed(context.Background(), args, IO{Stdin: strings.NewReader(tc.in), Stdout: &stdout, Stderr: &stderr})
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrUsage) != tc.usage {
				t.Errorf("err = %v, want %q (usage %v)", err, tc.want, tc.usage)
			}
		})
	}
}
