package postings

import (
	"fmt"
	"testing"
)

// TestFull: a builder reports Full once its postings reach MaxPostings or its memory reaches
// RAMBudget, whichever comes first, and not before.
func TestFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts BuilderOptions
		// full says whether the builder must report Full after passage i (0-based) of 10
		// distinct new terms, given its MemoryBytes.
		full func(i int, mem int64) bool
	}{
		{"max-postings", BuilderOptions{MaxPostings: 100},
			func(i int, _ int64) bool { return (i+1)*10 >= 100 }},
		{"ram-budget", BuilderOptions{RAMBudget: MinRAMBudget, MaxPostings: 1 << 40},
			func(_ int, mem int64) bool { return mem >= MinRAMBudget }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBuilder(tempPath(t, "s.kpst"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Abort()
			for i := 0; i < 2000 && !b.Full(); i++ {
				terms := make([]string, 10)
				for j := range terms {
					terms[j] = fmt.Sprintf("t%d-%d", i, j)
				}
				if err := b.Add(uint32(i), terms); err != nil {
					t.Fatal(err)
				}
				if got, want := b.Full(), tc.full(i, b.MemoryBytes()); got != want {
					t.Fatalf("after passage %d (%d bytes): Full %v, want %v", i, b.MemoryBytes(), got, want)
				}
			}
			if !b.Full() {
				t.Fatal("the builder never became full")
			}
		})
	}
	if _, err := NewBuilder(tempPath(t, "s.kpst"), BuilderOptions{MaxPostings: -1}); err == nil {
		t.Fatal("a negative MaxPostings was accepted")
	}
}
