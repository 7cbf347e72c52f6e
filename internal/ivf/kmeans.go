package ivf

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
)

// Training: spherical k-means (centroids are unit directions, a vector goes to the centroid of
// largest inner product), in two levels when there are many lists: about sqrt(lists) coarse
// clusters first, then each split into a number of lists proportional to its size. Flat k-means
// compares every sample vector with every centroid each round (n*lists dot products: 4 hours at
// 16,384 lists on a million vectors on two cores); two levels compare it with 2*sqrt(lists).
// Every step is deterministic for a given sample and seed, whatever the number of workers, so a
// resumed build trains the centroids a clean one does.

const (
	kmeansIters    = 12 // rounds of the coarse level and of a flat k-means
	kmeansSubIters = 10 // rounds of each split of the second level
	flatBelow      = 64 // at most this many lists: one level
)

// train returns lists unit centroids (lists*dim) for the sample (rows of dim, unit vectors).
// lists must be at most the number of rows.
func train(ctx context.Context, sample []float32, dim, lists int, seed int64, workers int) ([]float32, error) {
	m := len(sample) / dim
	idx := make([]int32, m)
	for i := range idx {
		idx[i] = int32(i)
	}
	if lists <= flatBelow {
		c, _, err := kmeans(ctx, sample, idx, dim, lists, kmeansIters, seed, workers)
		return c, err
	}
	k1 := int(math.Round(math.Sqrt(float64(lists))))
	coarse, assign, err := kmeans(ctx, sample, idx, dim, k1, kmeansIters, seed, workers)
	if err != nil {
		return nil, err
	}
	_ = coarse
	members := make([][]int32, k1)
	for i, a := range assign {
		members[a] = append(members[a], int32(i))
	}
	split := splitLists(members, lists, m)
	first := make([]int, k1+1)
	for j, k := range split {
		first[j+1] = first[j] + k
	}
	out := make([]float32, lists*dim)
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if split[j] == 0 {
					continue
				}
				c, _, err := kmeans(ctx, sample, members[j], dim, split[j], kmeansSubIters, seed+int64(j)+1, 1)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					continue
				}
				copy(out[first[j]*dim:], c)
			}
		}()
	}
	for j := range k1 {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return out, firstErr
}

// splitLists shares lists among the coarse clusters in proportion to their members (largest
// remainders), no cluster getting more lists than members.
func splitLists(members [][]int32, lists, m int) []int {
	k := make([]int, len(members))
	type rem struct {
		j int
		r float64
	}
	var rems []rem
	given := 0
	for j, ms := range members {
		exact := float64(lists) * float64(len(ms)) / float64(m)
		k[j] = min(len(ms), int(exact))
		given += k[j]
		rems = append(rems, rem{j, exact - float64(k[j])})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for given < lists {
		progressed := false
		for _, r := range rems {
			if given == lists {
				break
			}
			if k[r.j] < len(members[r.j]) {
				k[r.j]++
				given++
				progressed = true
			}
		}
		if !progressed {
			break // fewer members than lists: the caller bounded lists by the rows
		}
	}
	return k
}

// kmeans runs iters rounds of spherical k-means with k centroids over the rows idx of pts and
// returns the centroids (k*dim unit vectors) and the final assignment of each of idx.
func kmeans(ctx context.Context, pts []float32, idx []int32, dim, k, iters int, seed int64, workers int) ([]float32, []int32, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x1f2e3d4c5b6a7988))
	k = min(k, len(idx))
	cents := make([]float32, k*dim)
	// k distinct rows drawn by a partial shuffle.
	perm := append([]int32(nil), idx...)
	for i := range k {
		j := i + rng.IntN(len(perm)-i)
		perm[i], perm[j] = perm[j], perm[i]
		copy(cents[i*dim:(i+1)*dim], pts[int(perm[i])*dim:])
	}
	assign := make([]int32, len(idx))
	sums := make([]float64, k*dim)
	counts := make([]int, k)
	for it := 0; ; it++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		assignRows(pts, idx, dim, cents, k, assign, workers)
		if it == iters {
			return cents, assign, nil
		}
		clear(sums)
		clear(counts)
		for i, a := range assign {
			row := pts[int(idx[i])*dim : int(idx[i]+1)*dim]
			s := sums[int(a)*dim : int(a+1)*dim]
			for d, x := range row {
				s[d] += float64(x)
			}
			counts[a]++
		}
		for j := range k {
			c := cents[j*dim : (j+1)*dim]
			if counts[j] == 0 {
				// An empty cluster takes a row of the largest one, spread over the rounds.
				big := 0
				for b := range k {
					if counts[b] > counts[big] {
						big = b
					}
				}
				for i, a := range assign {
					if int(a) == big && (i+it+j)%2 == 0 {
						copy(c, pts[int(idx[i])*dim:])
						break
					}
				}
				continue
			}
			var n2 float64
			for _, x := range sums[j*dim : (j+1)*dim] {
				n2 += x * x
			}
			if n2 == 0 {
				continue
			}
			inv := 1 / math.Sqrt(n2)
			for d, x := range sums[j*dim : (j+1)*dim] {
				c[d] = float32(x * inv)
			}
		}
	}
}

// assignRows sets assign[i] to the centroid of largest inner product with row idx[i], on
// workers goroutines over fixed ranges (the result does not depend on their number). The rows
// are gathered a run at a time for nearestTable, which compares them with every centroid.
func assignRows(pts []float32, idx []int32, dim int, cents []float32, k int, assign []int32, workers int) {
	tab := newNearestTable(cents, dim, k)
	var wg sync.WaitGroup
	workers = max(1, min(workers, len(idx)/256+1))
	per := (len(idx) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*per, min(len(idx), (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s nearestScratch
			rows := make([]float32, tab.run*dim)
			out := make([]uint32, tab.run)
			for first := lo; first < hi; first += tab.run {
				count := min(tab.run, hi-first)
				for i := range count {
					r := int(idx[first+i])
					copy(rows[i*dim:(i+1)*dim], pts[r*dim:(r+1)*dim])
				}
				tab.nearest(rows[:count*dim], out[:count], &s)
				for i, l := range out[:count] {
					assign[first+i] = int32(l)
				}
			}
		}()
	}
	wg.Wait()
}
