package chat

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// StoreOptions configure a Store. A zero field takes its default.
type StoreOptions struct {
	// Path is the bbolt database file holding the conversations, so that they survive a
	// restart; "" keeps them in memory only.
	Path string
	// MaxConversations bounds the conversations kept, all owners together. Creating one
	// more at the cap evicts the least recently used conversation if it is the creator's own
	// or has been idle for EvictIdle; else the creator's own least recently used one; else
	// (an owner with none, in a store of others' recent conversations) the creation is refused
	// with a *StoreFullError. One owner never evicts another's recent conversations. Default
	// 10,000.
	MaxConversations int
	// MaxConversationsPerOwner bounds one owner's conversations: creating one more evicts the
	// owner's own least recently used (it is refused for nobody: a user who never deletes
	// loses only its oldest conversation, as a browser's history forgets). Default 100.
	MaxConversationsPerOwner int
	// EvictIdle is how long another owner's conversation must have been idle before a full
	// store evicts it for a new one. Default 24 hours.
	EvictIdle time.Duration
	// IdleTTL forgets a conversation nobody has continued for this long. Default 7 days.
	IdleTTL time.Duration
	// MaxTurns bounds the turns a conversation keeps; older ones are dropped (the pipelines
	// show only the last few to the LLM). Default 100.
	MaxTurns int
	// MaxHistoryBytes bounds the stored turns of one conversation (their JSON, traces
	// included); the oldest are dropped past it. Default 1 MiB.
	MaxHistoryBytes int
	// MaxMemoryBytes bounds one conversation's MPC memory pool (texts and vectors); the
	// oldest summarised facts, never the persona, are forgotten past it. Default 256 KiB.
	MaxMemoryBytes int
	// Now is the clock of idle times; default time.Now. Tests inject one.
	Now    func() time.Time
	Logger *slog.Logger // default: discard
}

// Defaults of StoreOptions. Worst case a full store holds MaxConversations x
// (MaxHistoryBytes + MaxMemoryBytes): about 12 GiB on disk at the defaults, held in memory
// when Path is "" (lower the caps for a memory-only server with many users).
const (
	DefaultMaxConversations = 10000
	// DefaultMaxConversationsPerOwner is StoreOptions.MaxConversationsPerOwner: a hundred
	// dialogues is more than a person keeps open, and a hundred owners at the cap fill
	// only 1% of DefaultMaxConversations.
	DefaultMaxConversationsPerOwner = 100
	DefaultEvictIdle                = 24 * time.Hour
	DefaultIdleTTL                  = 7 * 24 * time.Hour
	DefaultMaxTurns                 = 100
	DefaultMaxHistoryBytes          = 1 << 20
	DefaultMaxMemoryBytes           = 256 << 10
)

// Flags registers the store's limits (not its path, which the caller resolves) with the
// defaults OpenStore applies, prefixed "chat-" as serve flags.
func (o *StoreOptions) Flags(fs *flag.FlagSet) {
	o.setDefaults()
	fs.IntVar(&o.MaxConversations, "chat-max-conversations", o.MaxConversations, "most `conversations` kept, all owners together; at the cap a new one evicts the creator's own oldest or one idle for --chat-evict-idle, else it is refused (503)")
	fs.IntVar(&o.MaxConversationsPerOwner, "chat-max-conversations-per-owner", o.MaxConversationsPerOwner, "most `conversations` one owner (API key, session) keeps; a new one past it evicts the owner's own least recently used")
	fs.DurationVar(&o.EvictIdle, "chat-evict-idle", o.EvictIdle, "a full store evicts another owner's conversation for a new one only once it has been idle this `duration`")
	fs.DurationVar(&o.IdleTTL, "chat-idle-ttl", o.IdleTTL, "a conversation idle for this `duration` is deleted")
	fs.IntVar(&o.MaxTurns, "chat-max-turns", o.MaxTurns, "most `turns` one conversation keeps; the oldest are dropped")
	fs.IntVar(&o.MaxHistoryBytes, "chat-max-history-bytes", o.MaxHistoryBytes, "most `bytes` of turns (JSON, traces included) one conversation keeps; the oldest are dropped")
	fs.IntVar(&o.MaxMemoryBytes, "chat-max-memory-bytes", o.MaxMemoryBytes, "most `bytes` of MPC memory one conversation keeps; the oldest facts are forgotten")
}

