package hnsw

// A graph finds a live key's node without a map entry when the node's id is the key: Kairos
// numbers passages 0, 1, 2, ... and embeds them in that order, so every node of a fresh
// build is node k for key k. Only the other live keys (those added out of order, or again
// after a delete) are in the moved map. A map of every key cost about 30 bytes a node
// (288 MiB at 10M nodes, sized at once by Reserve) in the build and in every process that
// loads the graph.

// lookup returns the node of a live key.
func (g *Graph) lookup(key uint64) (uint32, bool) {
	if id, ok := g.moved[key]; ok {
		return id, true
	}
	if key < uint64(len(g.keys)) && g.keys[key] == key && !g.isDeleted(uint32(key)) {
		return uint32(key), true
	}
	return 0, false
}

// index records that key is live on node id; the caller has checked that it was not live.
func (g *Graph) index(key uint64, id uint32) {
	if key == uint64(id) {
		return
	}
	if g.moved == nil {
		g.moved = map[uint64]uint32{}
	}
	g.moved[key] = id
}

// unindex forgets a key whose node is being tombstoned or truncated away.
func (g *Graph) unindex(key uint64) {
	delete(g.moved, key)
}

// lookupBefore is lookup while a loaded graph's nodes from id on are not yet indexed: the
// node of a key at or above id is not yet known to be live.
func (g *Graph) lookupBefore(key uint64, id int) (uint32, bool) {
	if key >= uint64(id) {
		prev, ok := g.moved[key]
		return prev, ok
	}
	return g.lookup(key)
}

// MovedKeys is how many live keys are not their node's id, each of which costs a map entry
// (the rest cost nothing). A build that adds keys 0, 1, 2, ... in order has none.
func (g *Graph) MovedKeys() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.moved)
}
