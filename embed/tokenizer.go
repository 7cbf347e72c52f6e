package embed

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gomlx/go-huggingface/tokenizers/api"
	"github.com/gomlx/go-huggingface/tokenizers/hftokenizer"
)

// Tokenizer turns texts (or text pairs) into model inputs the way Hugging Face's tokenizers do
// with truncation on: it runs tokenizer.json's normalizer, pre-tokenizer and model through
// go-huggingface, truncates the word pieces so the result fits MaxLen including special tokens
// (pairs: HF's "longest_first"), then adds the special tokens of the post_processor itself.
// Doing the last two steps here, not in go-huggingface, is what lets Kairos truncate at
// max_seq_length and build pairs with the right token_type_ids. It is safe for concurrent use.
type Tokenizer struct {
	tk     *hftokenizer.Tokenizer
	single []tmplItem
	pair   []tmplItem
	maxLen int
	// chunked is true when splitting the text at whitespace before tokenizing cannot change
	// the result (see splitsAtWhitespace). go-huggingface's BERT pre-tokenizer is quadratic in
	// the text length, and a long text only needs its first maxLen pieces, so Kairos then
	// tokenizes chunks of about chunkBytes and stops once it has enough.
	chunked bool
	// wp is the fast path of BERT's WordPiece (see bertWordPiece); nil for other tokenizers,
	// which go through go-huggingface.
	wp *bertWordPiece
	// static: no special tokens and unknown words dropped, as static models tokenize.
	static bool
	unk    int // unknown token id, -1 if none
}

// chunkBytes is the chunk size of the chunked path: short enough that the quadratic step is
// cheap, long enough that per-call overhead is amortised.
const chunkBytes = 256

// tmplItem is one element of a post-processing template: special token ids, or sequence 0 (A)
// or 1 (B), each with its token type id.
type tmplItem struct {
	ids    []int // special token ids; nil for a sequence
	seq    int   // 0 = A, 1 = B (when ids == nil)
	typeID int
}

// Encoding is one tokenized input, special tokens included.
type Encoding struct {
	IDs     []int64
	TypeIDs []int64
}

// LoadTokenizer reads path (a tokenizer.json) and truncates to maxLen tokens.
func LoadTokenizer(path string, maxLen int) (*Tokenizer, error) {
	return loadTokenizer(path, maxLen, false)
}

// loadStaticTokenizer is LoadTokenizer for a static model: no special tokens (the
// post_processor is ignored) and unknown words dropped, as Model2Vec and sentence-transformers'
// StaticEmbedding tokenize; truncation at maxLen applies to what remains.
func loadStaticTokenizer(path string, maxLen int) (*Tokenizer, error) {
	return loadTokenizer(path, maxLen, true)
}

