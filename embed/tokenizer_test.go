package embed

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func loadTok(t testing.TB, folder string, maxLen int) *Tokenizer {
	t.Helper()
	tk, err := LoadTokenizer(filepath.Join(sharedModels, "tokenizers", folder, "tokenizer.json"), maxLen)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestTokenizerParity checks ids against the real bert-base-uncased vocabulary used by
// all-MiniLM-L6-v2 (line number - 1 in vocab.txt; the same ids HF's tokenizers produce).
func TestTokenizerParity(t *testing.T) {
	tk := loadTok(t, "all-MiniLM-L6-v2", 256)
	for _, tc := range []struct {
		text string
		want []int64
	}{
		{"Hello world", []int64{101, 7592, 2088, 102}},
		{"HELLO, World!", []int64{101, 7592, 1010, 2088, 999, 102}},
		{"the quick brown fox", []int64{101, 1996, 4248, 2829, 4419, 102}},
		{"Café", []int64{101, 7668, 102}}, // lowercase strips accents
		{"HuggingFace", []int64{101, 17662, 12172, 102}},
		{"Tokyo", []int64{101, 5522, 102}},
		{"", []int64{101, 102}},
	} {
		got := tk.Encode(tc.text)
		if !reflect.DeepEqual(got.IDs, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got.IDs, tc.want)
		}
		for _, ty := range got.TypeIDs {
			if ty != 0 {
				t.Errorf("Encode(%q): type ids %v, want all 0", tc.text, got.TypeIDs)
				break
			}
		}
	}
}

func TestTokenizerTruncatesAtMaxLen(t *testing.T) {
	tk := loadTok(t, "all-MiniLM-L6-v2", 16)
	got := tk.Encode(strings.Repeat("hello ", 40))
	if len(got.IDs) != 16 || got.IDs[0] != 101 || got.IDs[15] != 102 || got.IDs[14] != 7592 {
		t.Errorf("truncated encoding = %v", got.IDs)
	}
}

func TestEncodePair(t *testing.T) {
	tk := loadTok(t, "ms-marco-MiniLM-L12-v2", 10)
	got := tk.EncodePair("hello world", "the quick brown fox the quick brown fox")
	// 10 = 3 specials + 7 pieces: query keeps its 2, passage keeps 5 (longest_first).
	wantIDs := []int64{101, 7592, 2088, 102, 1996, 4248, 2829, 4419, 1996, 102}
	wantTypes := []int64{0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	if !reflect.DeepEqual(got.IDs, wantIDs) || !reflect.DeepEqual(got.TypeIDs, wantTypes) {
		t.Errorf("EncodePair = %v / %v\nwant %v / %v", got.IDs, got.TypeIDs, wantIDs, wantTypes)
	}
}

func TestTruncLongestFirst(t *testing.T) {
	for _, tc := range []struct{ n1, n2, max, w1, w2 int }{
		{3, 4, 10, 3, 4},    // fits
		{2, 20, 7, 2, 5},    // only the longer loses
		{20, 2, 7, 5, 2},    // same, swapped
		{20, 30, 7, 3, 4},   // both lose: max/2 and the rest
		{30, 20, 7, 4, 3},   // swapped back
		{8, 8, 8, 4, 4},     // equal
		{100, 0, 10, 10, 0}, // empty second
	} {
		g1, g2 := truncLongestFirst(tc.n1, tc.n2, tc.max)
		if g1 != tc.w1 || g2 != tc.w2 {
			t.Errorf("truncLongestFirst(%d,%d,%d) = %d,%d want %d,%d", tc.n1, tc.n2, tc.max, g1, g2, tc.w1, tc.w2)
		}
	}
}

func TestParsePostProcessor(t *testing.T) {
	for _, tc := range []struct {
		name, raw  string
		single     int // special tokens in single template
		pairTypeB  int // type id of sequence B
		wantErrSub string
	}{
		{"null", `null`, 0, 0, ""},
		{"bert", `{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}`, 2, 1, ""},
		{"roberta", `{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0]}`, 2, 0, ""},
		{"sequence", `{"type":"Sequence","processors":[{"type":"ByteLevel"},{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}]}`, 2, 1, ""},
		{"unknown", `{"type":"Mystery"}`, 0, 0, "unsupported"},
		{"bad template", `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[X]","type_id":0}}],"special_tokens":{}}`, 0, 0, "no ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			single, pair, err := parsePostProcessor([]byte(tc.raw))
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tk := &Tokenizer{single: single, pair: pair}
			if n := tk.specials(single); n != tc.single {
				t.Errorf("single specials = %d, want %d", n, tc.single)
			}
			for _, it := range pair {
				if it.ids == nil && it.seq == 1 && it.typeID != tc.pairTypeB {
					t.Errorf("sequence B type id %d, want %d", it.typeID, tc.pairTypeB)
				}
			}
		})
	}
}

