package embed

import (
	"reflect"
	"strings"
	"testing"
)

// TestWordPieceFastPathIsExact: the BERT fast path gives go-huggingface's ids, whole and
// capped, on 600 SciFact passages and texts that exercise every branch (accents, CJK, control
// and invalid bytes, Unicode spaces, added tokens in the text, words past 100 bytes).
func TestWordPieceFastPathIsExact(t *testing.T) {
	for _, folder := range []string{"all-MiniLM-L6-v2", "ms-marco-MiniLM-L12-v2"} {
		tk := loadTok(t, folder, 256)
		if tk.wp == nil {
			t.Fatalf("%s: BERT tokenizer did not take the fast path", folder)
		}
		texts := append(testTexts(),
			"\x00\xff[CLS][SEP] x[UNK]y [MASK]", "İstanbul ǅ ß ﬁ Ǆemal ÅNGSTRÖM", "a\u0301 e\u0300 \u00a0\u2028\u200b|\u3000end",
			"\u0085\u009f\t\r\n\v\f\x7f tabs", strings.Repeat("x", 101)+" "+strings.Repeat("é", 50)+" "+strings.Repeat("ab", 50),
			"unaffable antidisestablishmentarianism 3.14159 U.S.A. e-mail", "￼ \ufffd 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🙂👍🏽 ١٢٣ नमस्ते",
			strings.Repeat("x\u00a0y\u3000z\u2028w\vv ", 50), strings.Repeat("東京", 100))
		texts = append(texts, scifactTexts(t, 600)...)
		for i, s := range texts {
			want := tk.tk.Encode(s)
			if got := tk.wp.encode(nil, s, -1, false); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s text %d %q:\nfast %v\nhf   %v", folder, i, s[:min(len(s), 80)], got, want)
			}
			capped := tk.pieces(s, 100)
			if n := min(len(want), 100); len(capped) < n || !reflect.DeepEqual(capped[:n], want[:n]) {
				t.Fatalf("%s text %d: capped ids are not a prefix of the whole ids", folder, i)
			}
		}
	}
}

// TestStaticTokenizer: no special tokens, unknown words dropped before truncation.
func TestStaticTokenizer(t *testing.T) {
	for _, fast := range []bool{true, false} {
		tk, err := loadStaticTokenizer(sharedModels+"/tokenizers/all-MiniLM-L6-v2/tokenizer.json", 4)
		if err != nil {
			t.Fatal(err)
		}
		if !fast {
			tk.wp = nil
		}
		// "ꙮꙮ" is not in the vocabulary: [UNK] for the full tokenizer, nothing here.
		if got, want := tk.Encode("ꙮꙮ Hello ꙮꙮ world! again").IDs, []int64{7592, 2088, 999, 2153}; !reflect.DeepEqual(got, want) {
			t.Errorf("fast=%v: static Encode = %v, want %v", fast, got, want)
		}
		if got := tk.Encode("ꙮꙮ").IDs; len(got) != 0 {
			t.Errorf("fast=%v: only unknown words gave %v", fast, got)
		}
	}
}

// BenchmarkTokenizeSciFact: the tokenizer alone on 120-word SciFact passages, fast path and
// go-huggingface. `go test -run '^$' -bench TokenizeSciFact -cpu 1 ./embed/`.
func BenchmarkTokenizeSciFact(b *testing.B) {
	texts := scifactPassages(b, 2000, 120)
	tk := loadTok(b, "all-MiniLM-L6-v2", 512)
	for _, fast := range []bool{true, false} {
		name := map[bool]string{true: "fast", false: "go-huggingface"}[fast]
		b.Run(name, func(b *testing.B) {
			var dst []int
			for b.Loop() {
				for _, s := range texts {
					if fast {
						dst = tk.wp.encode(dst[:0], s, 510, false)
					} else {
						dst = tk.slowPieces(s, 510)
					}
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "passages/s")
		})
	}
}

// scifactPassages returns n SciFact passages of at most words words, title included, cut from
// the abstracts as the corpus package cuts them (the title, then the next words of the text).
func scifactPassages(t testing.TB, n, words int) []string {
	t.Helper()
	var out []string
	for _, doc := range scifactTexts(t, 5183) {
		title, text, _ := strings.Cut(doc, ". ")
		tw := strings.Fields(title)
		body := strings.Fields(text)
		step := max(1, words-len(tw))
		for i := 0; i < len(body) && len(out) < n; i += step {
			out = append(out, strings.Join(append(append([]string(nil), tw...), body[i:min(len(body), i+step)]...), " "))
		}
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("SciFact gave %d passages, want %d", len(out), n)
	return nil
}
