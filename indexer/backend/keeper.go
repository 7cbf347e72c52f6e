package backend

import (
	"context"
	"errors"
	"sync"
)

// Keeper applies a Filter to passage keys through Meta, for the engines that keep no
// metadata of their own and filter inside their search (the HNSW walk, the postings
// search). It is safe for concurrent use: a search may run over several segments at once.
// A key whose metadata cannot be read does not pass, and its error is kept for Err, so the
// search fails rather than treating an unreadable passage as filtered out.
type Keeper struct {
	// ctx is the search's: Keep is called back from inside an engine's walk (a func(key)
	// bool), which has no context to hand it, and a remote Meta needs one for its requests.
	// A Keeper lives as long as the one search it was made for.
	ctx   context.Context
	meta  Meta
	langs bool // f has languages
	blks  bool // f has block types
	f     Filter
	mu    sync.Mutex
	err   error
}

// NewKeeper returns a Keeper of f over meta for the search of ctx; it fails when there is no
// metadata to filter by.
func NewKeeper(ctx context.Context, meta Meta, f Filter) (*Keeper, error) {
	if meta == nil {
		return nil, errors.New("a filtered search needs passage metadata")
	}
	return &Keeper{ctx: ctx, meta: meta, f: f,
		langs: len(f.Languages) > 0 || len(f.ExcludeLanguages) > 0, blks: len(f.BlockTypes) > 0}, nil
}

// Keep reports whether key passes the filter.
func (k *Keeper) Keep(key uint32) bool {
	date, source, err := k.meta.Meta(k.ctx, key)
	if err != nil {
		k.fail(err)
		return false
	}
	if !k.f.Match(date, source) {
		return false
	}
	if k.langs {
		lang, err := k.meta.Language(k.ctx, key)
		if err != nil {
			k.fail(err)
			return false
		}
		if !k.f.MatchLanguage(lang) {
			return false
		}
	}
	if k.blks {
		blk, err := k.meta.BlockType(k.ctx, key)
		if err != nil {
			k.fail(err)
			return false
		}
		return k.f.MatchBlockType(blk)
	}
	return true
}

func (k *Keeper) fail(err error) {
	k.mu.Lock()
	if k.err == nil {
		k.err = err
	}
	k.mu.Unlock()
}

// Err returns the first metadata error Keep met, if any.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}