func (o *StoreOptions) setDefaults() {
	if o.MaxConversations == 0 {
		o.MaxConversations = DefaultMaxConversations
	}
	if o.MaxConversationsPerOwner == 0 {
		o.MaxConversationsPerOwner = DefaultMaxConversationsPerOwner
	}
	if o.EvictIdle == 0 {
		o.EvictIdle = DefaultEvictIdle
	}
	if o.IdleTTL == 0 {
		o.IdleTTL = DefaultIdleTTL
	}
	if o.MaxTurns == 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.MaxHistoryBytes == 0 {
		o.MaxHistoryBytes = DefaultMaxHistoryBytes
	}
	if o.MaxMemoryBytes == 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// ErrConversationNotFound is returned for a conversation that does not exist, expired, was
// evicted or deleted, or belongs to another owner: the four are not told apart, so that an id
// leaks nothing about other users.
var ErrConversationNotFound = errors.New("no such conversation")

// ErrStoreFull is matched (errors.Is) by a *StoreFullError: the store is at MaxConversations,
// and no conversation may be evicted for the new one.
var ErrStoreFull = errors.New("conversation store full")

// StoreFullError refuses a new conversation in a full store. RetryAfter is when the least
// recently used conversation will have been idle for EvictIdle, so that it may go.
type StoreFullError struct {
	Max        int
	RetryAfter time.Duration
}

func (e *StoreFullError) Error() string {
	return fmt.Sprintf("conversation store full: %d conversations, none of them yours or idle long enough to evict (--chat-max-conversations, --chat-evict-idle)", e.Max)
}

func (e *StoreFullError) Is(target error) bool { return target == ErrStoreFull }

// Reasons the store removes a conversation nobody deleted (StoreStats.Evicted).
const (
	EvictedIdle       = "idle"        // idle past IdleTTL
	EvictedOwnerQuota = "owner_quota" // its owner created one more past MaxConversationsPerOwner
	EvictedStoreFull  = "store_full"  // the store was at MaxConversations
)

// StoreStats are a store's counts, for metrics.
type StoreStats struct {
	Conversations int
	Owners        int
	Evicted       map[string]int64 // by reason: EvictedIdle, ...
	Refused       int64            // new conversations refused: the store was full
}

// Store keeps conversations, each bound to an owner, with an LRU of their last use. With a
// Path every turn is written in a bbolt transaction, so a crash loses at most the turn in
// flight. Safe for concurrent use.
type Store struct {
	opts    StoreOptions
	db      *bolt.DB // nil: memory only
	secret  []byte   // SessionSecret
	mu      sync.Mutex
	entries map[string]*entry // by key (owner hash / id)
	lru     *list.List        // of *entry, most recently used first
	owned   map[string]int    // conversations per owner hash
	evicted map[string]int64  // by reason
	refused int64
}

// entry is what the store keeps in memory of one conversation: its use, its turn lock and,
// memory-only, its body.
type entry struct {
	key      string
	lastUsed time.Time
	elem     *list.Element
	turn     chan struct{} // held by the turn or read in progress: one at a time (lock)
	gone     bool          // evicted or deleted; guarded by Store.mu
	mem      *Conversation // memory-only stores
}

// record is the stored value of one conversation.
type record struct {
	Version      int          `json:"version"`
	LastUsed     time.Time    `json:"last_used"`
	Conversation Conversation `json:"conversation"`
}

const (
	recordVersion = 1
	bucketName    = "conversations"
	// metaBucket holds the store's own values: the session secret.
	metaBucket  = "meta"
	secretKey   = "session_secret"
	secretBytes = 32
)

// OpenStore opens (or creates) the store at opts.Path, dropping what expired while it was
// closed.
func OpenStore(opts StoreOptions) (*Store, error) {
	opts.setDefaults()
	if opts.MaxConversations < 0 || opts.MaxConversationsPerOwner < 0 || opts.IdleTTL < 0 || opts.EvictIdle < 0 ||
		opts.MaxTurns < 0 || opts.MaxHistoryBytes < 0 || opts.MaxMemoryBytes < 0 {
		return nil, errors.New("conversation store: negative limit")
	}
	s := &Store{opts: opts, entries: map[string]*entry{}, lru: list.New(), owned: map[string]int{}, evicted: map[string]int64{}}
	if opts.Path == "" {
		s.secret = make([]byte, secretBytes)
		_, _ = rand.Read(s.secret)
		return s, nil
	}
	// A second server on the same file fails after a second instead of waiting for ever on
	// bbolt's file lock.
	db, err := bolt.Open(opts.Path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening conversation store %s: %w", opts.Path, err)
	}
	s.db = db
	var es []*entry
	err = db.Update(func(tx *bolt.Tx) error {
		if s.secret, err = loadSecret(tx); err != nil {
			return err
		}
		b, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			var r struct {
				Version  int       `json:"version"`
				LastUsed time.Time `json:"last_used"`
			}
			if err := json.Unmarshal(v, &r); err != nil || r.Version != recordVersion {
				// Not ours to read: kept on disk, not served, reported once.
				opts.Logger.Warn("conversation store: unreadable record skipped", "key", string(k), "version", r.Version, "err", err)
				return nil
			}
			es = append(es, &entry{key: string(k), lastUsed: r.LastUsed, turn: make(chan struct{}, 1)})
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reading conversation store %s: %w", opts.Path, err)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].lastUsed.After(es[j].lastUsed) })
	for _, e := range es {
		e.elem = s.lru.PushBack(e)
		s.entries[e.key] = e
		s.owned[ownerOf(e.key)]++
	}
	s.mu.Lock()
	err = s.evictLocked(0)
	s.mu.Unlock()
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// loadSecret reads the store's session secret, creating it in a new store: it persists with
// the conversations, so that the session tokens that own them survive a restart with them.
func loadSecret(tx *bolt.Tx) ([]byte, error) {
	b, err := tx.CreateBucketIfNotExists([]byte(metaBucket))
	if err != nil {
		return nil, err
	}
	if v := b.Get([]byte(secretKey)); len(v) == secretBytes {
		return bytes.Clone(v), nil
	}
	sec := make([]byte, secretBytes)
	if _, err := rand.Read(sec); err != nil {
		return nil, err
	}
	return sec, b.Put([]byte(secretKey), sec)
}

// SessionSecret is a random secret of the store, kept in its file with the conversations
// (a memory-only store makes a new one per process). A server signs the session tokens it
// issues with it (server.Options.SessionSecret), so tokens live as long as the
// conversations they own. Never log it.
func (s *Store) SessionSecret() []byte { return bytes.Clone(s.secret) }

// Stats returns the store's counts.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return StoreStats{Conversations: len(s.entries), Owners: len(s.owned), Evicted: maps.Clone(s.evicted), Refused: s.refused}
}

// Close closes the database; the Store must not be used after.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Len is the number of conversations kept.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

var idRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ErrBadConversationID is returned for ids that are not 1-64 of [A-Za-z0-9_-].
var ErrBadConversationID = errors.New("conversation id must be 1-64 characters of A-Z a-z 0-9 _ -")

// NewConversationID returns 128 random bits in lower-case base32 (26 characters): ids are
// unguessable, and safe in a URL path.
func NewConversationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return lowerBase32.EncodeToString(b[:])
}

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// key names a conversation in the store: a hash of the owner, so that no API key or session
// token is ever written to disk, then the id. Looking an id up under another owner finds
// nothing.
func key(owner, id string) string { return ownerHash(owner) + "/" + id }

func ownerHash(owner string) string {
	h := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(h[:16])
}

// ownerOf is the owner hash of a key.
func ownerOf(k string) string {
	o, _, _ := strings.Cut(k, "/")
	return o
}

// held is a conversation locked for one turn.
type held struct {
	s       *Store
	e       *entry
	conv    *Conversation
	created bool // started by this turn
	saved   bool
}

// acquire locks conversation id of owner for one turn and returns it. An unknown id is
// ErrConversationNotFound unless create is set, which starts it under that id. It waits for
// the turn in progress, if any, until ctx ends.
func (s *Store) acquire(ctx context.Context, owner, id string, create bool) (*held, error) {
	if !idRe.MatchString(id) {
		return nil, fmt.Errorf("%w: %q", ErrBadConversationID, truncate(id, 80))
	}
	k := key(owner, id)
	now := s.opts.Now()
	s.mu.Lock()
	e, ok := s.entries[k]
	if ok && now.Sub(e.lastUsed) > s.opts.IdleTTL {
		if err := s.evictOneLocked(e, EvictedIdle); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		ok = false
	}
	if !ok {
		if !create {
			s.mu.Unlock()
			return nil, ErrConversationNotFound
		}
		if err := s.makeRoomLocked(ownerOf(k)); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		e = &entry{key: k, lastUsed: now, mem: &Conversation{ID: id, Created: now.UTC()}, turn: make(chan struct{}, 1)}
		e.elem = s.lru.PushFront(e)
		s.entries[k] = e
		s.owned[ownerOf(k)]++
	} else {
		e.lastUsed = now
		s.lru.MoveToFront(e.elem)
	}
	s.mu.Unlock()

	if err := e.lock(ctx); err != nil {
		return nil, err
	}
	h := &held{s: s, e: e, created: !ok}
	if s.db == nil || e.mem != nil {
		// Memory-only, or created just now: a persisted store writes it at the first save.
		h.conv = e.mem
		if s.db != nil {
			e.mem = nil
		}
		return h, nil
	}
	c, err := s.load(k)
	if err != nil || c == nil {
		e.unlock()
		if err == nil {
			err = ErrConversationNotFound // deleted while this turn waited for the lock
		}
		return nil, err
	}
	h.conv = c
	return h, nil
}

// release unlocks the conversation. One started by a turn that failed is forgotten: its id
// was never returned, so nobody could continue it.
func (h *held) release() {
	if h.created && !h.saved {
		h.s.mu.Lock()
		if !h.e.gone {
			_ = h.s.removeLocked(h.e) // nothing was written, so nothing can fail to delete
		}
		h.s.mu.Unlock()
	}
	h.e.unlock()
}

// lock takes the conversation's turn lock, waiting for the turn that holds it until ctx ends.
// A free lock is taken whatever ctx says, so that one created for this call is always held.
func (e *entry) lock(ctx context.Context) error {
	select {
	case e.turn <- struct{}{}:
		return nil
	default:
	}
	select {
	case e.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the conversation's turn in progress: %w", ctx.Err())
	}
}

func (e *entry) unlock() { <-e.turn }

// save applies the size caps to the conversation and writes it. A conversation deleted or
// evicted during the turn stays gone.
func (h *held) save() error {
	s := h.s
	capConversation(h.conv, s.opts)
	now := s.opts.Now()
	s.mu.Lock()
	gone := h.e.gone
	if !gone {
		h.e.lastUsed = now
	}
	s.mu.Unlock()
	if gone || s.db == nil {
		h.saved = true
		return nil
	}
	b, err := json.Marshal(record{Version: recordVersion, LastUsed: now.UTC(), Conversation: *h.conv})
	if err != nil {
		return fmt.Errorf("saving conversation %s: %w", h.conv.ID, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketName)).Put([]byte(h.e.key), b) })
	if err != nil {
		return fmt.Errorf("saving conversation %s: %w", h.conv.ID, err)
	}
	h.saved = true
	return nil
}

