package chat

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// storeClock is a settable clock for a store's idle times.
type storeClock struct{ now time.Time }

func (c *storeClock) Now() time.Time { return c.now }

// create starts conversation id of owner, as a first turn that succeeds does.
func create(t *testing.T, s *Store, owner, id string) error {
	t.Helper()
	h, err := s.acquire(context.Background(), owner, id, true)
	if err != nil {
		return err
	}
	defer h.release()
	return h.save()
}

// exists looks without using: Get would make the conversation the most recently used.
func exists(s *Store, owner, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.entries[key(owner, id)]
	return ok
}

// Reading a conversation waits for its turn in progress only until the reader's context ends,
// then reads it once the turn is over.
func TestStoreGetWaitsForTheTurnUntilItsContextEnds(t *testing.T) {
	s, err := OpenStore(StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := create(t, s, "o", "conv1"); err != nil {
		t.Fatal(err)
	}
	h, err := s.acquire(context.Background(), "o", "conv1", false) // a turn in progress
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Get(ctx, "o", "conv1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get during a turn: %v, want the context's deadline", err)
	}
	h.release()
	if c, err := s.Get(context.Background(), "o", "conv1"); err != nil || c.ID != "conv1" {
		t.Fatalf("Get after the turn: %+v %v", c, err)
	}
}

// One owner's conversations evict only its own: past its quota its oldest go, and at the
// store's cap it evicts its own or another's only once that one has idled EvictIdle; an owner
// with none in a store full of others' recent ones is refused, with when to retry.
func TestStoreOwnerQuotaAndFullStore(t *testing.T) {
	clock := &storeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := OpenStore(StoreOptions{MaxConversations: 4, MaxConversationsPerOwner: 2, EvictIdle: time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	step := func(d time.Duration) { clock.now = clock.now.Add(d) }
	for _, c := range []struct{ owner, id string }{{"a", "a1"}, {"a", "a2"}, {"a", "a3"}, {"b", "b1"}, {"c", "c1"}} {
		if err := create(t, s, c.owner, c.id); err != nil {
			t.Fatalf("create %s: %v", c.id, err)
		}
		step(time.Minute)
	}
	// a's third evicted its first (quota 2); a2, a3, b1, c1 fill the store.
	want := map[string]bool{"a1": false, "a2": true, "a3": true, "b1": true, "c1": true}
	check := func(when string) {
		t.Helper()
		for id, ok := range want {
			if got := exists(s, id[:1], id); got != ok {
				t.Errorf("%s: %s kept %v, want %v", when, id, got, ok)
			}
		}
	}
	check("after the quota")

	// d has none and everyone else's are minutes old: refused, told when a2 (created at
	// minute 1, now 5) may go.
	err = create(t, s, "d", "d1")
	var full *StoreFullError
	if !errors.Is(err, ErrStoreFull) || !errors.As(err, &full) || full.RetryAfter != time.Hour-4*time.Minute {
		t.Fatalf("d1 in a full store: %v (%+v)", err, full)
	}
	check("after the refusal")

	// b at the cap evicts its own, not a2 (the least recently used, a's).
	if err := create(t, s, "b", "b2"); err != nil {
		t.Fatal(err)
	}
	want["b1"], want["b2"] = false, true
	check("b's second")

	// An hour later a2 has idled EvictIdle (and the TTL is a week): d may evict it.
	step(time.Hour)
	if err := create(t, s, "d", "d1"); err != nil {
		t.Fatalf("d1 once a2 idled: %v", err)
	}
	want["a2"], want["d1"] = false, true
	check("d's first")

	st := s.Stats()
	if st.Conversations != 4 || st.Owners != 4 || st.Refused != 1 || st.Evicted[EvictedOwnerQuota] != 1 || st.Evicted[EvictedStoreFull] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// The session secret persists with the conversations, and a memory store makes its own.
func TestStoreSessionSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := OpenStore(StoreOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	first := s.SessionSecret()
	s.Close()
	s, err = OpenStore(StoreOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m1, _ := OpenStore(StoreOptions{})
	m2, _ := OpenStore(StoreOptions{})
	if len(first) != 32 || string(s.SessionSecret()) != string(first) {
		t.Errorf("secret after reopening: %x, first %x", s.SessionSecret(), first)
	}
	if len(m1.SessionSecret()) != 32 || string(m1.SessionSecret()) == string(m2.SessionSecret()) || string(m1.SessionSecret()) == string(first) {
		t.Error("memory stores share a secret")
	}
}

// Owner counts survive a reopen, so the quota holds across restarts.
func TestStoreOwnerQuotaAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	clock := &storeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := StoreOptions{Path: path, MaxConversationsPerOwner: 2, Now: clock.Now}
	s, err := OpenStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"x1", "x2"} {
		if err := create(t, s, "a", id); err != nil {
			t.Fatal(err)
		}
		clock.now = clock.now.Add(time.Minute)
	}
	s.Close()
	if s, err = OpenStore(opts); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := create(t, s, "a", "x3"); err != nil {
		t.Fatal(err)
	}
	if exists(s, "a", "x1") || !exists(s, "a", "x2") || !exists(s, "a", "x3") {
		t.Errorf("after a restart the quota evicted: x1 %v x2 %v x3 %v", exists(s, "a", "x1"), exists(s, "a", "x2"), exists(s, "a", "x3"))
	}
}
