package langanalysis

import (
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// asciiTokenizer gives the tokens of bleve's Unicode tokenizer (UAX #29 word boundaries, as
// github.com/blevesearch/segment's Ragel scanner implements them) faster: the scanner was
// the largest single cost of a postings build (17% of its CPU, 2 cores, synthetic English
// passages). Text is cut at ASCII white space, which no token spans and after which the
// scanner starts afresh; a piece of pure ASCII is scanned here, any other piece by bleve's
// tokenizer. TestASCIITokenizerMatchesBleve and FuzzASCIITokenizer hold the two to the same
// tokens, offsets, positions and types.
type asciiTokenizer struct {
	slow analysis.Tokenizer // bleve's Unicode tokenizer
}

var _ analysis.Tokenizer = asciiTokenizer{}

func newASCIITokenizer() asciiTokenizer {
	return asciiTokenizer{slow: unicode.NewUnicodeTokenizer()}
}

// The ASCII members of the word-break classes the scanner uses (segment's ragel/uwb.rl):
// ALetter A-Z a-z, Numeric 0-9, ExtendNumLet '_', MidLetter ':', MidNum ',' ';',
// MidNumLet '.', Single_Quote '\”. Double_Quote only joins Hebrew letters.
const (
	clsOther = iota
	clsLetter
	clsDigit
	clsUnder
	clsMidLetter // joins letter to letter
	clsMidNum    // joins digit to digit
	clsMidBoth   // '.' and '\'': either
	clsSpace     // ASCII white space: never inside a token
)

var asciiClass = func() (t [128]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = clsLetter, clsLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsDigit
	}
	t['_'] = clsUnder
	t[':'] = clsMidLetter
	t[','], t[';'] = clsMidNum, clsMidNum
	t['.'], t['\''] = clsMidBoth, clsMidBoth
	for _, c := range " \t\n\v\f\r" {
		t[c] = clsSpace
	}
	return t
}()

// Tokenize returns the tokens bleve's Unicode tokenizer returns for input.
func (t asciiTokenizer) Tokenize(input []byte) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(input)/6+1)
	var slab []analysis.Token // tokens are allocated in blocks, as bleve's tokenizer does
	pos := 1
	t.each(input, func(term []byte, start, end int, typ analysis.TokenType) {
		if len(slab) == 0 {
			slab = make([]analysis.Token, max(16, (len(input)-end)/6+1))
		}
		tok := &slab[0]
		slab = slab[1:]
		*tok = analysis.Token{Term: term, Start: start, End: end, Position: pos, Type: typ}
		out = append(out, tok)
		pos++
	})
	return out
}

// each calls emit with the term, offsets and type of each token Tokenize returns, in order,
// without making the tokens (Terms' path, which needs their terms alone).
func (t asciiTokenizer) each(input []byte, emit func(term []byte, start, end int, typ analysis.TokenType)) {
	if !utf8.Valid(input) {
		// The scanner's handling of invalid bytes reaches across white space ("\xe7 0" is
		// one token): leave such text to it whole. Text read by the corpus readers is valid.
		for _, tok := range t.slow.Tokenize(input) {
			emit(tok.Term, tok.Start, tok.End, tok.Type)
		}
		return
	}
	for i := 0; i < len(input); {
		if c := input[i]; c < 0x80 && asciiClass[c] == clsSpace {
			i++
			continue
		}
		j, ascii := i, true
		for ; j < len(input); j++ {
			c := input[j]
			if c >= 0x80 {
				ascii = false
			} else if asciiClass[c] == clsSpace {
				break
			}
		}
		if ascii {
			scanASCII(input[i:j], i, emit)
		} else {
			for _, tok := range t.slow.Tokenize(input[i:j]) {
				emit(tok.Term, tok.Start+i, tok.End+i, tok.Type)
			}
		}
		i = j
	}
}

// scanASCII emits the words of piece (pure ASCII, no white space), which starts at offset base
// of the input. A word is the longest run of letters, digits and '_' in which a MidLetter or
// MidNumLet character may stand between two letters and a MidNum or MidNumLet character
// between two digits; it is Numeric when it has digits and no letter.
func scanASCII(piece []byte, base int, emit func([]byte, int, int, analysis.TokenType)) {
	for p := 0; p < len(piece); {
		switch asciiClass[piece[p]] {
		case clsLetter, clsDigit, clsUnder:
		default:
			p++
			continue
		}
		start := p
		letters, digits := false, false
	word:
		for ; p < len(piece); p++ {
			switch asciiClass[piece[p]] {
			case clsLetter:
				letters = true
			case clsDigit:
				digits = true
			case clsUnder:
			case clsMidLetter, clsMidNum, clsMidBoth:
				if p+1 == len(piece) || !joins(asciiClass[piece[p]], asciiClass[piece[p-1]], asciiClass[piece[p+1]]) {
					break word
				}
			default:
				break word
			}
		}
		typ := analysis.AlphaNumeric
		if digits && !letters {
			typ = analysis.Numeric
		}
		emit(piece[start:p], base+start, base+p, typ)
	}
}

// joins reports whether a middle character of class mid joins the characters on its sides.
func joins(mid, before, after uint8) bool {
	switch {
	case before == clsLetter && after == clsLetter:
		return mid == clsMidLetter || mid == clsMidBoth
	case before == clsDigit && after == clsDigit:
		return mid == clsMidNum || mid == clsMidBoth
	}
	return false
}