// Get returns a copy of owner's conversation id, or ErrConversationNotFound. It waits for the
// conversation's turn in progress, if any, until ctx ends.
func (s *Store) Get(ctx context.Context, owner, id string) (Conversation, error) {
	h, err := s.acquire(ctx, owner, id, false)
	if err != nil {
		return Conversation{}, err
	}
	defer h.release()
	cp := *h.conv
	cp.Turns = append([]Turn(nil), h.conv.Turns...)
	cp.Memory = append([]MemoryItem(nil), h.conv.Memory...)
	return cp, nil
}

// Delete removes owner's conversation id, or returns ErrConversationNotFound.
func (s *Store) Delete(owner, id string) error {
	if !idRe.MatchString(id) {
		return ErrConversationNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key(owner, id)]
	if !ok || s.opts.Now().Sub(e.lastUsed) > s.opts.IdleTTL {
		return ErrConversationNotFound
	}
	return s.removeLocked(e)
}

// evictLocked drops the conversations idle past the TTL (the LRU's tail), then the least
// recently used until room more fit under MaxConversations: at open, where a lowered cap is
// the operator's decision, whoever's they are.
func (s *Store) evictLocked(room int) error {
	now := s.opts.Now()
	for el := s.lru.Back(); el != nil; el = s.lru.Back() {
		e := el.Value.(*entry)
		reason := EvictedIdle
		if now.Sub(e.lastUsed) <= s.opts.IdleTTL {
			if len(s.entries)+room <= s.opts.MaxConversations {
				return nil
			}
			reason = EvictedStoreFull
		}
		if err := s.evictOneLocked(e, reason); err != nil {
			return err
		}
	}
	return nil
}

