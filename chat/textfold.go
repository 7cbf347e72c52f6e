package chat

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"
)

// The attribution check (attribution.go) compares what an LLM wrote with what a passage says,
// word by word and number by number. A model that wants an unverified name or number through
// writes it so that a naive comparison misses it: in lower case, with a combining grapheme
// joiner or a zero-width space inside ("Napo͏leon"), in Cyrillic letters that look Latin
// ("Nаpoleon"), as superscript or full-width digits ("¹⁸⁵⁰"), as words ("eighteen fifty") or as
// a roman numeral ("MDCCCL"). So both texts are folded the same way before anything is
// compared: NFKC (full-width, superscripts, ligatures, mathematical letters), then every
// character decomposed and its combining marks and format characters removed (accents, joiners,
// zero-width characters, soft hyphens, variation selectors), look-alike letters of other
// scripts mapped to the Latin letter they imitate, and case folded. Numbers are read as values
// whatever their notation (numberTokens).

// lookalikes maps letters of other scripts that render like a Latin letter to that letter
// (lower case; the text is case-folded first). Each script's own text folds the same way on
// both sides of a comparison, so a Russian passage still matches a Russian sentence.
var lookalikes = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w',
	'ӏ': 'l', 'һ': 'h', 'ү': 'y', 'ɡ': 'g', 'ց': 'g', 'ѡ': 'w', 'ʏ': 'y',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't',
	'υ': 'u', 'χ': 'x', 'γ': 'y', 'ζ': 'z', 'μ': 'u', 'ϲ': 'c', 'ϳ': 'j',
	// Armenian, Latin extensions, letterlike symbols NFKC keeps
	'օ': 'o', 'ս': 'u', 'ı': 'i', 'ȷ': 'j', 'ſ': 's', 'ℓ': 'l', 'ꓲ': 'i', 'ꓳ': 'o', 'ɑ': 'a', 'ɩ': 'i',
	'ɪ': 'i', 'ʀ': 'r', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ᴛ': 't',
	'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z', 'ʙ': 'b', 'ʜ': 'h', 'ʟ': 'l', 'ꜱ': 's',
}

// foldedRune is one character of folded text with what the name check needs of the original.
type foldedRune struct {
	r     rune // folded: lower case, Latin where it imitated Latin, ASCII digit
	upper bool // the original character was upper case
}

// foldRunes folds s (see above) into its characters. Digits of any script become ASCII digits.
func foldRunes(s string) []foldedRune {
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	out := make([]foldedRune, 0, len(s))
	var buf [utf8.UTFMax * 4]byte
	for _, r := range s {
		if r < utf8.RuneSelf { // ASCII: nothing to decompose or map
			upper := r >= 'A' && r <= 'Z'
			if upper {
				r += 'a' - 'A'
			}
			out = append(out, foldedRune{r, upper})
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		for _, c := range norm.NFKD.String(string(buf[:n])) {
			if unicode.In(c, unicode.Mn, unicode.Me, unicode.Cf) {
				continue
			}
			upper := unicode.IsUpper(c) || unicode.IsTitle(c)
			c = unicode.ToLower(c)
			if l, ok := lookalikes[c]; ok {
				c = l
			}
			if l, ok := unaccented[c]; ok {
				for k, x := range l {
					out = append(out, foldedRune{x, upper && k == 0})
				}
				continue
			}
			if c > unicode.MaxASCII && unicode.IsDigit(c) {
				c = '0' + digitValue(c)
			}
			out = append(out, foldedRune{c, upper})
		}
	}
	return out
}

// unaccented spells the letters that have no decomposition to strip an accent from ("Søren",
// "Łódź", "Straße") as a text without them writes them ("Soren", "Lodz", "Strasse").
var unaccented = map[rune]string{'ø': "o", 'ł': "l", 'đ': "d", 'ð': "d", 'ħ': "h", 'ı': "i",
	'æ': "ae", 'œ': "oe", 'ß': "ss", 'þ': "th"}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldText is s folded (foldRunes) as a string.
func foldText(s string) string {
	var b strings.Builder
	for _, f := range foldRunes(s) {
		b.WriteRune(f.r)
	}
	return b.String()
}

// stem is a word's Porter stem: "identified" and "identify" are one word to the check.
func stem(w string) string {
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	return porterstemmer.StemString(w)
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// sameWord reports whether two stems are forms of one word: equal, or one a prefix of the
// other of at least four letters ("discov" of "discoveri": Porter stems "discovered" and
// "discovery" apart). A shared prefix alone is not enough: "increas" and "incred" share five.
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(b, a)
}

// digitValue is the value of a \p{Nd} digit. Unicode encodes each script's decimal digits as a
// contiguous run of ten, zero first, and unicode.Nd's ranges are whole runs (one range may hold
// several adjacent runs), so the value is the offset in the range modulo ten.
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	return 0
}
