package synthcorpus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
)

// Options say what to generate. Passages is required; the rest have defaults.
type Options struct {
	// Passages is the number of records (passages) to write; at least 1.
	Passages int
	// Seed makes the output reproducible: the same Model, Seed and options give the same bytes.
	Seed uint64
	// MaxWords bounds a passage's words, "Title |" prefix included, as the indexer's splitter
	// does (0: DefaultMaxWords). Longer learned lengths are cut to it.
	MaxWords int
	// Progress, if set, is called with the passages written so far every ProgressEvery
	// passages and once at the end.
	Progress func(passages int)
	// ProgressEvery is the Progress interval in passages (0: 10,000).
	ProgressEvery int
	// Topics, when positive, gives the corpus that many topics (see TopicOf): each document
	// draws two, and TopicShare of its words come from them. 0: words are independent, and
	// the output is what it was before topics existed.
	Topics int
}

// DefaultMaxWords is Kairos's passage size (corpus.DefaultMaxWords).
const DefaultMaxWords = 120

// maxTopics bounds Options.Topics: a topic needs words of its own, and the real vocabulary
// the Model learns here has about a hundred thousand.
const maxTopics = 100000

// SetDefaults sets the zero fields to their defaults (MaxWords: DefaultMaxWords;
// ProgressEvery: 10,000 passages).
func (o *Options) SetDefaults() {
	if o.MaxWords == 0 {
		o.MaxWords = DefaultMaxWords
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 10000
	}
}

// Validate reports options that cannot be generated.
func (o Options) Validate() error {
	o.SetDefaults()
	switch {
	case o.Passages < 1:
		return fmt.Errorf("synthcorpus: %d passages: need at least 1", o.Passages)
	case o.MaxWords < 4:
		return fmt.Errorf("synthcorpus: MaxWords %d: need at least 4 (title, \"|\", body)", o.MaxWords)
	case o.ProgressEvery < 0:
		return fmt.Errorf("synthcorpus: ProgressEvery %d is negative", o.ProgressEvery)
	case o.Topics < 0 || o.Topics > maxTopics:
		return fmt.Errorf("synthcorpus: %d topics: want 0 to %d", o.Topics, maxTopics)
	}
	return nil
}

// Stats describe a generated corpus.
type Stats struct {
	Passages  int   `json:"passages"`
	Documents int   `json:"documents"`
	Words     int64 `json:"words"`      // words written, title prefixes included
	TailWords int64 `json:"tail_words"` // words drawn from the synthetic tail
}

