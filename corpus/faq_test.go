package corpus

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFAQCSVBadInput checks the exact error of malformed CSV rows and that reading goes on.
func TestFAQCSVBadInput(t *testing.T) {
	input := "question,answer,last_update\n" +
		"Q1?,A1.,2020/03/17\n" +
		"Q2?,A2.\n" + // row 2: a field missing
		"Q3?,\"A3 \"bad\" quote\",2020/03/17\n" + // row 3: bare quote in quoted field
		"Q4?,A4.,17 March\n" + // row 4: bad date
		",A5.,2020/03/17\n" + // row 5: no question
		"Q6?,\"multi\n\nline\",2020/03/18\n" +
		"Q7?,   ,2020/03/18\n" + // row 7: empty answer
		"Q8?,A8 \xff.,2020/03/18\n"
	path := writeTemp(t, "faq.csv", []byte(input))
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, recErrs, fatal := drain(t, r)
	if fatal != nil {
		t.Fatal(fatal)
	}
	wantErrs := []string{
		path + ": row 2 (line 3): 2 fields, header has 3",
		path + `: row 3 (line 4): extraneous or missing " in quoted-field`,
		path + `: row 4 (line 5): column "last_update": date "17 March" is neither RFC 3339 nor YYYY-MM-DD`,
		path + `: row 5 (line 6): empty question (column "question")`,
	}
	if strings.Join(recErrs, "\n") != strings.Join(wantErrs, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(recErrs, "\n"), strings.Join(wantErrs, "\n"))
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.ID+"="+d.Title+"="+d.Sections[0].Text)
	}
	want := []string{"1=Q1?=A1.", "6=Q6?=multi\n\nline", "8=Q8?=A8 \uFFFD."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("docs %q, want %q", got, want)
	}
	st := r.Stats()
	if st.Documents != 3 || st.Bad != 4 || st.Skipped[SkipEmpty] != 1 || st.Repaired != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestFAQCSVMissingColumn(t *testing.T) {
	path := writeTemp(t, "faq.csv", []byte("q,a\nx,y\n"))
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, fatal := drain(t, r)
	if want := path + `: header has no "question" column (columns: q, a; kairos index --faq-question and --faq-answer name others)`; fatal == nil || fatal.Error() != want {
		t.Errorf("fatal = %v, want %q", fatal, want)
	}
	// The same file with its columns named.
	docs, _ := readPath(t, path, Options{FAQ: FAQColumns{Question: "q", Answer: "a"}})
	if len(docs) != 1 || docs[0].Title != "x" || docs[0].Sections[0].Text != "y" {
		t.Errorf("docs %+v", docs)
	}
}

func TestFAQJSON(t *testing.T) {
	cols := FAQColumns{ID: "qid", Meta: []string{"lang"}}
	arr := `[
 {"qid": "c1", "question": "What is it?", "answer": "A thing.", "last_update": "2020-03-17", "category": "Basics", "link": " https://x/1 ", "lang": "en"},
 {"qid": 7, "question": "Why?", "answer": "Because.\n\nReally.", "category": null},
 {"question": "No answer?"},
 {"question": "Bad type?", "answer": ["a"]}
]`
	jsonl := strings.ReplaceAll(strings.ReplaceAll(strings.Trim(arr, "[]\n"), "},\n {", "}\n{"), "\n ", "\n")
	for _, tc := range []struct {
		name, data, format string
		pos3, pos4         string
	}{
		{"faq.json", arr, FormatFAQJSON,
			fmt.Sprintf("record 3 (byte %d)", strings.Index(arr, `{"question": "No`)),
			fmt.Sprintf("record 4 (byte %d)", strings.Index(arr, `{"question": "Bad`))},
		{"faq.jsonl", jsonl, FormatFAQJSONL, "line 3", "line 4"},
	} {
		path := writeTemp(t, tc.name, []byte(tc.data))
		if f, _ := DetectFormat(path, []byte(tc.data)); f != tc.format {
			t.Errorf("%s detected as %q", tc.name, f)
		}
		r, err := Open(context.Background(), path, Options{FAQ: cols})
		if err != nil {
			t.Fatal(err)
		}
		docs, recErrs, fatal := drain(t, r)
		if fatal != nil || len(docs) != 2 {
			t.Fatalf("%s: %d docs, fatal %v", tc.name, len(docs), fatal)
		}
		d := docs[0]
		if d.ID != "c1" || d.Title != "What is it?" || d.URL != "https://x/1" || !d.Date.Equal(time.Date(2020, 3, 17, 0, 0, 0, 0, time.UTC)) ||
			d.Meta["category"] != "Basics" || d.Meta["lang"] != "en" || d.Sections[0].Text != "A thing." {
			t.Errorf("%s: doc 1 %+v", tc.name, d)
		}
		if d := docs[1]; d.ID != "7" || d.Meta != nil || d.Sections[0].Text != "Because.\n\nReally." {
			t.Errorf("%s: doc 2 %+v", tc.name, d)
		}
		want := []string{path + ": " + tc.pos3 + `: missing "answer" field`, path + ": " + tc.pos4 + `: field "answer": JSON array where a string was expected`}
		if strings.Join(recErrs, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s errors:\n%s\nwant\n%s", tc.name, strings.Join(recErrs, "\n"), strings.Join(want, "\n"))
		}
	}
}