// TestChunkedTokenizationIsExact: the chunked path gives the ids of tokenizing the whole text
// at once, on every SciFact abstract (long, real text) and the test texts.
func TestChunkedTokenizationIsExact(t *testing.T) {
	tk := loadTok(t, "all-MiniLM-L6-v2", 256)
	if !tk.chunked {
		t.Fatal("BERT tokenizer did not take the chunked path")
	}
	texts := append(testTexts(), strings.Repeat("x\u00a0y\u3000z\u2028w\vv ", 200), strings.Repeat("東京", 300))
	f, err := os.Open(filepath.Join("..", "..", "shared", "data", "beir-scifact", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(texts) < 400 {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, d.Title+"\n"+d.Text)
	}
	for i, s := range texts {
		whole := tk.tk.Encode(s)
		if got := tk.slowPieces(s, -1); !reflect.DeepEqual(got, whole) {
			t.Fatalf("text %d: chunked ids differ from whole-text ids\n%v\n%v", i, got, whole)
		}
		if got := tk.pieces(s, -1); !reflect.DeepEqual(got, whole) {
			t.Fatalf("text %d: chunked ids differ from whole-text ids\n%v\n%v", i, got, whole)
		}
		capped := tk.pieces(s, 254)
		if n := min(len(whole), 254); len(capped) < n || !reflect.DeepEqual(capped[:n], whole[:n]) {
			t.Fatalf("text %d: capped chunked ids are not a prefix of the whole-text ids", i)
		}
	}
}

// FuzzTokenizer: any input yields [CLS] ... [SEP] within max length, pairs too, and the chunked
// path equals tokenizing the whole text.
func FuzzTokenizer(f *testing.F) {
	tk := loadTok(f, "all-MiniLM-L6-v2", 32)
	for _, s := range testTexts() {
		f.Add(s, "second")
	}
	f.Add("\x00\xff[CLS][SEP]", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		long := strings.Repeat(a+" ", 1+2*chunkBytes/(len(a)+1))
		if got, want := tk.slowPieces(long, -1), tk.tk.Encode(long); !reflect.DeepEqual(got, want) {
			t.Fatalf("chunked %v != whole %v", got, want)
		}
		for _, s := range []string{a, b, long} {
			if got, want := tk.pieces(s, -1), tk.tk.Encode(s); !reflect.DeepEqual(got, want) {
				t.Fatalf("fast path %v != go-huggingface %v on %q", got, want, s)
			}
		}
		for _, e := range []Encoding{tk.Encode(a), tk.EncodePair(a, b)} {
			if len(e.IDs) > 32 || len(e.IDs) < 2 || len(e.IDs) != len(e.TypeIDs) {
				t.Fatalf("bad encoding %v / %v", e.IDs, e.TypeIDs)
			}
			if e.IDs[0] != 101 || e.IDs[len(e.IDs)-1] != 102 {
				t.Fatalf("missing [CLS]/[SEP]: %v", e.IDs)
			}
		}
	})
}

// FuzzParsePostProcessor: arbitrary JSON never panics.
func FuzzParsePostProcessor(f *testing.F) {
	f.Add(`{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{"[CLS]":{"ids":[101]}}}`)
	f.Add(`{"type":"BertProcessing","sep":["[SEP]"],"cls":[1,2]}`)
	f.Add(`{"type":"Sequence","processors":[{"type":"Sequence","processors":[]}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		_, _, _ = parsePostProcessor([]byte(raw))
	})
}