func loadTokenizer(path string, maxLen int, static bool) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer: %w", err)
	}
	tk, err := hftokenizer.NewFromContent(nil, b)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	// Special tokens are added by Tokenizer itself, after truncation.
	if err := tk.With(api.EncodeOptions{AddSpecialTokens: false}); err != nil {
		return nil, err
	}
	var doc struct {
		PostProcessor json.RawMessage `json:"post_processor"`
		Normalizer    *struct {
			Type string `json:"type"`
		} `json:"normalizer"`
		PreTokenizer *struct {
			Type string `json:"type"`
		} `json:"pre_tokenizer"`
		AddedTokens []struct {
			Content string `json:"content"`
			LStrip  bool   `json:"lstrip"`
			RStrip  bool   `json:"rstrip"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	single, pair, err := parsePostProcessor(doc.PostProcessor)
	if err != nil {
		return nil, fmt.Errorf("%s: post_processor: %w", path, err)
	}
	if static {
		single, pair, _ = parsePostProcessor(nil)
	}
	t := &Tokenizer{tk: tk, single: single, pair: pair, maxLen: maxLen, static: static, unk: -1}
	if id, err := tk.SpecialTokenID(api.TokUnknown); err == nil {
		t.unk = id
	}
	if t.wp, err = newBertWordPiece(b); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	t.chunked = doc.Normalizer != nil && doc.Normalizer.Type == "BertNormalizer" &&
		doc.PreTokenizer != nil && doc.PreTokenizer.Type == "BertPreTokenizer"
	for _, at := range doc.AddedTokens {
		if at.LStrip || at.RStrip || strings.IndexFunc(at.Content, isBertSpace) >= 0 {
			t.chunked = false // such an added token must see both sides of a space
		}
	}
	if n := t.specials(single); n >= maxLen {
		return nil, fmt.Errorf("%s: max length %d leaves no room after %d special tokens", path, maxLen, n)
	}
	return t, nil
}

// MaxLen is the longest encoding Encode returns.
func (t *Tokenizer) MaxLen() int { return t.maxLen }

// Encode tokenizes one text, truncated to MaxLen tokens.
func (t *Tokenizer) Encode(text string) Encoding {
	room := t.maxLen - t.specials(t.single)
	a := t.pieces(text, room)
	if len(a) > room {
		a = a[:room]
	}
	return t.apply(t.single, a, nil)
}

// pieces returns the word-piece ids of text (no special tokens): all of them, or with the
// chunked path at least limit of them when the text has that many (limit < 0: all).
//
// BertNormalizer works character by character (it maps whitespace to ' ' and pads CJK
// characters with spaces) and BertPreTokenizer splits at every whitespace character, so
// tokenizing the pieces of a text cut at whitespace gives exactly the ids of the whole text.
func (t *Tokenizer) pieces(text string, limit int) []int {
	if t.wp != nil {
		return t.wp.encode(nil, text, limit, t.static)
	}
	if t.static {
		return t.dropUnknown(t.slowPieces(text, -1)) // limit counts what remains
	}
	return t.slowPieces(text, limit)
}

// dropUnknown removes the unknown token id from ids, in place.
func (t *Tokenizer) dropUnknown(ids []int) []int {
	if t.unk < 0 {
		return ids
	}
	out := ids[:0]
	for _, id := range ids {
		if id != t.unk {
			out = append(out, id)
		}
	}
	return out
}

// slowPieces is pieces through go-huggingface (chunked when that is exact).
func (t *Tokenizer) slowPieces(text string, limit int) []int {
	if !t.chunked || len(text) <= chunkBytes {
		return t.tk.Encode(text)
	}
	var ids []int
	for start := 0; start < len(text) && (limit < 0 || len(ids) < limit); {
		end := chunkEnd(text, start+chunkBytes)
		ids = append(ids, t.tk.Encode(text[start:end])...)
		start = end
	}
	return ids
}

// chunkEnd returns the byte offset of the first BERT whitespace at or after from (or len).
func chunkEnd(text string, from int) int {
	if from >= len(text) {
		return len(text)
	}
	for from < len(text) && !utf8.RuneStart(text[from]) {
		from++
	}
	if i := strings.IndexFunc(text[from:], isBertSpace); i >= 0 {
		return from + i
	}
	return len(text)
}

// isBertSpace is BERT's whitespace: space, tab, newline, carriage return and category Zs.
func isBertSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// EncodePair tokenizes a (query, passage) pair for a cross-encoder, truncating the longer side
// first as HF's "longest_first" strategy does.
func (t *Tokenizer) EncodePair(a, b string) Encoding {
	// No early stop for pairs: longest_first needs the true lengths of both sides.
	x, y := t.pieces(a, -1), t.pieces(b, -1)
	n1, n2 := truncLongestFirst(len(x), len(y), t.maxLen-t.specials(t.pair))
	return t.apply(t.pair, x[:n1], y[:n2])
}

// truncLongestFirst mirrors tokenizers' truncate_encodings with LongestFirst: the lengths the
// two sequences keep so that together they fit max.
func truncLongestFirst(n1, n2, max int) (int, int) {
	if n1+n2 <= max {
		return n1, n2
	}
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 <= max {
		n2 = maxInt(n1, max-n1)
	}
	// Both longer than half of max (always so when even the shorter exceeds max): halves.
	if n1 > max || n1+n2 > max {
		n1 = max / 2
		n2 = n1 + max%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return n1, n2
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func (t *Tokenizer) specials(tmpl []tmplItem) int {
	n := 0
	for _, it := range tmpl {
		n += len(it.ids)
	}
	return n
}

func (t *Tokenizer) apply(tmpl []tmplItem, a, b []int) Encoding {
	n := len(a) + len(b) + t.specials(tmpl)
	e := Encoding{IDs: make([]int64, 0, n), TypeIDs: make([]int64, 0, n)}
	add := func(ids []int, typ int) {
		for _, id := range ids {
			e.IDs = append(e.IDs, int64(id))
			e.TypeIDs = append(e.TypeIDs, int64(typ))
		}
	}
	for _, it := range tmpl {
		switch {
		case it.ids != nil:
			add(it.ids, it.typeID)
		case it.seq == 0:
			add(a, it.typeID)
		default:
			add(b, it.typeID)
		}
	}
	return e
}

// parsePostProcessor understands TemplateProcessing, BertProcessing, RobertaProcessing, a
// Sequence holding one of them, and null (no special tokens).
func parsePostProcessor(raw json.RawMessage) (single, pair []tmplItem, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []tmplItem{{seq: 0}}, []tmplItem{{seq: 0}, {seq: 1}}, nil
	}
	var pp struct {
		Type          string            `json:"type"`
		Single        []json.RawMessage `json:"single"`
		Pair          []json.RawMessage `json:"pair"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
		Sep        [2]any            `json:"sep"`
		Cls        [2]any            `json:"cls"`
		Processors []json.RawMessage `json:"processors"`
	}
	if err := json.Unmarshal(raw, &pp); err != nil {
		return nil, nil, err
	}
	switch pp.Type {
	case "TemplateProcessing":
		conv := func(items []json.RawMessage) ([]tmplItem, error) {
			var out []tmplItem
			for _, r := range items {
				var it struct {
					SpecialToken *struct {
						ID     string `json:"id"`
						TypeID int    `json:"type_id"`
					}
					Sequence *struct {
						ID     string `json:"id"`
						TypeID int    `json:"type_id"`
					}
				}
				if err := json.Unmarshal(r, &it); err != nil {
					return nil, err
				}
				switch {
				case it.SpecialToken != nil:
					st, ok := pp.SpecialTokens[it.SpecialToken.ID]
					if !ok || len(st.IDs) == 0 {
						return nil, fmt.Errorf("special token %q has no ids", it.SpecialToken.ID)
					}
					out = append(out, tmplItem{ids: st.IDs, typeID: it.SpecialToken.TypeID})
				case it.Sequence != nil:
					seq := 0
					if it.Sequence.ID == "B" {
						seq = 1
					}
					out = append(out, tmplItem{seq: seq, typeID: it.Sequence.TypeID})
				}
			}
			return out, nil
		}
		if single, err = conv(pp.Single); err != nil {
			return nil, nil, err
		}
		pair, err = conv(pp.Pair)
		return single, pair, err
	case "BertProcessing", "RobertaProcessing":
		cls, ok1 := pp.Cls[1].(float64)
		sep, ok2 := pp.Sep[1].(float64)
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("%s without cls/sep ids", pp.Type)
		}
		c, s := []int{int(cls)}, []int{int(sep)}
		single = []tmplItem{{ids: c}, {seq: 0}, {ids: s}}
		if pp.Type == "BertProcessing" {
			pair = []tmplItem{{ids: c}, {seq: 0}, {ids: s}, {seq: 1, typeID: 1}, {ids: s, typeID: 1}}
		} else {
			pair = []tmplItem{{ids: c}, {seq: 0}, {ids: s}, {ids: s}, {seq: 1}, {ids: s}}
		}
		return single, pair, nil
	case "Sequence":
		for _, p := range pp.Processors {
			var head struct{ Type string }
			if json.Unmarshal(p, &head) == nil && head.Type != "ByteLevel" {
				return parsePostProcessor(p)
			}
		}
		return parsePostProcessor(nil)
	case "ByteLevel":
		return parsePostProcessor(nil)
	}
	return nil, nil, fmt.Errorf("unsupported type %q", pp.Type)
}