func FuzzFAQCSV(f *testing.F) {
	f.Add([]byte("question,answer,last_update,category,link\nQ?,A.,2020/03/17,c,http://x\n"))
	f.Add([]byte("question,answer\n\"Q\n?\",\"A \"\"quoted\"\"\"\nbad,\"row\nq,a,extra\n"))
	f.Add([]byte("\uFEFFquestion,answer\n\xff,\xfe\n"))
	f.Add([]byte("question,answer,Answer\nQ?,A.,B.\n"))
	f.Add([]byte("question,answer\nQ1?,\"A1\nQ2?,A2.\nQ3?,\"A3\",x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFAQCSVReader(bytes.NewReader(data), "f.csv", "f", DefaultFAQColumns())
		docs, recErrs, _ := drain(t, r)
		st := r.Stats()
		if st.Documents != len(docs) || st.Bad != len(recErrs) {
			t.Fatalf("stats %+v for %d docs, %d errors", st, len(docs), len(recErrs))
		}
		for _, d := range docs {
			if d.Title == "" || d.ID == "" || isEmpty(d) {
				t.Fatalf("bad document %+v", d)
			}
		}
	})
}

// TestFAQCustomColumnsDetected: an FAQ in JSON lines with its own key names is detected as
// an FAQ once Options.FAQ names them.
func TestFAQCustomColumnsDetected(t *testing.T) {
	path := writeTemp(t, "qa.jsonl", []byte(`{"q": "Why?", "a": "Because.", "when": "2020-01-02"}`+"\n"))
	docs, st := readPath(t, path, Options{FAQ: FAQColumns{Question: "q", Answer: "a", Date: "when"}})
	if len(docs) != 1 || st.Documents != 1 || docs[0].Title != "Why?" || docs[0].Date.Year() != 2020 {
		t.Errorf("docs %+v", docs)
	}
}

// TestFAQHeaderVariants: the usual spellings of each column are found ignoring case, the FAQ's
// own id becomes the document id, and the columns used are reported.
func TestFAQHeaderVariants(t *testing.T) {
	for _, tc := range []struct {
		name, header, row string
		cols              FAQColumns
		wantID, wantURL   string
		wantCat           string
		wantYear          int
		wantUsed          map[string]string
	}{
		{"lower", "question,answer", "Q?,A.", FAQColumns{}, "1", "", "", 0,
			map[string]string{"question": "question", "answer": "answer"}},
		{"title case with ID", "ID,Question,Answer,URL,Date,Category", "faq-7,Q?,A.,http://x,2021-05-06,C",
			FAQColumns{}, "faq-7", "http://x", "C", 2021,
			map[string]string{"id": "ID", "question": "Question", "answer": "Answer", "url": "URL", "date": "Date", "category": "Category"}},
		{"upper with qid and link", "QID,QUESTION,ANSWER,LINK,LAST_UPDATE", "42,Q?,A.,http://y,2020/03/17",
			FAQColumns{}, "42", "http://y", "", 2020,
			map[string]string{"id": "QID", "question": "QUESTION", "answer": "ANSWER", "url": "LINK", "date": "LAST_UPDATE"}},
		{"id preferred over qid", "qid,id,question,answer", "q9,i9,Q?,A.", FAQColumns{}, "i9", "", "", 0,
			map[string]string{"id": "id", "question": "question", "answer": "answer"}},
		{"empty id falls back to the row", "id,question,answer", " ,Q?,A.", FAQColumns{}, "1", "", "", 0,
			map[string]string{"id": "id", "question": "question", "answer": "answer"}},
		{"named columns ignore case", "Frage,Antwort,Nr", "Q?,A.,n1", FAQColumns{Question: "frage", Answer: "ANTWORT", ID: "nr"},
			"n1", "", "", 0, map[string]string{"id": "Nr", "question": "Frage", "answer": "Antwort"}},
		{"id turned off", "id,question,answer", "x,Q?,A.", FAQColumns{ID: "-"}, "1", "", "", 0,
			map[string]string{"question": "question", "answer": "answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "faq.csv", []byte(tc.header+"\n"+tc.row+"\n"))
			r, err := Open(context.Background(), path, Options{FAQ: tc.cols})
			if err != nil {
				t.Fatal(err)
			}
			docs, recErrs, fatal := drain(t, r)
			if fatal != nil || len(recErrs) != 0 || len(docs) != 1 {
				t.Fatalf("%d docs, errors %v, fatal %v", len(docs), recErrs, fatal)
			}
			d := docs[0]
			if d.ID != tc.wantID || d.URL != tc.wantURL || d.Meta["category"] != tc.wantCat || d.Date.Year() != max(tc.wantYear, 1) {
				t.Errorf("doc %+v: want id %q url %q category %q year %d", d, tc.wantID, tc.wantURL, tc.wantCat, tc.wantYear)
			}
			// The answer, then the question alone: a question-only passage.
			if len(d.Sections) != 2 || d.Sections[0].Text != "A." || d.Sections[1].Text != "Q?" || d.Title != "Q?" {
				t.Errorf("sections %+v", d.Sections)
			}
			if got := r.Stats().Columns; fmt.Sprint(got) != fmt.Sprint(tc.wantUsed) {
				t.Errorf("columns used %v, want %v", got, tc.wantUsed)
			}
		})
	}
}

