package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/kpst"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
)

// TestPassageStoreEngines holds every passage engine to the writer's contract: keys are the
// driver's, taken in order from the base's next key; a key out of order is refused; a second
// delete of a key reports false; the committed layout lists the key ranges, the live count
// and the tombstones kept; a generation that only deletes adds no range; and a derived
// generation leaves its base as it was. The local engine's parts are opened and read back;
// Qdrant's writer writes nothing locally (its passages are the points the lexical writer
// upserts, which TestConformance reads back on a real cluster).
func TestPassageStoreEngines(t *testing.T) {
	ctx := context.Background()
	passage := func(key int) *corpus.Passage {
		return &corpus.Passage{ID: fmt.Sprintf("d%d#%d", key/2, key%2), DocID: fmt.Sprintf("d%d", key/2), Title: "T", Text: fmt.Sprintf("text of passage %d", key)}
	}
	for _, tc := range []struct {
		name  string
		eng   backend.PassageStore
		local bool // files in the generation's directory, tombstones kept
	}{
		{"kpst", kpst.Engine{}, true},
		{"qdrant", qdrant.PassageStore{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			gen := func(n int) backend.Gen {
				g := backend.Gen{Name: fmt.Sprintf("g-%06d", n), Dir: filepath.Join(root, fmt.Sprint(n))}
				if err := os.Mkdir(g.Dir, 0o755); err != nil {
					t.Fatal(err)
				}
				return g
			}
			// write begins gen on base, adds keys from..to-1, deletes dels (each twice) and commits.
			write := func(g backend.Gen, base *backend.PassageBase, from, to int, dels ...uint32) backend.PassageLayout {
				t.Helper()
				w, err := tc.eng.Begin(ctx, g, base)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Add(ctx, uint32(to+1), passage(to+1)); err == nil || !strings.Contains(err.Error(), "is next") {
					t.Errorf("a key out of order: %v", err)
				}
				for k := from; k < to; k++ {
					if err := w.Add(ctx, uint32(k), passage(k)); err != nil {
						t.Fatal(err)
					}
				}
				for _, k := range dels {
					if !w.Delete(k) || w.Delete(k) {
						t.Errorf("Delete(%d) twice: want true then false", k)
					}
				}
				c, err := w.Commit(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return c.Layout
			}
			// open opens a committed local part, closed when the test ends; a remote part is
			// not opened here (nil).
			open := func(g backend.Gen, l backend.PassageLayout) backend.Passages {
				t.Helper()
				if !tc.local {
					return nil
				}
				p, err := tc.eng.Open(ctx, g, l, false)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.(*kpst.Store).Close() })
				return p
			}
			g1 := gen(1)
			l1 := write(g1, nil, 0, 6)
			if l1.Live != 6 || l1.Tombstones != 0 || l1.NextKey() != 6 || len(l1.Segments) != 1 {
				t.Fatalf("first generation's layout: %+v", l1)
			}
			base1 := open(g1, l1)
			if files, _ := os.ReadDir(g1.Dir); !tc.local && len(files) != 0 {
				t.Errorf("Qdrant's passage writer left files: %v", files)
			}

			g2 := gen(2)
			l2 := write(g2, &backend.PassageBase{Gen: g1, Layout: l1, Store: base1}, 6, 9, 1, 7)
			wantTomb := 0
			if tc.local {
				wantTomb = 2
			}
			if l2.Live != 7 || l2.Tombstones != wantTomb || l2.NextKey() != 9 || len(l2.Segments) != 2 || l2.Segments[1].Base != 6 || l2.Segments[1].Count != 3 {
				t.Fatalf("derived generation's layout: %+v", l2)
			}
			if !reflect.DeepEqual(l2.Segments[0], l1.Segments[0]) {
				t.Errorf("derived generation's first range %+v, the base's %+v", l2.Segments[0], l1.Segments[0])
			}

			// A generation that only deletes adds no key range.
			base2 := open(g2, l2)
			l3 := write(gen(3), &backend.PassageBase{Gen: g2, Layout: l2, Store: base2}, 9, 9, 3)
			if l3.Live != 6 || !reflect.DeepEqual(l3.Segments, l2.Segments) || l3.NextKey() != 9 {
				t.Fatalf("a generation that only deletes: %+v", l3)
			}
			if !tc.local {
				return
			}
			// The local parts read back: the base unchanged, the derived one without its
			// deleted keys.
			for _, c := range []struct {
				p    backend.Passages
				dead []uint32
			}{{base1, nil}, {base2, []uint32{1, 7}}} {
				n := 0
				err := c.p.Each(ctx, func(key uint32, p corpus.Passage) error {
					if p.Text != passage(int(key)).Text {
						return fmt.Errorf("key %d: %q", key, p.Text)
					}
					for _, d := range c.dead {
						if key == d {
							return fmt.Errorf("deleted key %d read", key)
						}
					}
					n++
					return nil
				})
				if err != nil || n != c.p.Live() {
					t.Errorf("Each: %d passages read of %d live: %v", n, c.p.Live(), err)
				}
			}
			if _, err := tc.eng.Open(ctx, g2, backend.PassageLayout{Segments: l2.Segments, Tombstones: 1, Live: 7}, false); err == nil {
				t.Errorf("Open with a layout that miscounts the tombstones succeeded")
			}
		})
	}
}
