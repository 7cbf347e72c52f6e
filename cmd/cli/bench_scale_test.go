package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestBenchScaleUsage checks the subcommand's wiring: every mistake in its flags (parsed by
// scalebench.Options.Flags, judged by Validate) is a usage error, before anything runs.
func TestBenchScaleUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"nothing to measure", nil},
		{"both sources", []string{"--passages", "10", "--input", "x.jsonl"}},
		{"zero size", []string{"--passages", "0"}},
		{"bad size", []string{"--passages", "10,ten"}},
		{"no queries", []string{"--passages", "10", "--queries", "0"}},
		{"bad xapian", []string{"--passages", "10", "--xapian", "maybe"}},
		{"bad lucene", []string{"--passages", "10", "--lucene", "yes"}},
		{"stray argument", []string{"--passages", "10", "extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := cmdBenchScale(context.Background(), tc.args, IO{Stdout: &out, Stderr: &errOut})
			if !errors.Is(err, ErrUsage) {
				t.Errorf("err %v, want a usage error", err)
			}
		})
	}
}
