package qdrant

import (
	"context"
	"errors"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kairos-rag/kairos/indexer/backend"
)

// Names of the vectors and payload fields of a collection.
const (
	vecDense = "dense"
	vecBM25  = "bm25" // BM25 document-side weights, indexed by term id
	vecTF    = "tf"   // raw term frequencies, for the exact rescoring and derived generations

	fieldKey    = "key"
	fieldLen    = "len" // analysed tokens of the text
	fieldGen    = "gen"
	fieldDate   = "date"
	fieldSource = "source"
	// fieldLanguage is Passage.Language's JSON name: set in the payload of the passages of a
	// multilingual index, for language filters.
	fieldLanguage = "language"
	// fieldBlockType is Passage.BlockType's JSON name: set in the payload of the passages of a
	// table or an infobox, absent for prose (backend.Filter.BlockTypeTerms).
	fieldBlockType = "block_type"
)

// ensureCollection creates collection coll with Kairos's layout, or checks an existing one.
//
// A peer can answer NotFound for a collection that was just created: the cluster committed
// the creation but this peer has not applied it yet (a peer that restarted lags behind), or
// the create answered "already exists" for a collection whose deletion, ordered before it,
// was still being applied. Both pass with time, so NotFound after the create is retried with
// the engine's retries and backoff, creating again (which is harmless when it exists).
func (e *Engine) ensureCollection(ctx context.Context, coll string) error {
	wait := e.opts.Backoff
	for attempt := 0; ; attempt++ {
		err := e.createCollection(ctx, coll)
		if status.Code(err) != codes.NotFound || attempt == e.opts.Retries {
			return err
		}
		e.opts.Logger.Warn("qdrant collection not found right after its creation, creating again", "collection", coll, "attempt", attempt+1, "err", err)
		if err := pause(ctx, &wait); err != nil {
			return fmt.Errorf("qdrant collection %s: create: %w", coll, err)
		}
	}
}