// makeRoomLocked makes room for one more conversation of owner (an owner hash): it sweeps
// what idled past the TTL, evicts the owner's oldest past its quota, and, at the store's cap,
// the least recently used conversation when it is owner's own or idle for EvictIdle, else
// owner's oldest; with neither, it refuses.
func (s *Store) makeRoomLocked(owner string) error {
	now := s.opts.Now()
	for el := s.lru.Back(); el != nil; el = s.lru.Back() {
		e := el.Value.(*entry)
		if now.Sub(e.lastUsed) <= s.opts.IdleTTL {
			break
		}
		if err := s.evictOneLocked(e, EvictedIdle); err != nil {
			return err
		}
	}
	if s.owned[owner] >= s.opts.MaxConversationsPerOwner {
		if err := s.evictOneLocked(s.oldestOfLocked(owner), EvictedOwnerQuota); err != nil {
			return err
		}
	}
	if len(s.entries) < s.opts.MaxConversations {
		return nil
	}
	victim := s.lru.Back().Value.(*entry)
	idle := now.Sub(victim.lastUsed)
	if ownerOf(victim.key) != owner && idle < s.opts.EvictIdle {
		victim = s.oldestOfLocked(owner)
	}
	if victim == nil {
		s.refused++
		return &StoreFullError{Max: s.opts.MaxConversations, RetryAfter: s.opts.EvictIdle - idle}
	}
	return s.evictOneLocked(victim, EvictedStoreFull)
}

