package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// bench ivf reads the vectors bench ann dumped, builds the inverted file and measures it
// against the dump's exact neighbours: more lists probed find more of them, and a filter's
// recall is measured against the exact neighbours among the vectors it keeps.
func TestBenchIVF(t *testing.T) {
	data := filepath.Join(t.TempDir(), "dump")
	if _, errOut, err := runCLI(t, "bench", "ann", "--n", "4000", "--dim", "32", "--queries", "50", "--ef", "16", "--repeat", "1", "--dump", data); err != nil {
		t.Fatalf("bench ann --dump: %v\n%s", err, errOut)
	}
	out, errOut, err := runCLI(t, "bench", "ivf", "--data", data, "--probe", "1,128", "--filter-share", "0.02", "--repeat", "1", "--json")
	if err != nil {
		t.Fatalf("bench ivf: %v\n%s", err, errOut)
	}
	type row struct {
		Probe       int     `json:"probe"`
		Recall      float64 `json:"recall_at_10"`
		QPS         float64 `json:"qps"`
		N           int     `json:"n"`
		Lists       int     `json:"lists"`
		FilterShare float64 `json:"filter_share"`
	}
	var rows []row
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a row per probe and the filter's:\n%s", len(rows), out)
	}
	one, many, filtered := rows[0], rows[1], rows[2]
	if one.N != 4000 || one.Lists < 2 || one.QPS <= 0 {
		t.Errorf("row %+v: want 4000 vectors in several lists, a rate", one)
	}
	if many.Recall < 0.9 || one.Recall >= many.Recall {
		t.Errorf("recall@10 %.3f probing 1 list, %.3f probing 128: want more lists to find more, at least 0.9", one.Recall, many.Recall)
	}
	if filtered.FilterShare != 0.02 || filtered.Recall < 0.9 {
		t.Errorf("filtered row %+v: want the share 0.02 and recall of at least 0.9", filtered)
	}
}

// Its refusals name the flag that fixes them.
func TestBenchIVFRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--data"},
		{[]string{"--data", t.TempDir(), "--probe", "0"}, "--probe"},
		{[]string{"--data", t.TempDir(), "--filter-share", "1.5"}, "--filter-share"},
		{[]string{"--data", t.TempDir()}, "meta.json"},
	} {
		_, errOut, err := runCLI(t, append([]string{"bench", "ivf"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error()+errOut, tc.want) {
			t.Errorf("bench ivf %q: %v %s; want an error naming %s", tc.args, err, errOut, tc.want)
		}
	}
}
