package chat

import (
	"maps"
	"sync"
)

// usageMeter sums token usage per stage across all calls of a client.
type usageMeter struct {
	mu sync.Mutex
	m  map[string]Usage
}

func newUsageMeter() *usageMeter { return &usageMeter{m: map[string]Usage{}} }

func (u *usageMeter) add(stage string, x Usage) {
	u.mu.Lock()
	u.m[stage] = u.m[stage].Add(x)
	u.mu.Unlock()
}

func (u *usageMeter) snapshot() map[string]Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.m)
}
