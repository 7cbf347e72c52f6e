package backend

import (
	"errors"
	"sync"
)

// Keeper applies a Filter to passage keys through Meta, for the engines that keep no
// metadata of their own and filter inside their search (the HNSW walk, the postings
// search). It is safe for concurrent use: a search may run over several segments at once.
// A key whose metadata cannot be read does not pass, and its error is kept for Err, so the
// search fails rather than treating an unreadable passage as filtered out.
type Keeper struct {
	meta Meta
	f    Filter
	mu   sync.Mutex
	err  error
}

// NewKeeper returns a Keeper of f over meta; it fails when there is no metadata to filter by.
func NewKeeper(meta Meta, f Filter) (*Keeper, error) {
	if meta == nil {
		return nil, errors.New("a filtered search needs passage metadata")
	}
	return &Keeper{meta: meta, f: f}, nil
}

// Keep reports whether key passes the filter.
func (k *Keeper) Keep(key uint32) bool {
	date, source, err := k.meta.Meta(key)
	if err != nil {
		k.mu.Lock()
		if k.err == nil {
			k.err = err
		}
		k.mu.Unlock()
		return false
	}
	return k.f.Match(date, source)
}

// Err returns the first metadata error Keep met, if any.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}
