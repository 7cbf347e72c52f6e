package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TopicalChatOptions configures DeriveTopicalChat.
type TopicalChatOptions struct {
	Splits       []string // conversation files to read; default {"test_freq", "test_rare"}
	HistoryTurns int      // turns of history per example; default 3
	Max          int      // stop after this many examples; 0 means all
}

// TopicalChatStats counts turns by outcome. Examples + sum(Skipped) = turns read.
type TopicalChatStats struct {
	Conversations int
	Examples      int
	Skipped       map[string]int // by reason: "first turn", "not grounded in a reading-set entity", ...
}

// DeriveTopicalChat turns Topical-Chat (the layout of github.com/alexa/Topical-Chat: conversations/,
// reading_sets/pre-build/, wiki.json) into bank examples, one JSON line each: every turn grounded
// in a reading-set entity (FS1-FS3) becomes an example whose topic is the entity, whose history
// is the turns before it, and whose knowledge is the sentence of the entity's Wikipedia lead
// sharing the most words with the turn. Turns grounded elsewhere are counted, not written.
func DeriveTopicalChat(ctx context.Context, dir string, w io.Writer, opts TopicalChatOptions) (TopicalChatStats, error) {
	st := TopicalChatStats{Skipped: map[string]int{}}
	if len(opts.Splits) == 0 {
		opts.Splits = []string{"test_freq", "test_rare"}
	}
	if opts.HistoryTurns <= 0 {
		opts.HistoryTurns = 3
	}
	leads, err := readWikiLeads(filepath.Join(dir, "wiki.json"))
	if err != nil {
		return st, err
	}
	enc := json.NewEncoder(w)
	for _, split := range opts.Splits {
		convs, err := readJSON[map[string]tcConversation](filepath.Join(dir, "conversations", split+".json"))
		if err != nil {
			return st, err
		}
		sets, err := readJSON[map[string]map[string]json.RawMessage](filepath.Join(dir, "reading_sets", "pre-build", split+".json"))
		if err != nil {
			return st, err
		}
		ids := make([]string, 0, len(convs))
		for id := range convs {
			ids = append(ids, id)
		}
		sort.Strings(ids) // deterministic output
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			st.Conversations++
			c := convs[id]
			for i, turn := range c.Content {
				if opts.Max > 0 && st.Examples >= opts.Max {
					return st, nil
				}
				e, reason := topicalExample(id, i, c, turn, sets[id], leads, opts.HistoryTurns)
				if reason != "" {
					st.Skipped[reason]++
					continue
				}
				if err := enc.Encode(e); err != nil {
					return st, fmt.Errorf("writing example %s: %w", e.ID, err)
				}
				st.Examples++
			}
		}
	}
	return st, nil
}

type tcConversation struct {
	Content []tcTurn `json:"content"`
}

type tcTurn struct {
	Message         string   `json:"message"`
	Agent           string   `json:"agent"`
	KnowledgeSource []string `json:"knowledge_source"`
}

type tcFact struct {
	Entity     string `json:"entity"`
	Shortened  *int   `json:"shortened_wiki_lead_section"`
	Summarized *int   `json:"summarized_wiki_lead_section"`
}

var fsRe = regexp.MustCompile(`^FS[1-3]$`)

func topicalExample(id string, i int, c tcConversation, turn tcTurn, set map[string]json.RawMessage, leads map[int]string, historyTurns int) (Example, string) {
	if i == 0 {
		return Example{}, "first turn"
	}
	if strings.TrimSpace(turn.Message) == "" {
		return Example{}, "empty message"
	}
	var fs string
	for _, k := range turn.KnowledgeSource {
		if fsRe.MatchString(k) {
			fs = k
			break
		}
	}
	if fs == "" {
		return Example{}, "not grounded in a reading-set entity"
	}
	var agentSet map[string]json.RawMessage
	if raw, ok := set[turn.Agent]; !ok || json.Unmarshal(raw, &agentSet) != nil {
		return Example{}, "no reading set for the agent"
	}
	var f tcFact
	if raw, ok := agentSet[fs]; !ok || json.Unmarshal(raw, &f) != nil {
		return Example{}, "reading-set entry missing"
	}
	var lead string
	switch {
	case f.Shortened != nil:
		lead = leads[*f.Shortened]
	case f.Summarized != nil:
		lead = leads[*f.Summarized]
	}
	if lead == "" {
		return Example{}, "lead text not found"
	}
	from := max(0, i-historyTurns)
	hist := make([]string, 0, i-from)
	for _, t := range c.Content[from:i] {
		hist = append(hist, strings.TrimSpace(t.Message))
	}
	return Example{
		ID:        id + ":" + strconv.Itoa(i),
		Topic:     f.Entity,
		History:   hist,
		Knowledge: bestSentence(lead, turn.Message),
		Response:  strings.TrimSpace(turn.Message),
	}, ""
}

var sentenceEnd = regexp.MustCompile(`([.!?])\s+`)

// bestSentence returns the sentence of text sharing the most distinct words with ref.
func bestSentence(text, ref string) string {
	sents := sentenceEnd.Split(strings.TrimSpace(text), -1)
	marks := sentenceEnd.FindAllStringSubmatch(text, -1)
	best, bestScore := "", -1.0
	for i, s := range sents {
		if i < len(marks) {
			s += marks[i][1]
		}
		if sc := OverlapRatio(ref, s); sc > bestScore {
			best, bestScore = s, sc
		}
	}
	return strings.TrimSpace(best)
}

// readWikiLeads inverts Topical-Chat's wiki.json ({kind: {text: id}}) into id -> text.
func readWikiLeads(path string) (map[int]string, error) {
	m, err := readJSON[map[string]map[string]int](path)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, byText := range m {
		for text, id := range byText {
			out[id] = text
		}
	}
	return out, nil
}

func readJSON[T any](path string) (T, error) {
	var v T
	f, err := os.Open(path)
	if err != nil {
		return v, fmt.Errorf("topical-chat: %w", err)
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(&v); err != nil {
		return v, fmt.Errorf("topical-chat: decoding %s: %w", path, err)
	}
	return v, nil
}
