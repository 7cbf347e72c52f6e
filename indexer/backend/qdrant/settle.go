package qdrant

import (
	"context"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// settlePoll is how often settle asks the peers again.
const settlePoll = 200 * time.Millisecond

// settle waits until the active replicas of every shard of coll agree on their point count,
// on every peer this engine reaches, and fails after e.opts.Timeout. A write returns once
// one replica of each shard has it (Qdrant's default write consistency), so a replica may
// still be applying the last upserts when a build commits; promoting then would let a reader
// routed to it miss passages of the new generation. Peers that do not answer are skipped:
// their replicas are marked dead by the others and serve no reads until they have caught up.
// A collection is written once, so equal counts mean equal content.
func (e *Engine) settle(ctx context.Context, coll string) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	for {
		why, err := e.unsettled(ctx, coll)
		if err != nil {
			return err
		}
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("qdrant collection %s: replicas still disagree after %v (%s): not promoted", coll, e.opts.Timeout, why)
		case <-time.After(settlePoll):
		}
	}
}

// unsettled says why coll's active replicas do not agree yet ("" when they do). It fails only
// when no peer answers.
func (e *Engine) unsettled(ctx context.Context, coll string) (string, error) {
	counts := map[uint32]uint64{} // shard -> points of its first active replica seen
	answered := 0
	var lastErr error
	for i, c := range e.clients {
		rctx, cancel := context.WithTimeout(ctx, settlePoll*5)
		info, err := c.GetCollectionClusterInfo(rctx, coll)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		answered++
		for _, s := range info.GetLocalShards() {
			if s.GetState() != qdrant.ReplicaState_Active {
				continue
			}
			id, n := s.GetShardId(), s.GetPointsCount()
			if m, ok := counts[id]; !ok {
				counts[id] = n
			} else if m != n {
				return fmt.Sprintf("shard %d: %d points on %s, %d on another peer", id, n, e.opts.Hosts[i], m), nil
			}
		}
	}
	if answered == 0 {
		return "", e.wrap(len(e.clients)-1, "collection cluster info", coll, lastErr)
	}
	return "", nil
}