// TestFAQJSONKeysIgnoreCase: JSON keys match like CSV columns, and detection sees them.
func TestFAQJSONKeysIgnoreCase(t *testing.T) {
	path := writeTemp(t, "faq.jsonl", []byte(`{"ID": "x1", "Question": "Why?", "Answer": "Because."}`+"\n"))
	docs, st := readPath(t, path, Options{})
	if st.Format != FormatFAQJSONL || len(docs) != 1 || docs[0].ID != "x1" || docs[0].Title != "Why?" || docs[0].Sections[0].Text != "Because." {
		t.Errorf("format %q, docs %+v", st.Format, docs)
	}
}

// TestJSONArrayTruncated holds a JSON array of records to its closing ']': an array cut
// between records ("[{...},{...}" and no ']') once read as complete, losing the records after
// the cut without a word. Every cut is fatal (not a skippable record error) and names the file,
// the byte and the line; the records before it are still returned.
func TestJSONArrayTruncated(t *testing.T) {
	const r1 = `{"question": "Q1?", "answer": "A1."}`
	const r2 = `{"question": "Q2?", "answer": "A2."}`
	whole := "[\n" + r1 + ",\n" + r2 + "\n]\n"
	tests := []struct {
		name, data string
		docs       int
		want       string // the fatal error after "path: "; "" for a clean end
	}{
		{"whole", whole, 2, ""},
		{"whole, no line end", strings.TrimSuffix(whole, "\n"), 2, ""},
		{"empty array", "[]", 0, ""},
		{"no closing bracket", "[\n" + r1 + ",\n" + r2, 2,
			fmt.Sprintf("truncated input: the file ends (byte %d, line 3) after record 2 of a JSON array, without the array's closing ']'", len("[\n"+r1+",\n"+r2))},
		{"no closing bracket, line end", "[\n" + r1 + ",\n" + r2 + "\n", 2,
			fmt.Sprintf("truncated input: the file ends (byte %d, line 4) after record 2 of a JSON array, without the array's closing ']'", len("[\n"+r1+",\n"+r2+"\n"))},
		{"cut after a comma", "[\n" + r1 + ",\n", 1,
			fmt.Sprintf("truncated input: the file ends (byte %d, line 3) inside record 2 of the JSON array", len("[\n"+r1+",\n"))},
		{"cut inside a record", "[\n" + r1 + ",\n" + r2[:10], 1,
			fmt.Sprintf("truncated input: the file ends (byte %d, line 3) inside record 2 of the JSON array", len("[\n"+r1+",\n"+r2[:10]))},
		{"only the bracket", "[\n", 0, "truncated input: the file ends (byte 2, line 2) after record 0 of a JSON array, without the array's closing ']'"},
		{"data after the array", "[\n" + r1 + "\n]\n" + r2 + "\n", 1,
			fmt.Sprintf("data after the JSON array's closing ']' (byte %d, line 3)", len("[\n"+r1+"\n]"))},
		{"brace for bracket", "[\n" + r1 + "\n}", 1, "after record 1 (byte " + fmt.Sprint(len("[\n"+r1+"\n")) + ", line 3): invalid character '}' after array element"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, docs, recErrs, fatal := readData(t, "faq.json", tt.data, Options{Format: FormatFAQJSON})
			if len(recErrs) != 0 {
				t.Errorf("record errors %q", recErrs)
			}
			if len(docs) != tt.docs {
				t.Errorf("%d documents, want %d", len(docs), tt.docs)
			}
			switch {
			case tt.want == "" && fatal != nil:
				t.Errorf("fatal %v, want a clean end", fatal)
			case tt.want != "" && (fatal == nil || fatal.Error() != path+": "+tt.want):
				t.Errorf("fatal %v\nwant %s", fatal, path+": "+tt.want)
			}
		})
	}
}

