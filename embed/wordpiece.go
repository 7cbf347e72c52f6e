package embed

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// bertWordPiece is the fast path of a tokenizer.json with a BertNormalizer, a
// BertPreTokenizer and a WordPiece model (BERT, MiniLM, the static models built on their
// vocabulary). It gives exactly the ids go-huggingface's hftokenizer gives (tested on SciFact
// and fuzzed), which stays the reference and the path of every other tokenizer, but it does so
// in one linear pass with no allocation per word or token:
//
//   - hftokenizer's BertPreTokenizer converts the whole text to runes and re-encodes the
//     prefix at every rune (quadratic), and builds a string per character and per word;
//   - its WordPiece builds a string for every candidate piece it looks up.
//
// Here ASCII bytes are normalised by table (lowercase, whitespace to ' ', controls dropped);
// only other runes go through the same calls as hftokenizer (NFD, drop Mn, strings.ToLower).
// Vocabulary lookups index the map with string(bytes), which Go does without allocating, and
// continuing pieces ("##ing") sit in a second map without their prefix, so no key is built.
type bertWordPiece struct {
	vocab    map[string]int // every vocabulary entry
	cont     map[string]int // entries that start with the continuing prefix, prefix removed
	maxWhole int            // longest key of vocab, bytes
	maxCont  int            // longest key of cont, bytes
	unk      int            // unknown token id; -1 if the vocabulary has none
	maxChars int            // words longer than this many bytes are unknown (hftokenizer counts bytes)

	lower, strip, chinese bool

	added      []addedTok     // added tokens, longest first, matched in the raw text
	addedFirst [256]bool      // first bytes of added tokens
	addedWords map[string]int // added tokens a pre-tokenized word can equal (none for BERT)

	scratch sync.Pool // *[]byte: the normalised text of one call
}

type addedTok struct {
	content string
	id      int
}

