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
	size, chunks, want := head["size"].GetIntegerValue(), head["chunks"].GetIntegerValue(), head["sha256"].GetStringValue()
	if err := checkRecordHeader(size, chunks); err != nil {
		return nil, fmt.Errorf("qdrant collection %s: record %d: %w", coll, slot, err)
	}
	parts := make([]string, chunks)
	for c := range parts {
		pl, ok, err := get(recordPoint(slot, c+1))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("qdrant collection %s: record %d: chunk %d of %d missing", coll, slot, c+1, chunks)
		}
		parts[c] = pl["data"].GetStringValue()
	}
	data, err := assembleRecord(size, want, parts)
	if err != nil {
		return nil, fmt.Errorf("qdrant collection %s: record %d: %w", coll, slot, err)
	}
	return data, nil
}

// checkRecordHeader refuses a record header whose size and chunk count cannot belong
// together, before any chunk is read.
func checkRecordHeader(size, chunks int64) error {
	if size < 0 || chunks < 0 || chunks >= 1<<recordSlotBits-1 || size > chunks*recordChunk || size <= (chunks-1)*recordChunk {
		return fmt.Errorf("damaged header (%d bytes in %d chunks)", size, chunks)
	}
	return nil
}

// assembleRecord decodes the base64 chunks of a record and checks them against the header's
// size and sha256 (hex). It fails closed: a bad chunk, a short or long record, or another sum.
func assembleRecord(size int64, sha string, parts []string) ([]byte, error) {
	if err := checkRecordHeader(size, int64(len(parts))); err != nil {
		return nil, err
	}
	data := make([]byte, 0, size)
	for c, part := range parts {
		b, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %v", c+1, err)
		}
		if len(b) > recordChunk || int64(len(data)+len(b)) > size {
			return nil, fmt.Errorf("chunk %d: %d bytes, more than the header allows", c+1, len(b))
		}
		data = append(data, b...)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != size || hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("%d bytes, sha256 %x; the header says %d bytes, sha256 %s", len(data), sum, size, sha)
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
