package indexer

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckpointSpacing: a checkpoint needs both CheckpointEvery passages and CheckpointAfter
// of time since the last one, and the index is the same either way.
func TestCheckpointSpacing(t *testing.T) {
	input := scifactHead(t, 300)
	tests := []struct {
		name      string
		every     int
		after     time.Duration
		wantAtMin int // checkpoints, at least
		wantAtMax int // and at most
	}{
		{"count only", 200, -1, 3, 1 << 30},
		{"time not reached", 200, time.Hour, 0, 0},
		{"never", -1, -1, 0, 0},
	}
	var passages int
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: filepath.Join(t.TempDir(), "idx"), Inputs: []InputSpec{{Path: input}},
				Build: BuildOptions{BatchSize: 50}, CheckpointEvery: tc.every, CheckpointAfter: tc.after}
			sum, err := Build(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Checkpoints < tc.wantAtMin || sum.Checkpoints > tc.wantAtMax {
				t.Errorf("%d checkpoints, want %d to %d", sum.Checkpoints, tc.wantAtMin, tc.wantAtMax)
			}
			if passages == 0 {
				passages = sum.Counts.Passages
			} else if sum.Counts.Passages != passages {
				t.Errorf("%d passages, want %d as in the first build", sum.Counts.Passages, passages)
			}
		})
	}
	if passages < 600 {
		t.Fatalf("%d passages: too few for the count-only case to checkpoint 3 times", passages)
	}
}

// TestDenseCheckpointsByTime: a build with an encoder checkpoints every CheckpointAfter
// whatever the count (a count it would never reach here), while a BM25 build with the same
// options waits for the count; both give the same passages, and the dense one its vectors.
func TestDenseCheckpointsByTime(t *testing.T) {
	input := scifactHead(t, 300)
	for _, tc := range []struct {
		name    string
		encoder PassageEncoder
		want    func(int) bool
	}{
		{"dense", &countingEncoder{dim: 32}, func(n int) bool { return n >= 3 }},
		{"bm25", nil, func(n int) bool { return n == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: filepath.Join(t.TempDir(), "idx"), Inputs: []InputSpec{{Path: input}}, EmbedInline: true, Encoder: tc.encoder,
				Build: BuildOptions{BatchSize: 50}, CheckpointEvery: 1 << 30, CheckpointAfter: time.Nanosecond}
			sum, err := Build(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(sum.Checkpoints) {
				t.Errorf("%d checkpoints", sum.Checkpoints)
			}
			if tc.encoder != nil && (sum.Dense == nil || sum.Dense.Vectors != sum.Counts.Passages) {
				t.Errorf("dense %+v for %d passages", sum.Dense, sum.Counts.Passages)
			}
		})
	}
}
