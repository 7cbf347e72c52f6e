package chat

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/internal/atomicfile"
)

// Conversation is the state of one dialogue, kept per conversation id.
type Conversation struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Turns   []Turn    `json:"turns"`
	// Memory is MPC's memory pool: persona lines and summarised facts, with their embeddings.
	Memory []MemoryItem `json:"memory,omitempty"`
	// SummarizedThrough is how many turns MPC's summarizer has already read.
	SummarizedThrough int `json:"summarized_through,omitempty"`
	// Topic is the fine-grained topic the commonsense stage tracks.
	Topic string `json:"topic,omitempty"`
}

// Turn is one user message and the bot's reply, with everything behind the reply.
type Turn struct {
	Index    int           `json:"index"` // 0-based
	Pipeline string        `json:"pipeline"`
	User     string        `json:"user"`
	Bot      string        `json:"bot"`
	Time     time.Time     `json:"time"`
	Duration time.Duration `json:"duration_ns"`
	Stages   []StageTrace  `json:"stages"`
	Passages []PassageRef  `json:"passages,omitempty"`
	// Citations are the passages the reply was built from (the facts a WikiChat draft used,
	// MSDP's retrieved knowledge), each once; Passages has everything retrieved.
	Citations []PassageRef `json:"citations,omitempty"`
	Usage     Usage        `json:"usage"`
}

// MemoryItem is one entry of MPC's memory pool.
type MemoryItem struct {
	About  string    `json:"about"` // "persona", "user" or "bot"
	Text   string    `json:"text"`
	Turn   int       `json:"turn"` // the turn after which it was written; -1 for the persona
	Vector []float32 `json:"vector,omitempty"`
}

// history returns the last n turns as prompt turns (n <= 0: all).
func (c *Conversation) history(n int) []PromptTurn {
	turns := c.Turns
	if n > 0 && len(turns) > n {
		turns = turns[len(turns)-n:]
	}
	out := make([]PromptTurn, 0, 2*len(turns))
	for _, t := range turns {
		out = append(out, PromptTurn{"User", clip(t.User, MaxHistoryTurnBytes)}, PromptTurn{"Bot", clip(t.Bot, MaxHistoryTurnBytes)})
	}
	return out
}

// earlierQueries returns the searches the query stage planned in the last n turns, oldest first,
// read back from their traces.
func (c *Conversation) earlierQueries(n int) []string {
	turns := c.Turns
	if n > 0 && len(turns) > n {
		turns = turns[len(turns)-n:]
	}
	var out []string
	for _, t := range turns {
		for _, st := range t.Stages {
			if st.Stage != StageQuery || len(st.Output) == 0 {
				continue
			}
			var p QueryPlan
			if json.Unmarshal(st.Output, &p) == nil && p.Search && p.Query != "" {
				out = append(out, p.Query)
			}
		}
	}
	return out
}

// Store keeps conversations in memory and, when Dir is set, one JSON file per conversation,
// written atomically after every turn so that a crash loses at most the turn in flight.
type Store struct {
	dir   string
	mu    sync.Mutex
	convs map[string]*Conversation
	locks map[string]*sync.Mutex
}

// NewStore opens a store; dir "" keeps conversations in memory only.
func NewStore(dir string) (*Store, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("conversation store: %w", err)
		}
	}
	return &Store{dir: dir, convs: map[string]*Conversation{}, locks: map[string]*sync.Mutex{}}, nil
}

var idRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ErrBadConversationID is returned for ids that are not 1-64 of [A-Za-z0-9_-].
var ErrBadConversationID = errors.New("conversation id must be 1-64 characters of A-Z a-z 0-9 _ -")

// NewConversationID returns a random id.
func NewConversationID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// acquire locks conversation id for one turn and returns it, loading it from disk or creating
// it. Turns of one conversation run one at a time; different conversations run in parallel.
func (s *Store) acquire(id string, now time.Time) (*Conversation, func(), error) {
	if !idRe.MatchString(id) {
		return nil, nil, fmt.Errorf("%w: %q", ErrBadConversationID, truncate(id, 80))
	}
	s.mu.Lock()
	l, ok := s.locks[id]
	if !ok {
		l = &sync.Mutex{}
		s.locks[id] = l
	}
	s.mu.Unlock()
	l.Lock()
	s.mu.Lock()
	c, ok := s.convs[id]
	s.mu.Unlock()
	if !ok {
		var err error
		if c, err = s.load(id); err != nil {
			l.Unlock()
			return nil, nil, err
		}
		if c == nil {
			c = &Conversation{ID: id, Created: now}
		}
		s.mu.Lock()
		s.convs[id] = c
		s.mu.Unlock()
	}
	return c, l.Unlock, nil
}

// Get returns a copy of a conversation, or false when it does not exist. It does not create
// one, so looking up unknown ids costs no memory.
func (s *Store) Get(id string) (Conversation, bool, error) {
	if !idRe.MatchString(id) {
		return Conversation{}, false, fmt.Errorf("%w: %q", ErrBadConversationID, truncate(id, 80))
	}
	s.mu.Lock()
	_, cached := s.convs[id]
	s.mu.Unlock()
	if !cached {
		c, err := s.load(id)
		if err != nil || c == nil {
			return Conversation{}, false, err
		}
	}
	c, release, err := s.acquire(id, time.Now())
	if err != nil {
		return Conversation{}, false, err
	}
	defer release()
	cp := *c
	cp.Turns = append([]Turn(nil), c.Turns...)
	cp.Memory = append([]MemoryItem(nil), c.Memory...)
	return cp, true, nil
}

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *Store) load(id string) (*Conversation, error) {
	if s.dir == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading conversation: %w", err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("loading conversation %s: %w", s.path(id), err)
	}
	return &c, nil
}

// save writes c atomically (see internal/atomicfile). Callers hold c's lock.
func (s *Store) save(c *Conversation) error {
	if s.dir == "" {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("saving conversation %s: %w", c.ID, err)
	}
	return atomicfile.WriteFile(s.path(c.ID), b, atomicfile.Options{Perm: 0o600})
}
