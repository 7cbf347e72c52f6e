package qdrant

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"golang.org/x/sync/errgroup"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Records are opaque byte strings the indexer keeps on points of a generation's collection
// (its manifest and document table), so that they are swapped by the alias and dropped with
// the collection, never apart from the data they describe. Record slot s is a header point
// at recordID + s<<recordSlotBits and its chunks after it; like the BM25 metadata points,
// they have no vectors and no "key", so no search and no passage scan meets them.
const (
	recordID       = uint64(1) << 41
	recordSlotBits = 24
	// recordChunk bytes per chunk point: its base64 form stays far below gRPC's 4 MiB
	// message limit, one chunk per request.
	recordChunk = 512 << 10
	// MaxRecordSlot bounds the slot numbers.
	MaxRecordSlot = 255
)

func recordPoint(slot, chunk int) uint64 {
	return recordID + uint64(slot)<<recordSlotBits + uint64(chunk)
}

// WriteRecord stores data as record slot of generation gen's collection: the chunks first,
// then the header that names their count, size and sha256, so a reader never takes a
// partial record for a whole one.
func (e *Engine) WriteRecord(ctx context.Context, gen backend.Gen, slot int, data []byte) error {
	if slot < 0 || slot > MaxRecordSlot {
		return fmt.Errorf("qdrant: record slot %d outside 0..%d", slot, MaxRecordSlot)
	}
	coll := e.Collection(gen.Name)
	chunks := (len(data) + recordChunk - 1) / recordChunk
	if chunks >= 1<<recordSlotBits-1 {
		return fmt.Errorf("qdrant collection %s: record %d of %d bytes is too large", coll, slot, len(data))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.Parallel)
	for c := 0; c < chunks; c++ {
		part := data[c*recordChunk : min((c+1)*recordChunk, len(data))]
		g.Go(func() error {
			pl := qdrant.NewValueMap(map[string]any{"kind": "kairos-record-chunk", "data": base64.StdEncoding.EncodeToString(part)})
			return e.upsert(gctx, coll, []*qdrant.PointStruct{{Id: qdrant.NewIDNum(recordPoint(slot, c+1)), Payload: pl,
				Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})}})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	head := qdrant.NewValueMap(map[string]any{"kind": "kairos-record", "size": int64(len(data)), "chunks": int64(chunks),
		"sha256": hex.EncodeToString(sum[:])})
	return e.upsert(ctx, coll, []*qdrant.PointStruct{{Id: qdrant.NewIDNum(recordPoint(slot, 0)), Payload: head,
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})}})
}

// ErrNoRecord is wrapped by ReadRecord's error when the collection has no such record.
var ErrNoRecord = errors.New("no record")

// ReadRecord reads record slot of collection (or alias) coll and checks its size and sha256.
func (e *Engine) ReadRecord(ctx context.Context, coll string, slot int) ([]byte, error) {
	get := func(id uint64) (map[string]*qdrant.Value, bool, error) {
		var pts []*qdrant.RetrievedPoint
		err := e.do(ctx, "read record", coll, func(ctx context.Context, c *qdrant.Client) error {
			var err error
			pts, err = c.Get(ctx, &qdrant.GetPoints{CollectionName: coll, Ids: []*qdrant.PointId{qdrant.NewIDNum(id)}, WithPayload: qdrant.NewWithPayload(true)})
			return err
		})
		if err != nil || len(pts) != 1 {
			return nil, false, err
		}
		return pts[0].GetPayload(), true, nil
	}
	head, ok, err := get(recordPoint(slot, 0))
	if err != nil {
		return nil, err
	}
	if !ok || head["kind"].GetStringValue() != "kairos-record" {
		return nil, fmt.Errorf("qdrant collection %s: record %d: %w", coll, slot, ErrNoRecord)
	}
	size, chunks := head["size"].GetIntegerValue(), head["chunks"].GetIntegerValue()
	if size < 0 || chunks < 0 || chunks >= 1<<recordSlotBits-1 || size > chunks*recordChunk {
		return nil, fmt.Errorf("qdrant collection %s: record %d: damaged header (%d bytes in %d chunks)", coll, slot, size, chunks)
	}
	data := make([]byte, 0, size)
	for c := 1; c <= int(chunks); c++ {
		pl, ok, err := get(recordPoint(slot, c))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("qdrant collection %s: record %d: chunk %d of %d missing", coll, slot, c, chunks)
		}
		b, err := base64.StdEncoding.DecodeString(pl["data"].GetStringValue())
		if err != nil {
			return nil, fmt.Errorf("qdrant collection %s: record %d: chunk %d: %v", coll, slot, c, err)
		}
		data = append(data, b...)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != size || hex.EncodeToString(sum[:]) != head["sha256"].GetStringValue() {
		return nil, fmt.Errorf("qdrant collection %s: record %d: %d bytes, sha256 %x; the header says %d bytes, sha256 %s",
			coll, slot, len(data), sum, size, head["sha256"].GetStringValue())
	}
	return data, nil
}

// Generations lists the generation names (the part after "<Index>-") of the collections of
// this index, sorted.
func (e *Engine) Generations(ctx context.Context) ([]string, error) {
	var names []string
	err := e.do(ctx, "list collections", "", func(ctx context.Context, c *qdrant.Client) error {
		all, err := c.ListCollections(ctx)
		names = names[:0]
		for _, n := range all {
			if g, ok := strings.CutPrefix(n, e.opts.Index+"-"); ok {
				names = append(names, g)
			}
		}
		return err
	})
	sort.Strings(names)
	return names, err
}