// wordPieceJSON is the part of tokenizer.json the fast path reads.
type wordPieceJSON struct {
	Normalizer *struct {
		Type               string `json:"type"`
		Lowercase          bool   `json:"lowercase"`
		HandleChineseChars bool   `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	Model struct {
		Type                    string         `json:"type"`
		UnkToken                string         `json:"unk_token"`
		ContinuingSubwordPrefix string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int            `json:"max_input_chars_per_word"`
		Vocab                   map[string]int `json:"vocab"`
	} `json:"model"`
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
}

// newBertWordPiece returns the fast path for the tokenizer.json in b, or nil when the file
// is not BertNormalizer + BertPreTokenizer + WordPiece (hftokenizer then does the work).
func newBertWordPiece(b []byte) (*bertWordPiece, error) {
	var doc wordPieceJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Normalizer == nil || doc.Normalizer.Type != "BertNormalizer" ||
		doc.PreTokenizer == nil || doc.PreTokenizer.Type != "BertPreTokenizer" ||
		doc.Model.Type != "WordPiece" || doc.Model.Vocab == nil {
		return nil, nil
	}
	n := doc.Normalizer
	w := &bertWordPiece{
		vocab:    doc.Model.Vocab,
		cont:     make(map[string]int),
		unk:      -1,
		maxChars: doc.Model.MaxInputCharsPerWord,
		lower:    n.Lowercase,
		// hftokenizer's rule: strip accents when asked, or when unset and lowercasing.
		strip:   (n.StripAccents != nil && *n.StripAccents) || (n.StripAccents == nil && n.Lowercase),
		chinese: n.HandleChineseChars,
	}
	// hftokenizer applies clean_text whatever the file says (its span-tracking normaliser),
	// and so does this path.
	if w.maxChars == 0 {
		w.maxChars = 100
	}
	prefix := doc.Model.ContinuingSubwordPrefix
	if prefix == "" {
		prefix = "##"
	}
	for k, id := range w.vocab {
		w.maxWhole = max(w.maxWhole, len(k))
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			w.cont[rest] = id
			w.maxCont = max(w.maxCont, len(rest))
		}
	}
	if id, ok := w.vocab[doc.Model.UnkToken]; ok {
		w.unk = id
	} else if doc.Model.UnkToken != "" {
		for _, at := range doc.AddedTokens {
			if at.Content == doc.Model.UnkToken {
				w.unk = at.ID
			}
		}
	}
	for _, at := range doc.AddedTokens {
		if at.Content == "" {
			return nil, fmt.Errorf("added token %d has no content", at.ID)
		}
		w.added = append(w.added, addedTok{at.Content, at.ID})
		w.addedFirst[at.Content[0]] = true
		if w.couldBeWord(at.Content) {
			if w.addedWords == nil {
				w.addedWords = make(map[string]int)
			}
			w.addedWords[at.Content] = at.ID
		}
	}
	// Longest first, as hftokenizer matches them (ties are distinct strings of one length,
	// which cannot both match at one position).
	sort.SliceStable(w.added, func(i, j int) bool { return len(w.added[i].content) > len(w.added[j].content) })
	// hftokenizer's map keeps the last entry of a duplicated content.
	for _, at := range doc.AddedTokens {
		if _, ok := w.addedWords[at.Content]; ok {
			w.addedWords[at.Content] = at.ID
		}
	}
	return w, nil
}

// couldBeWord reports whether s can be one word of the pre-tokenizer's output: no whitespace,
// and no punctuation unless it is a single character.
func (w *bertWordPiece) couldBeWord(s string) bool {
	n := 0
	for _, r := range s {
		if isWhitespaceBert(r) || (isPunctBert(r) && utf8.RuneCountInString(s) > 1) {
			return false
		}
		n++
	}
	return n > 0
}

// encode appends to dst the ids of text (no special tokens) and returns it. With limit >= 0 it
// stops once dst holds limit ids more than it came with (it may hold a few more: the pieces of
// the last word). With dropUnk, unknown words add nothing (static models drop them).
func (w *bertWordPiece) encode(dst []int, text string, limit int, dropUnk bool) []int {
	bp, _ := w.scratch.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	base := len(dst)
	full := func() bool { return limit >= 0 && len(dst)-base >= limit }
	segStart := 0
	for pos := 0; pos < len(text) && !full(); {
		if w.addedFirst[text[pos]] {
			if at, ok := w.matchAdded(text, pos); ok {
				dst = w.segment(dst, bp, text[segStart:pos], base, limit, dropUnk)
				if !full() && (!dropUnk || at.id != w.unk) {
					dst = append(dst, at.id)
				}
				pos += len(at.content)
				segStart = pos
				continue
			}
		}
		if text[pos] < utf8.RuneSelf {
			pos++
		} else {
			_, size := utf8.DecodeRuneInString(text[pos:])
			pos += size
		}
	}
	if !full() {
		dst = w.segment(dst, bp, text[segStart:], base, limit, dropUnk)
	}
	if cap(*bp) <= 1<<20 {
		w.scratch.Put(bp)
	}
	return dst
}

func (w *bertWordPiece) matchAdded(text string, pos int) (addedTok, bool) {
	for _, at := range w.added {
		if strings.HasPrefix(text[pos:], at.content) {
			return at, true
		}
	}
	return addedTok{}, false
}

// segment normalises one run of text between added tokens, splits it into words and appends
// their pieces.
func (w *bertWordPiece) segment(dst []int, bp *[]byte, seg string, base, limit int, dropUnk bool) []int {
	if seg == "" {
		return dst
	}
	buf := w.normalize((*bp)[:0], seg)
	*bp = buf
	start := -1 // start of the current word in buf
	for i := 0; i < len(buf); {
		if limit >= 0 && len(dst)-base >= limit {
			return dst
		}
		c := buf[i]
		if c < utf8.RuneSelf { // after normalisation ASCII whitespace is ' '
			switch asciiClass[c] {
			case asciiSpace:
				if start >= 0 {
					dst = w.word(dst, buf[start:i], dropUnk)
					start = -1
				}
			case asciiPunct:
				if start >= 0 {
					dst = w.word(dst, buf[start:i], dropUnk)
					start = -1
				}
				dst = w.word(dst, buf[i:i+1], dropUnk)
			default:
				if start < 0 {
					start = i
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(buf[i:])
		switch {
		case isWhitespaceBert(r):
			if start >= 0 {
				dst = w.word(dst, buf[start:i], dropUnk)
				start = -1
			}
		case isPunctBert(r):
			if start >= 0 {
				dst = w.word(dst, buf[start:i], dropUnk)
				start = -1
			}
			dst = w.word(dst, buf[i:i+size], dropUnk)
		default:
			if start < 0 {
				start = i
			}
		}
		i += size
	}
	if start >= 0 && (limit < 0 || len(dst)-base < limit) {
		dst = w.word(dst, buf[start:], dropUnk)
	}
	return dst
}

// normalize appends to buf what hftokenizer's BertNormalizer makes of s.
func (w *bertWordPiece) normalize(buf []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				buf = append(buf, ' ')
			case c < 0x20 || c == 0x7f: // NUL and the other controls
			case w.lower && 'A' <= c && c <= 'Z':
				buf = append(buf, c+'a'-'A')
			default:
				buf = append(buf, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == 0xFFFD || unicode.IsControl(r): // invalid UTF-8 decodes to U+FFFD too
		case w.chinese && isChineseCharBert(r):
			buf = append(buf, ' ')
			buf = utf8.AppendRune(buf, r)
			buf = append(buf, ' ')
		case isWhitespaceBert(r):
			buf = append(buf, ' ')
		default:
			t := s[i-size : i]
			if w.strip {
				t = dropMn(norm.NFD.String(t))
			}
			if w.lower {
				t = strings.ToLower(t)
			}
			buf = append(buf, t...)
		}
	}
	return buf
}

// word appends the WordPiece ids of one pre-tokenized word: greedy longest match from the
// left, the whole word unknown when some position matches nothing.
func (w *bertWordPiece) word(dst []int, word []byte, dropUnk bool) []int {
	if w.addedWords != nil {
		if id, ok := w.addedWords[string(word)]; ok {
			return append(dst, id)
		}
	}
	if len(word) > w.maxChars {
		return w.unknown(dst, dropUnk)
	}
	mark := len(dst)
	for start := 0; start < len(word); {
		vocab, maxLen := w.vocab, w.maxWhole
		if start > 0 {
			vocab, maxLen = w.cont, w.maxCont
		}
		end := min(len(word), start+maxLen)
		for end > start && end < len(word) && !utf8.RuneStart(word[end]) {
			end--
		}
		found := false
		for end > start {
			if id, ok := vocab[string(word[start:end])]; ok {
				dst = append(dst, id)
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		if !found {
			return w.unknown(dst[:mark], dropUnk)
		}
		start = end
	}
	return dst
}

func (w *bertWordPiece) unknown(dst []int, dropUnk bool) []int {
	if w.unk < 0 || dropUnk {
		return dst
	}
	return append(dst, w.unk)
}

// The character classes of hftokenizer's BERT normaliser and pre-tokenizer.

const (
	asciiWord = iota
	asciiSpace
	asciiPunct
)

// asciiClass is isWhitespaceBert and isPunctBert for ASCII, by table.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range rune(utf8.RuneSelf) {
		switch {
		case isWhitespaceBert(c):
			t[c] = asciiSpace
		case isPunctBert(c):
			t[c] = asciiPunct
		}
	}
	return t
}()

func isWhitespaceBert(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

func isPunctBert(r rune) bool {
	return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) ||
		(r >= utf8.RuneSelf && unicode.IsPunct(r))
}

func isChineseCharBert(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// dropMn removes nonspacing marks (the accents NFD split off).
func dropMn(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
