package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/rerank/live"
)

// Collection is one index behind the server, served under its name: WikiChat's corpus_id
// endpoints (/{name}/search, /{name}/v2/search) and the native API under
// /v1/collections/{name}/. The first collection of Options.Collections is the default one,
// which the unprefixed routes (/search, /v1/search, ...) and POST /v1/chat serve.
type Collection struct {
	// Name is the path segment: letters, digits, '_', '-' and '.', starting with a letter or
	// digit, at most 64 bytes, and not a top-level path of the API (v1, v2, search, ...).
	Name string
	// Index is this collection's live index, reloaded by the server's reloads (SIGHUP and
	// POST .../admin/reload); the server closes it on Close.
	Index *live.Index
}

// DefaultCollection names the one collection of a server configured with Options.Index.
const DefaultCollection = "default"

var collectionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// reservedCollections are the first path segments of the server's own routes: a collection
// of such a name would be shadowed by, or collide with, them.
var reservedCollections = []string{"v1", "v2", "search", "healthz", "readyz", "metrics", "openapi.json", "web"}

// CheckCollectionName says why name cannot name a collection, or nil.
func CheckCollectionName(name string) error {
	if !collectionName.MatchString(name) {
		return fmt.Errorf("collection name %q: want 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit", name)
	}
	if slices.Contains(reservedCollections, strings.ToLower(name)) {
		return fmt.Errorf("collection name %q is a path of the API itself (reserved: %s)", name, strings.Join(reservedCollections, ", "))
	}
	return nil
}

// collection is one served index.
type collection struct {
	name string
	ix   *live.Index
}

// acquire returns the current load of the collection's index with a reference held (which
// the caller releases), or nil before its first load.
func (c *collection) acquire() *live.Load { return c.ix.Acquire() }

// collectionsOf validates the configured collections: Options.Collections, or the one
// collection of Options.Index.
func collectionsOf(o Options) ([]*collection, error) {
	specs := o.Collections
	switch {
	case len(specs) == 0 && o.Index == nil:
		return nil, fmt.Errorf("server options: Index or Collections is required")
	case len(specs) > 0 && o.Index != nil:
		return nil, fmt.Errorf("server options: set Index (one index) or Collections (several), not both")
	case len(specs) == 0:
		specs = []Collection{{Name: DefaultCollection, Index: o.Index}}
	}
	out := make([]*collection, 0, len(specs))
	seen := map[string]bool{}
	for i, c := range specs {
		if err := CheckCollectionName(c.Name); err != nil {
			return nil, fmt.Errorf("server options: Collections[%d]: %w", i, err)
		}
		if c.Index == nil {
			return nil, fmt.Errorf("server options: collection %q has no Index", c.Name)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("server options: collection %q is given twice", c.Name)
		}
		seen[c.Name] = true
		out = append(out, &collection{name: c.Name, ix: c.Index})
	}
	return out, nil
}

// collection returns the collection a request names by its {collection} path value (set by
// the pattern, or by the per-collection registration of the top-level WikiChat routes), the
// default one when it names none, or a 404 naming the collections there are.
func (s *Server) collection(r *http.Request) (*collection, error) {
	name := r.PathValue("collection")
	if name == "" {
		return s.cols[0], nil
	}
	if c := s.byName[name]; c != nil {
		return c, nil
	}
	return nil, s.noSuchCollection(name)
}

func (s *Server) noSuchCollection(name string) error {
	names := make([]string, len(s.cols))
	for i, c := range s.cols {
		names[i] = c.name
	}
	return &apiError{status: http.StatusNotFound,
		msg: fmt.Sprintf("no such collection %q (collections: %s)", name, strings.Join(names, ", "))}
}

// Reload reopens every collection's index (see ReloadCollection). A collection that fails
// keeps its current load and the others are reloaded all the same; the error names each that
// failed. The first Reload loads the indexes given unloaded (live.New).
func (s *Server) Reload(ctx context.Context) error { return s.reloadEach(ctx, s.cols) }

func (s *Server) reloadEach(ctx context.Context, cols []*collection) error {
	var errs []string
	for _, c := range cols {
		if err := s.reload(ctx, c); err != nil {
			if len(s.cols) > 1 {
				err = fmt.Errorf("collection %s: %w", c.name, err)
			}
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ReloadCollection reloads the named collection's index (live.Index.Reload): requests
// already running finish on the old load, new requests see the new one; on error the
// current load stays in service. An unknown name is an error wrapping ErrNotFound.
func (s *Server) ReloadCollection(ctx context.Context, name string) error {
	c := s.byName[name]
	if c == nil {
		return fmt.Errorf("reloading collection %q: %w", name, ErrNotFound)
	}
	return s.reload(ctx, c)
}