// TestFAQJSONNumbers reads numeric values of FAQ JSON records as their literal: ids above 2^53
// were read as float64, so 12345678901234567 and 12345678901234568 became the same id.
func TestFAQJSONNumbers(t *testing.T) {
	tests := []struct {
		value, wantID string
	}{
		{`12345678901234567`, "12345678901234567"},
		{`12345678901234568`, "12345678901234568"},
		{`9007199254740993`, "9007199254740993"}, // 2^53 + 1, the first integer float64 misses
		{`-98765432109876543210`, "-98765432109876543210"},
		{`7`, "7"},
		{`0`, "0"},
		{`1.50`, "1.5"}, // not an integer: formatted as a number, as before
		{`1e3`, "1000"},
		{`2.5E-1`, "0.25"},
		{`"0012"`, "0012"},
		{`true`, "true"},
	}
	var arr, lines []string
	for i, tt := range tests {
		rec := `{"id": ` + tt.value + `, "question": "Q` + strconv.Itoa(i) + `?", "answer": "A."}`
		arr = append(arr, rec)
		lines = append(lines, rec)
	}
	inputs := map[string]string{
		"faq.json":  "[\n" + strings.Join(arr, ",\n") + "\n]\n",
		"faq.jsonl": strings.Join(lines, "\n") + "\n",
	}
	for name, data := range inputs {
		path := writeTemp(t, name, []byte(data))
		r, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		docs, recErrs, fatal := drain(t, r)
		if fatal != nil || len(recErrs) != 0 || len(docs) != len(tests) {
			t.Fatalf("%s: %d docs, errors %q, fatal %v", name, len(docs), recErrs, fatal)
		}
		for i, tt := range tests {
			t.Run(name+"/"+tt.value, func(t *testing.T) {
				if docs[i].ID != tt.wantID || docs[i].IDFromPosition {
					t.Errorf("id %q (from position %v), want %q", docs[i].ID, docs[i].IDFromPosition, tt.wantID)
				}
			})
		}
	}
}

