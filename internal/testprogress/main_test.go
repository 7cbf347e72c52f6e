package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		events string
		tally  tally
		failed bool
		want   []string // in the report, in order
		not    []string
	}{
		{
			name: "passing package",
			events: `{"Action":"start","Package":"k/a"}
{"Action":"run","Package":"k/a","Test":"TestX"}
{"Action":"output","Package":"k/a","Test":"TestX","Output":"noise\n"}
{"Action":"pass","Package":"k/a","Test":"TestX","Elapsed":0.1}
{"Action":"skip","Package":"k/a","Test":"TestY"}
{"Action":"pass","Package":"k/a","Elapsed":1.25}`,
			tally: tally{passed: 1, skipped: 1},
			want:  []string{"run   k/a\n", "ok    k/a\t1.2s\n", "1 passed, 0 failed, 1 skipped\n", "skipped (checks that did not run):\n  k/a TestY\n"},
			not:   []string{"noise"},
		},
		{
			name: "skipped tests are named with their reasons",
			events: `{"Action":"start","Package":"k/q"}
{"Action":"run","Package":"k/q","Test":"TestQdrant"}
{"Action":"output","Package":"k/q","Test":"TestQdrant","Output":"=== RUN   TestQdrant\n"}
{"Action":"output","Package":"k/q","Test":"TestQdrant","Output":"    q_test.go:20: no qdrant server binary (make qdrant)\n"}
{"Action":"output","Package":"k/q","Test":"TestQdrant","Output":"--- SKIP: TestQdrant (0.00s)\n"}
{"Action":"skip","Package":"k/q","Test":"TestQdrant","Elapsed":0}
{"Action":"output","Package":"k/q","Test":"TestGPU/cuda","Output":"    gpu_test.go:9: no CUDA device\n"}
{"Action":"skip","Package":"k/q","Test":"TestGPU/cuda","Elapsed":0}
{"Action":"pass","Package":"k/q","Test":"TestGPU","Elapsed":0}
{"Action":"pass","Package":"k/q","Elapsed":0.5}`,
			tally: tally{passed: 1, skipped: 2},
			want: []string{"1 passed, 0 failed, 2 skipped\n", "skipped (checks that did not run):\n",
				"  k/q TestGPU/cuda: gpu_test.go:9: no CUDA device\n", "  k/q TestQdrant: q_test.go:20: no qdrant server binary (make qdrant)\n"},
			not: []string{"=== RUN", "--- SKIP"},
		},
		{
			name: "nothing skipped, no list",
			events: `{"Action":"start","Package":"k/e"}
{"Action":"pass","Package":"k/e","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"k/e","Elapsed":0.1}`,
			tally: tally{passed: 1},
			want:  []string{"1 passed, 0 failed, 0 skipped\n"},
			not:   []string{"skipped ("},
		},
		{
			name: "failing test shows its output",
			events: `{"Action":"start","Package":"k/b"}
{"Action":"output","Package":"k/b","Test":"TestZ","Output":"    b_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"k/b","Test":"TestZ","Elapsed":0.1}
{"Action":"fail","Package":"k/b","Elapsed":0.3}`,
			tally:  tally{failed: 1},
			failed: true,
			want:   []string{"--- FAIL: TestZ (k/b)\n    b_test.go:9: got 1, want 2\n", "FAIL  k/b\t0.3s\n"},
		},
		{
			name: "build failure",
			events: `{"ImportPath":"k/c","Action":"build-output","Output":"c.go:3:1: syntax error\n"}
{"ImportPath":"k/c","Action":"build-fail"}
{"Action":"start","Package":"k/c"}
{"Action":"output","Package":"k/c","Output":"FAIL\tk/c [build failed]\n"}
{"Action":"fail","Package":"k/c","Elapsed":0}`,
			failed: true,
			want:   []string{"c.go:3:1: syntax error\n", "FAIL\tk/c [build failed]\n"},
		},
		{
			name: "the longest top-level tests, ten at most",
			events: `{"Action":"start","Package":"k/l"}
{"Action":"pass","Package":"k/l","Test":"TestA","Elapsed":3}
{"Action":"pass","Package":"k/l","Test":"TestB","Elapsed":40.5}
{"Action":"pass","Package":"k/l","Test":"TestB/sub","Elapsed":40}
{"Action":"fail","Package":"k/l","Test":"TestC","Elapsed":7}
{"Action":"pass","Package":"k/l","Test":"TestD","Elapsed":0.2}
{"Action":"pass","Package":"k/l","Test":"T1","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T2","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T3","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T4","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T5","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T6","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T7","Elapsed":2}
{"Action":"pass","Package":"k/l","Test":"T8","Elapsed":1.5}
{"Action":"fail","Package":"k/l","Elapsed":99}`,
			tally:  tally{passed: 12, failed: 1},
			failed: true,
			want: []string{"longest tests:\n    40.5s k/l TestB\n     7.0s k/l TestC\n     3.0s k/l TestA\n     2.0s k/l T1\n",
				"     2.0s k/l T7\n"},
			not: []string{"TestB/sub", "TestD", "T8"},
		},
		{
			name: "killed package",
			events: `{"Action":"start","Package":"k/d"}
{"Action":"run","Package":"k/d","Test":"TestSlow"}`,
			failed: true,
			want:   []string{"FAIL  k/d\tdid not finish\n"},
		},
		{
			name:   "plain text passes through",
			events: "go: downloading example.com/m v1.0.0",
			want:   []string{"go: downloading example.com/m v1.0.0\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			got, failed, err := run(strings.NewReader(tc.events), &out)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.tally || failed != tc.failed {
				t.Errorf("tally %+v failed %v, want %+v %v", got, failed, tc.tally, tc.failed)
			}
			rest := out.String()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("report has %q:\n%s", n, out.String())
				}
			}
		})
	}
}
