package ivf

import (
	"errors"
	"fmt"
	"math"
	"runtime"
)

// Options configure an index. The zero value of every field means its default. The JSON form
// is what a Kairos manifest records; Workers is not recorded (it changes how fast, not what).
type Options struct {
	// Lists is the number of lists (centroids). 0: chosen from the number of vectors expected
	// when the centroids are trained (ListsFor), about 4*sqrt(n): 4,096 lists of about 250
	// vectors at a million, 16,384 at 40 million.
	Lists int `json:"lists,omitempty"`
	// Probe is how many lists a search probes when its caller names none. 0: DefaultProbe.
	Probe int `json:"probe,omitempty"`
	// Rescore is how many of the best one-bit estimates a search takes on, at least (one for
	// every 64 vectors it scans when that is more): it estimates them again from their
	// refinement codes and rescores the best twelfth of them (at least 64) with their int8
	// vectors, or, in an index without refinement codes, rescores them all unless its caller
	// names how many. 0: DefaultRescore.
	Rescore int `json:"rescore,omitempty"`
	// Sample is how many vectors the centroids are trained on: the first Sample added (all of
	// them when fewer are added before the final commit). 0: SampleFor(Lists).
	Sample int `json:"sample,omitempty"`
	// Seed drives the rotation and the k-means initialisation.
	Seed int64 `json:"seed,omitempty"`
	// NoRefine leaves out the refinement codes (refine.go): the lists take 44 bytes a 256-d
	// vector instead of 84, and a search rescores several times as many candidates with their
	// int8 vectors for the same recall, which is slower, most of all when the vectors are on
	// disk. An update keeps what its base has.
	NoRefine bool `json:"no_refine,omitempty"`
	// Workers is the number of goroutines that train, assign and merge. 0: GOMAXPROCS.
	Workers int `json:"-"`
}

// Defaults.
const (
	DefaultProbe   = 64
	DefaultRescore = 320
	DefaultSeed    = 1
	// MaxLists bounds Lists: offsets and list numbers are 32-bit, and a graph over more
	// centroids than this would cost more to search than the lists it saves scanning.
	MaxLists = 1 << 20
	// samplePerList is how many training vectors k-means gets per centroid: faiss warns below
	// 39, and more cost training time for little.
	samplePerList = 48
	// maxSample bounds the training sample (the sample is held as float32 while training:
	// 1M x 256 is 1 GB).
	maxSample = 1 << 20
)

// ListsFor is the number of lists for n vectors: 4*sqrt(n) rounded down to a power of two (up
// to 20% over), at least 1 and at most n/8 (lists of at least 8 vectors), at most MaxLists. On
// a million topic-fixture vectors, recall@10 of 0.845 took 46,000 codes scanned a query with
// 2,048 lists, 23,000 with 4,096 and 12,000 with 8,192, where comparing the query with every
// centroid began to cost more than the scan.
func ListsFor(n int) int {
	if n <= 0 {
		return 1
	}
	target := 4 * math.Sqrt(float64(n))
	l := 1
	for l*2 <= int(target*1.2) && l*2 <= MaxLists {
		l *= 2
	}
	for l > 1 && l > n/8 {
		l /= 2
	}
	return l
}

// SampleFor is the default training sample for lists lists.
func SampleFor(lists int) int { return min(maxSample, max(lists*samplePerList, 10000)) }

// SetDefaults fills the zero fields with the defaults (Lists and Sample stay 0: they depend on
// the size of the index, and are settled when the centroids are trained).
func (o *Options) SetDefaults() {
	if o.Probe == 0 {
		o.Probe = DefaultProbe
	}
	if o.Rescore == 0 {
		o.Rescore = DefaultRescore
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.Lists < 0 || o.Lists > MaxLists:
		return fmt.Errorf("ivf: lists %d out of range 0..%d", o.Lists, MaxLists)
	case o.Probe < 0:
		return errors.New("ivf: negative probe")
	case o.Rescore < 0:
		return errors.New("ivf: negative rescore")
	case o.Sample < 0:
		return errors.New("ivf: negative sample")
	case o.Workers < 0:
		return errors.New("ivf: negative workers")
	}
	return nil
}

// SearchOptions are the parameters of one search; zero fields take the index's defaults
// (Options.Probe, Options.Rescore).
type SearchOptions struct {
	// Probe is how many lists to scan: more finds more of the true neighbours, more slowly.
	Probe int
	// Rescore is how many of the best estimates to rescore with the int8 vectors (at least
	// k): where the index has refinement codes, the best of their estimates. 0: the index's
	// rule (Options.Rescore).
	Rescore int
}
