package backend

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFilterMatch(t *testing.T) {
	d := func(s string) time.Time { v, _ := time.Parse("2006-01-02", s); return v }
	tests := []struct {
		name   string
		f      Filter
		date   time.Time
		source string
		want   bool
	}{
		{"no filter, undated", Filter{}, time.Time{}, "", true},
		{"from, on the day", Filter{DateFrom: d("2005-01-01")}, d("2005-01-01"), "", true},
		{"from, before", Filter{DateFrom: d("2005-01-01")}, d("2004-12-31"), "", false},
		{"from, undated fails", Filter{DateFrom: d("2005-01-01")}, time.Time{}, "", false},
		{"to, on the day", Filter{DateTo: d("2005-01-01")}, d("2005-01-01"), "", true},
		{"to, after", Filter{DateTo: d("2005-01-01")}, d("2005-01-02"), "", false},
		{"to, undated fails", Filter{DateTo: d("2005-01-01")}, time.Time{}, "", false},
		{"source listed", Filter{Sources: []string{"a", "b"}}, time.Time{}, "b", true},
		{"source not listed", Filter{Sources: []string{"a", "b"}}, time.Time{}, "c", false},
		{"source is case-sensitive", Filter{Sources: []string{"a"}}, time.Time{}, "A", false},
		{"both, both pass", Filter{DateFrom: d("2000-01-01"), Sources: []string{"a"}}, d("2001-01-01"), "a", true},
		{"both, date fails", Filter{DateFrom: d("2000-01-01"), Sources: []string{"a"}}, d("1999-01-01"), "a", false},
		{"empty source list is no filter", Filter{Sources: []string{}}, time.Time{}, "c", true},
		{"none passes nothing", Filter{None: true}, d("2001-01-01"), "a", false},
		{"none beats a passing source", Filter{None: true, Sources: []string{"a"}}, time.Time{}, "a", false},
	}
	for _, tc := range tests {
		if got := tc.f.Match(tc.date, tc.source); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
		if tc.f.Empty() != (!tc.f.None && tc.f.DateFrom.IsZero() && tc.f.DateTo.IsZero() && len(tc.f.Sources) == 0) {
			t.Errorf("%s: Empty = %v", tc.name, tc.f.Empty())
		}
	}
}

type mapMeta map[uint32]string // key -> source; a missing key is unreadable

func (m mapMeta) Meta(ctx context.Context, key uint32) (time.Time, string, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, "", err // as a remote Meta whose request the context ended
	}
	s, ok := m[key]
	if !ok {
		return time.Time{}, "", fmt.Errorf("passage key %d: bad offsets", key)
	}
	return time.Time{}, s, nil
}

// Language and BlockType: the passages of mapMeta are prose of an index of one language.
func (m mapMeta) Language(context.Context, uint32) (string, error)  { return "", nil }
func (m mapMeta) BlockType(context.Context, uint32) (string, error) { return "", nil }

// TestKeeper: a Keeper passes what the filter passes, fails an unreadable key and keeps its
// error, is safe for concurrent use, and refuses to be built without metadata.
func TestKeeper(t *testing.T) {
	meta := mapMeta{1: "wiki", 2: "news", 3: "wiki"}
	k, err := NewKeeper(t.Context(), meta, Filter{Sources: []string{"wiki"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]bool, 4)
	for key := range uint32(4) {
		wg.Add(1)
		go func() { defer wg.Done(); got[key] = k.Keep(key) }()
	}
	wg.Wait()
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keep = %v, want %v", got, want)
	}
	if err := k.Err(); err == nil || !strings.Contains(err.Error(), "passage key 0") {
		t.Errorf("Err = %v, want the error of key 0", err)
	}
	if ok, _ := NewKeeper(t.Context(), meta, Filter{Sources: []string{"wiki"}}); ok.Keep(1) && ok.Err() != nil {
		t.Error("a readable key left an error")
	}
	if _, err := NewKeeper(t.Context(), nil, Filter{Sources: []string{"x"}}); err == nil {
		t.Error("NewKeeper without metadata succeeded")
	}
}

// TestKeeperContext: a Keeper asks its Meta under the context of the search it was made for,
// so a search whose context ends fails with that error instead of filtering everything out.
func TestKeeperContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	k, err := NewKeeper(ctx, mapMeta{1: "wiki"}, Filter{Sources: []string{"wiki"}})
	if err != nil {
		t.Fatal(err)
	}
	if !k.Keep(1) || k.Err() != nil {
		t.Fatalf("before cancel: Keep(1) false or Err %v", k.Err())
	}
	cancel()
	if k.Keep(1) {
		t.Error("Keep passed a key whose metadata could not be read")
	}
	if err := k.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err = %v, want context.Canceled", err)
	}
}
