// Package memlimit keeps a long job's Go heap close to what it holds live.
//
// Go's collector lets the heap grow to twice the live heap between collections (GOGC=100).
// For an index build whose live heap is a few hundred megabytes of tables that grow with
// the collection, that doubling is most of its peak resident memory. A fixed soft limit
// (GOMEMLIMIT) removes the doubling but makes the collector run without pause once the live
// heap outgrows it, which halves a build's throughput at the scale where it matters most.
// Keeper sets the soft limit to the larger of a floor and the live heap plus a headroom,
// and follows the live heap as it grows: below the floor the collector runs as usual, above
// it the heap stays within the headroom of what is live.
//
// The soft limit is process-wide: only a program's main command should run a Keeper.
package memlimit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"
)

// Defaults of Options.
const (
	DefaultFloor    = 512 << 20 // bytes
	DefaultHeadroom = 0.25
	DefaultEvery    = time.Second
)

// Options say where the limit goes.
type Options struct {
	// Floor is the least soft limit, in bytes (0: DefaultFloor).
	Floor int64
	// Headroom is the share of the live heap the heap may grow past it before a collection
	// (0: DefaultHeadroom). GOGC=100 is a headroom of 1.
	Headroom float64
	// Every is how often the live heap is read (0: DefaultEvery).
	Every time.Duration
}

// Validate refuses negative options.
func (o Options) Validate() error {
	if o.Floor < 0 || o.Headroom < 0 || o.Every < 0 || math.IsNaN(o.Headroom) {
		return errors.New("memlimit: negative option")
	}
	return nil
}

func (o *Options) setDefaults() error {
	if err := o.Validate(); err != nil {
		return err
	}
	o.SetDefaults()
	return nil
}

// SetDefaults fills the zero fields with the defaults Keep applies (DefaultFloor,
// DefaultHeadroom, DefaultEvery). Flags calls it on a copy to show them.
func (o *Options) SetDefaults() {
	if o.Floor == 0 {
		o.Floor = DefaultFloor
	}
	if o.Headroom == 0 {
		o.Headroom = DefaultHeadroom
	}
	if o.Every == 0 {
		o.Every = DefaultEvery
	}
}

// Limit is the soft limit for a live heap of live bytes.
func (o Options) Limit(live uint64) int64 {
	want := float64(live) * (1 + o.Headroom)
	if want >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(o.Floor, int64(want))
}

// Keep sets the soft limit from the live heap every o.Every until ctx is done, then restores
// the limit it found. It blocks; run it in a goroutine.
func Keep(ctx context.Context, o Options) error {
	if err := o.setDefaults(); err != nil {
		return err
	}
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(o.Every)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(min(prev, o.Limit(sample[0].Value.Uint64())))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Defaults of ServeOptions, the pacing of a server's collector (Pace).
const (
	// DefaultServeFloor: a server searching an mmapped index holds a live heap of a few
	// MiB, and allocates about 70 KB per BM25 request of k 10 on SciFact (2,600 requests a
	// second on 2 cores: 180 MB/s). At Go's default the heap is collected at 4 MiB, 37 times
	// a second; at 64 MiB about 3 times.
	DefaultServeFloor    = 64 << 20
	DefaultServeHeadroom = 1 // above the floor, collect at twice the live heap, as GOGC=100
	DefaultServeEvery    = 100 * time.Millisecond
)

// ServeOptions are the options a server paces its collector with.
func ServeOptions() Options {
	return Options{Floor: DefaultServeFloor, Headroom: DefaultServeHeadroom, Every: DefaultServeEvery}
}

// Pace runs the collector by the soft limit alone while ctx lasts: it turns GOGC off and
// keeps the limit at the larger of o.Floor and the live heap plus o.Headroom (as Keep does),
// so that a small live heap is collected when the heap reaches the floor, not at twice its
// few MiB. Every collection preempts the goroutines running (to scan their stacks), and for
// a server dozens of collections a second are the tail of its latency. Above the floor it
// collects as GOGC=100*Headroom would. A GOGC set in the environment is the operator's
// choice: Pace leaves it, and the collector, alone. On return GOGC is restored. It blocks;
// run it in a goroutine, and only in a program's main command.
func Pace(ctx context.Context, o Options) error {
	if err := o.setDefaults(); err != nil {
		return err
	}
	if os.Getenv("GOGC") != "" {
		return nil
	}
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	return Keep(ctx, o)
}

// Flags registers the options as --heap-floor (MiB) and --heap-headroom, with the defaults
// Keep applies.
func (o *Options) Flags(fs *flag.FlagSet) {
	d := *o
	d.SetDefaults()
	o.Floor = d.Floor
	fs.Var(Mebibytes{&o.Floor}, "heap-floor", "MiB the Go heap may reach before collections follow the live heap")
	fs.Float64Var(&o.Headroom, "heap-headroom", d.Headroom, "share of the live heap the heap may grow past it above --heap-floor (Go's own default is 1: twice the live heap)")
}

// Mebibytes is a flag.Value holding a number of bytes at P, written in MiB (--heap-floor here,
// and the indexer's --ram-budget).
type Mebibytes struct{ P *int64 }

func (m Mebibytes) String() string {
	if m.P == nil {
		return "0"
	}
	return strconv.FormatInt(*m.P>>20, 10)
}

// Set parses a positive whole number of MiB.
func (m Mebibytes) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>20 {
		return fmt.Errorf("%q is not a positive number of MiB", s)
	}
	*m.P = n << 20
	return nil
}
