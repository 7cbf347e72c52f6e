package memlimit

import (
	"context"
	"flag"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	o := Options{Floor: 100, Headroom: 0.25}
	tests := []struct {
		live uint64
		want int64
	}{
		{0, 100},
		{79, 100},
		{80, 100},
		{400, 500},
		{1 << 40, 5 << 38},
		{math.MaxUint64, math.MaxInt64},
	}
	for _, tc := range tests {
		if got := o.Limit(tc.live); got != tc.want {
			t.Errorf("Limit(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Floor: -1}, {Headroom: -0.5}, {Every: -time.Second}} {
		if err := o.setDefaults(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	var o Options
	if err := o.setDefaults(); err != nil || o.Floor != DefaultFloor || o.Headroom != DefaultHeadroom || o.Every != DefaultEvery {
		t.Errorf("defaults: %+v, %v", o, err)
	}
}

// TestKeepFollowsTheLiveHeap holds a live heap above the floor and checks that the limit
// moves to it plus the headroom while Keep runs, and back to the previous limit after.
func TestKeepFollowsTheLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	o := Options{Floor: 16 << 20, Headroom: 0.5, Every: 10 * time.Millisecond}
	go func() { done <- Keep(ctx, o) }()
	deadline := time.Now().Add(5 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		if got = debug.SetMemoryLimit(-1); got != before {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The live heap holds the 64 MiB buffer: the limit is at least 1.5 times that, and far
	// below the unlimited default.
	if got < 96<<20 || got > 1<<32 {
		t.Errorf("limit %d MiB while 64 MiB are live, want at least 96 MiB and not unlimited", got>>20)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("limit %d after Keep, want %d restored", after, before)
	}
	runtime.KeepAlive(held)
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args      []string
		wantFloor int64
		wantHead  float64
		wantErr   bool
	}{
		{nil, DefaultFloor, DefaultHeadroom, false},
		{[]string{"--heap-floor", "300", "--heap-headroom", "0.5"}, 300 << 20, 0.5, false},
		{[]string{"--heap-floor", "0"}, 0, 0, true},
		{[]string{"--heap-floor", "-5"}, 0, 0, true},
		{[]string{"--heap-floor", "1e3"}, 0, 0, true},
	}
	for _, tc := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var o Options
		o.Flags(fs)
		if d := fs.Lookup("heap-floor").DefValue; d != "512" {
			t.Errorf("--heap-floor default shows %q, want 512", d)
		}
		err := fs.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if err == nil && (o.Floor != tc.wantFloor || o.Headroom != tc.wantHead) {
			t.Errorf("%v: floor %d headroom %g, want %d %g", tc.args, o.Floor, o.Headroom, tc.wantFloor, tc.wantHead)
		}
	}
}