// createCollection is one try of ensureCollection: create, check, add the payload indexes.
func (e *Engine) createCollection(ctx context.Context, coll string) error {
	dist := qdrant.Distance_Cosine
	if e.opts.Distance == Dot {
		dist = qdrant.Distance_Dot
	}
	req := &qdrant.CreateCollection{
		CollectionName: coll,
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			vecDense: {Size: uint64(e.opts.Dim), Distance: dist},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			vecBM25: {}, vecTF: {},
		}),
		ShardNumber:       qdrant.PtrOf(e.opts.Shards),
		ReplicationFactor: qdrant.PtrOf(e.replicationFactor(ctx)),
		HnswConfig:        e.opts.HNSW.hnswConfig(),
		OptimizersConfig:  e.opts.HNSW.optimizersConfig(),
	}
	err := e.do(ctx, "create collection", coll, func(ctx context.Context, c *qdrant.Client) error {
		err := c.CreateCollection(ctx, req)
		if status.Code(err) == codes.AlreadyExists || (err != nil && alreadyExists(err)) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := e.checkCollection(ctx, coll); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		typ  qdrant.FieldType
	}{{fieldDate, qdrant.FieldType_FieldTypeDatetime}, {fieldSource, qdrant.FieldType_FieldTypeKeyword},
		{fieldLanguage, qdrant.FieldType_FieldTypeKeyword}, {fieldBlockType, qdrant.FieldType_FieldTypeKeyword},
		{fieldKey, qdrant.FieldType_FieldTypeInteger}} {
		err := e.do(ctx, "create payload index "+f.name, coll, func(ctx context.Context, c *qdrant.Client) error {
			_, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
				CollectionName: coll, FieldName: f.name, FieldType: qdrant.PtrOf(f.typ), Wait: qdrant.PtrOf(true),
			})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func alreadyExists(err error) bool {
	s := status.Convert(err).Message()
	return containsFold(s, "already exists")
}

// checkCollection verifies that coll has the dense vector of the engine's dimension and both
// sparse vectors: a collection made by something else fails here with what differs.
func (e *Engine) checkCollection(ctx context.Context, coll string) error {
	info, err := e.collectionInfo(ctx, coll)
	if err != nil {
		return err
	}
	where := fmt.Sprintf("qdrant grpc://%s collection %s", e.opts.Hosts[0], coll)
	params := info.GetConfig().GetParams()
	dense, ok := params.GetVectorsConfig().GetParamsMap().GetMap()[vecDense]
	if !ok {
		return fmt.Errorf("%s: misconfigured: no dense vector %q", where, vecDense)
	}
	if dense.GetSize() != uint64(e.opts.Dim) {
		return fmt.Errorf("%s: misconfigured: dense vector size %d, the model's is %d", where, dense.GetSize(), e.opts.Dim)
	}
	for _, name := range []string{vecBM25, vecTF} {
		if _, ok := params.GetSparseVectorsConfig().GetMap()[name]; !ok {
			return fmt.Errorf("%s: misconfigured: no sparse vector %q", where, name)
		}
	}
	return nil
}

// Drop deletes generation gen's collection (its lexical, vector and passage parts at once).
func (e *Engine) Drop(ctx context.Context, gen backend.Gen) error {
	coll := e.Collection(gen.Name)
	return e.do(ctx, "delete collection", coll, func(ctx context.Context, c *qdrant.Client) error {
		res, err := c.GetCollectionsClient().Delete(ctx, &qdrant.DeleteCollection{CollectionName: coll})
		switch {
		case status.Code(err) == codes.NotFound:
			return nil
		case err != nil:
			return err
		case res.GetResult():
			return nil
		}
		// Qdrant answers false, not NotFound, for a collection it does not hold: after a
		// retried request whose first attempt deleted it (the answer lost to a failover),
		// or on a peer that left the cluster's list before this one. Only a collection the
		// cluster still lists is a failure; Drop is idempotent otherwise.
		exists, err := c.CollectionExists(ctx, coll)
		switch {
		case err != nil:
			return err
		case exists:
			return errors.New("the cluster answered that it deleted nothing, and still lists the collection")
		}
		return nil
	})
}

// Promote makes gen the live generation: the alias moves to its collection in one request,
// which Qdrant applies atomically, so a query through the alias sees one generation or the
// other, never a mix.
//
// It first waits for the collection's replicas to agree (settle), so that no reader routed to
// a lagging replica sees part of the new generation.
func (e *Engine) Promote(ctx context.Context, gen backend.Gen) error {
	coll := e.Collection(gen.Name)
	if err := e.settle(ctx, coll); err != nil {
		return err
	}
	alias := e.Alias()
	return e.do(ctx, "move alias "+alias, coll, func(ctx context.Context, c *qdrant.Client) error {
		aliases, err := c.ListAliases(ctx)
		if err != nil {
			return err
		}
		var ops []*qdrant.AliasOperations
		for _, a := range aliases {
			if a.GetAliasName() == alias {
				ops = append(ops, qdrant.NewAliasDelete(alias))
			}
		}
		ops = append(ops, qdrant.NewAliasCreate(alias, coll))
		return c.UpdateAliases(ctx, ops)
	})
}

// Live returns the collection the alias names, "" when there is none.
func (e *Engine) Live(ctx context.Context) (string, error) {
	var coll string
	err := e.do(ctx, "list aliases", "", func(ctx context.Context, c *qdrant.Client) error {
		aliases, err := c.ListAliases(ctx)
		for _, a := range aliases {
			if a.GetAliasName() == e.Alias() {
				coll = a.GetCollectionName()
			}
		}
		return err
	})
	return coll, err
}

// collectionInfo fetches coll's configuration and state, with the engine's retries.
func (e *Engine) collectionInfo(ctx context.Context, coll string) (*qdrant.CollectionInfo, error) {
	var info *qdrant.CollectionInfo
	err := e.do(ctx, "collection info", coll, func(ctx context.Context, c *qdrant.Client) error {
		var err error
		info, err = c.GetCollectionInfo(ctx, coll)
		return err
	})
	return info, err
}