// TestFAQJSONValueErrors names the field of a value that is no text.
func TestFAQJSONValueErrors(t *testing.T) {
	tests := []struct{ rec, want string }{
		{`{"question": "Q?", "answer": ["a"]}`, `field "answer": JSON array where a string was expected`},
		{`{"question": "Q?", "answer": {"a": 1}}`, `field "answer": JSON object where a string was expected`},
		{`{"question": "Q?", "answer": "A.", "id": 1e999}`, `field "id": number 1e999: strconv.ParseFloat: parsing "1e999": value out of range`},
		{`{"question": "Q?", "answer": "A."} {"x": 1}`, `invalid character '{' after top-level value`},
		{`[1]`, `record is a JSON array, not an object`},
	}
	for _, tt := range tests {
		t.Run(tt.rec, func(t *testing.T) {
			_, _, err := convertFAQJSON(DefaultFAQColumns())(rawRecord{data: []byte(tt.rec), n: 1})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
}

func FuzzFAQJSON(f *testing.F) {
	f.Add([]byte(`[{"id": 12345678901234567, "question": "Q?", "answer": "A.", "category": 1.5}, {"question": "R?", "answer": true}]`))
	f.Add([]byte(`{"qid": "x", "question": "Q?", "answer": null}` + "\n" + `{"question": "Q?", "answer": [1]}`))
	f.Add([]byte(`[{"question": "Q?", "answer": "A."},`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDrain(t, newJSONReader(bytes.NewReader(data), "f.json", "f", convertFAQJSON(DefaultFAQColumns())))
	})
}

// TestFAQCSVUnclosedQuote names the lines an unclosed quote swallowed: encoding/csv reads
// every line after an opening quote into the field until a quote ends it, and its "extraneous
// or missing \" in quoted-field" named only the first line, so the rows lost went unsaid.
func TestFAQCSVUnclosedQuote(t *testing.T) {
	tests := []struct {
		name, data string
		docs       []string // titles read
		want       string   // the record error after "path: "
	}{
		{"to the end", "question,answer\nQ1?,\"A1\nQ2?,A2.\nQ3?,A3.\n", nil,
			"row 1 (lines 2-4): unclosed quote: a quoted field opened in the row on line 2 swallowed lines 2-4, to the end of the file"},
		{"to the end, no line end", "question,answer\nQ0?,A0.\nQ1?,\"A1\nQ2?,A2.\nQ3?,A3.", []string{"Q0?"},
			"row 2 (lines 3-5): unclosed quote: a quoted field opened in the row on line 3 swallowed lines 3-5, to the end of the file"},
		{"to a stray quote", "question,answer\nQ1?,\"A1\nQ2?,A2.\nQ3?,\"A3\",x\nQ4?,A4.\n", []string{"Q4?"},
			"row 1 (lines 2-4): unclosed quote: a quoted field opened in the row on line 2 swallowed lines 2-4, to a quote on line 4 followed by neither a comma nor a line end"},
		{"in the question", "question,answer\n\"Q1?,A1.\nQ2?,A2.\n", nil,
			"row 1 (lines 2-3): unclosed quote: a quoted field opened in the row on line 2 swallowed lines 2-3, to the end of the file"},
		// A bad quote on one line swallows nothing: the error stays encoding/csv's.
		{"one line", "question,answer\nQ1?,\"A1 \"x\" y\"\nQ2?,A2.\n", []string{"Q2?"},
			"row 1 (line 2): extraneous or missing \" in quoted-field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, docs, recErrs, fatal := readData(t, "faq.csv", tt.data, Options{})
			if fatal != nil {
				t.Fatal(fatal)
			}
			var titles []string
			for _, d := range docs {
				titles = append(titles, d.Title)
			}
			if fmt.Sprint(titles) != fmt.Sprint(tt.docs) {
				t.Errorf("documents %q, want %q", titles, tt.docs)
			}
			if want := []string{path + ": " + tt.want}; fmt.Sprint(recErrs) != fmt.Sprint(want) {
				t.Errorf("errors %q\nwant   %q", recErrs, want)
			}
		})
	}
}

// TestFAQCSVRepeatedColumn fails a header that names a column the reader uses twice: the
// second copy was silently dropped. Columns the reader does not use may repeat.
func TestFAQCSVRepeatedColumn(t *testing.T) {
	tests := []struct {
		name, header string
		cols         FAQColumns
		want         string // the fatal error after "path: header (line 1): "; "" reads
	}{
		{"answer twice", "question,answer,answer", FAQColumns{}, `column "answer" is named 2 times (columns 2, 3): rename or drop the copies`},
		{"question in another case", "Question,answer,question", FAQColumns{}, `column "Question" is named 2 times (columns 1, 3): rename or drop the copies`},
		{"date alias twice", "question,answer,last_update,x,last_update", FAQColumns{}, `column "last_update" is named 2 times (columns 3, 5): rename or drop the copies`},
		{"named id thrice", "qid,question,qid,answer,QID", FAQColumns{ID: "qid"}, `column "qid" is named 3 times (columns 1, 3, 5): rename or drop the copies`},
		{"meta twice", "question,answer,lang,lang", FAQColumns{Meta: []string{"lang"}}, `column "lang" is named 2 times (columns 3, 4): rename or drop the copies`},
		{"unused twice", "question,answer,notes,notes", FAQColumns{}, ""},
		{"turned off twice", "question,answer,category,category", FAQColumns{Category: "-"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := strings.Count(tt.header, ",") + 1
			row := "Q?,A." + strings.Repeat(",x", n-2)
			if strings.HasPrefix(tt.header, "qid") {
				row = "1,Q?,x,A.,y"
			}
			path := writeTemp(t, "faq.csv", []byte(tt.header+"\n"+row+"\n"))
			r, err := Open(context.Background(), path, Options{FAQ: tt.cols})
			if err != nil {
				t.Fatal(err)
			}
			docs, recErrs, fatal := drain(t, r)
			if tt.want == "" {
				if fatal != nil || len(recErrs) != 0 || len(docs) != 1 {
					t.Errorf("%d docs, errors %q, fatal %v", len(docs), recErrs, fatal)
				}
				return
			}
			if want := path + ": header (line 1): " + tt.want; fatal == nil || fatal.Error() != want {
				t.Errorf("fatal %v\nwant  %s", fatal, want)
			}
			if len(docs) != 0 {
				t.Errorf("%d documents read past a bad header", len(docs))
			}
		})
	}
}