// oldestOfLocked is owner's least recently used conversation, nil when it has none.
func (s *Store) oldestOfLocked(owner string) *entry {
	if s.owned[owner] == 0 {
		return nil
	}
	for el := s.lru.Back(); el != nil; el = el.Prev() {
		if e := el.Value.(*entry); ownerOf(e.key) == owner {
			return e
		}
	}
	return nil
}

func (s *Store) evictOneLocked(e *entry, reason string) error {
	if err := s.removeLocked(e); err != nil {
		return err
	}
	s.evicted[reason]++
	s.opts.Logger.Info("conversation evicted", "reason", reason, "owner", ownerOf(e.key)[:8])
	return nil
}

func (s *Store) removeLocked(e *entry) error {
	if s.db != nil {
		err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketName)).Delete([]byte(e.key)) })
		if err != nil {
			return fmt.Errorf("deleting conversation: %w", err)
		}
	}
	s.lru.Remove(e.elem)
	delete(s.entries, e.key)
	if o := ownerOf(e.key); s.owned[o] <= 1 {
		delete(s.owned, o)
	} else {
		s.owned[o]--
	}
	e.gone = true
	return nil
}

func (s *Store) load(k string) (*Conversation, error) {
	var r *record
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket([]byte(bucketName)).Get([]byte(k))
		if v == nil {
			return nil
		}
		r = &record{}
		return json.Unmarshal(v, r)
	})
	if err != nil {
		return nil, fmt.Errorf("loading conversation %s from %s: %w", k, s.opts.Path, err)
	}
	if r == nil {
		return nil, nil
	}
	return &r.Conversation, nil
}