// Record is one line of the output: a passage as `kairos index` reads JSON lines.
type Record struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`

	words, tail int // as counted in Stats
}

// Generate writes opts.Passages records to w, one JSON object a line, and returns what it
// wrote. The records of one synthetic document share its title and are numbered
// "s<doc>-<passage>".
func Generate(ctx context.Context, w io.Writer, m *Model, opts Options) (Stats, error) {
	if m == nil {
		return Stats{}, errors.New("synthcorpus: nil model")
	}
	if err := m.Validate(); err != nil {
		return Stats{}, err
	}
	if err := opts.Validate(); err != nil {
		return Stats{}, err
	}
	opts.SetDefaults()
	g := newGenerator(m, opts)
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var st Stats
	for st.Passages < opts.Passages {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		doc := g.document()
		st.Documents++
		for i, rec := range doc {
			if st.Passages == opts.Passages {
				break
			}
			rec.ID = "s" + strconv.Itoa(st.Documents) + "-" + strconv.Itoa(i)
			if err := enc.Encode(rec); err != nil {
				return st, fmt.Errorf("synthcorpus: writing passage %d: %w", st.Passages+1, err)
			}
			st.Passages++
			st.Words += int64(rec.words)
			st.TailWords += int64(rec.tail)
			if opts.Progress != nil && st.Passages%opts.ProgressEvery == 0 {
				opts.Progress(st.Passages)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("synthcorpus: writing: %w", err)
	}
	if opts.Progress != nil && st.Passages%opts.ProgressEvery != 0 {
		opts.Progress(st.Passages)
	}
	return st, nil
}

// generator holds the samplers of one Generate call.
type generator struct {
	m                         *Model
	rng                       *rand.Rand
	vocab                     *alias
	tail                      zipfTail
	passageLen, titleLen, per *alias
	maxWords, maxTitle        int
	buf                       []string
	fromTail                  []bool        // fromTail[i]: buf[i] came from the synthetic tail
	topics                    *topicSampler // nil without Options.Topics
	nTopics                   int
	docTopics                 [2]int // the current document's main and second topic
}

func newGenerator(m *Model, o Options) *generator {
	g := &generator{
		m: m,
		// The second PCG word is a constant so that seed 0 is as good a seed as any.
		rng:        rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		vocab:      newAlias(m.Counts),
		tail:       newZipfTail(m.ZipfS),
		passageLen: newAlias(m.PassageWords),
		titleLen:   newAlias(m.TitleWords),
		per:        newAlias(m.DocPassages),
		maxWords:   o.MaxWords,
		// The splitter shortens prefixes over half the budget; keep titles below that.
		maxTitle: o.MaxWords/2 - 1,
		nTopics:  o.Topics,
	}
	if o.Topics > 0 {
		g.topics = newTopicSampler(m, o.Topics)
	}
	return g
}

// word draws one word and says whether it came from the synthetic tail.
func (g *generator) word() (string, bool) {
	if g.rng.Float64() < g.m.TailMass {
		return tailWord(g.tail.draw(g.rng)), true
	}
	// Without topics no draw is added here, so the stream stays what it was.
	if g.topics != nil && g.rng.Float64() < TopicShare {
		t := g.docTopics[0]
		if g.rng.Float64() >= MainTopicShare {
			t = g.docTopics[1]
		}
		if i, ok := g.topics.word(g.rng, t); ok {
			return g.m.Words[i], false
		}
	}
	return g.m.Words[g.vocab.draw(g.rng)], false
}

// phrase draws n words and returns them joined by spaces, with how many came from the tail.
func (g *generator) phrase(n int) (string, int) {
	g.buf, g.fromTail = g.buf[:0], g.fromTail[:0]
	tail := 0
	for range n {
		w, t := g.word()
		g.buf, g.fromTail = append(g.buf, w), append(g.fromTail, t)
		if t {
			tail++
		}
	}
	return strings.Join(g.buf, " "), tail
}

// fitPhrase cuts the phrase just drawn (g.buf) to what the splitter keeps in one passage
// after a prefix of prefixWeight: the splitter weighs a word of Han or kana characters at
// one per two of them (corpus.WordWeight), and the vocabulary learned from real text holds a
// few ("劉黑馬"), so a passage of n words may weigh more than n. It returns the phrase and its
// tail count again, cut only when over; the draws are not redone, so the random stream, and
// every passage after this one, stay as they were.
func (g *generator) fitPhrase(text string, tail, prefixWeight int) (string, int, int) {
	budget := g.maxWords - min(prefixWeight, g.maxWords/2)
	weight := 0
	for i, w := range g.buf {
		if weight += corpus.WordWeight(w); weight > budget && i > 0 {
			for _, t := range g.fromTail[i:] {
				if t {
					tail--
				}
			}
			return strings.Join(g.buf[:i], " "), tail, i
		}
	}
	return text, tail, len(g.buf)
}

// document draws one document's passages: a title, a passage count, and for each passage a
// total length from which the prefix ("Title |") is taken before the body is drawn. A
// record's word counts are what the passage holds as indexed: a title counts in each passage.
func (g *generator) document() []Record {
	if g.topics != nil {
		g.docTopics = [2]int{g.rng.IntN(g.nTopics), g.rng.IntN(g.nTopics)}
	}
	t := min(g.titleLen.draw(g.rng), g.maxTitle)
	title, titleTail := g.phrase(t)
	prefix, prefixWeight := 0, 0
	if t > 0 {
		prefix = t + 1 // the "|" the indexer writes counts as a word
		for _, w := range g.buf {
			prefixWeight += corpus.WordWeight(w)
		}
		prefixWeight++
	}
	n := max(g.per.draw(g.rng), 1)
	out := make([]Record, n)
	for i := range out {
		total := min(g.passageLen.draw(g.rng), g.maxWords)
		text, tail := g.phrase(max(total-prefix, 1))
		text, tail, body := g.fitPhrase(text, tail, prefixWeight)
		out[i] = Record{Title: title, Text: text, words: prefix + body, tail: titleTail + tail}
	}
	return out
}
