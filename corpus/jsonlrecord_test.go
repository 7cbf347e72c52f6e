package corpus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonlRecordCases are records at the edges of decodeJSONLRecord, with whether it takes them.
var jsonlRecordCases = []struct {
	data string
	fast bool
}{
	{`{"id": "s1-0", "title": "T", "text": "one two. Three"}`, true},
	{` { "_id" : 7 , "text" : "x" , "url" : "https://e.org/a?b=1" } `, true},
	{`{"docid": -1.5e+3, "doc_id": 0, "pid": true, "text": "", "date": "2020-01-02", "block_type": "table"}`, true},
	{`{"text": "caf\u00e9 \"q\" \\ \/ \b\f\n\r\t", "title": null, "url": null, "id": null}`, true},
	{`{"text": "café dō 北京", "extra": 12, "other": "x", "flag": false, "none": null}`, true},
	{`{"text": "a", "text": "b", "title": "t", "title": null}`, true},
	{`{}`, true},
	{`{"text": "x", "Text": "y"}`, false}, // json.Unmarshal matches keys without case
	{`{"TITLE": "t", "text": "x"}`, false},
	{`{"text": "x", "meta": {"a": 1}}`, false}, // nested
	{`{"text": "x", "tags": ["a"]}`, false},
	{`{"text": "\ud83d\ude00"}`, false}, // surrogates
	{`{"text": "\ud83d"}`, false},
	{"{\"text\": \"\xff\"}", false},    // invalid UTF-8
	{"{\"te\\u0078t\": \"x\"}", false}, // escaped key
	{`{"text": "x",}`, false},          // syntax errors
	{`{"text": "x"} x`, false},
	{`{"text": "x"`, false},
	{`{"text": 01}`, false},
	{`{"id": 01, "text": "x"}`, false},
	{`{"id": 1., "text": "x"}`, false},
	{`{"id": nul, "text": "x"}`, false},
	{`{"text": 5}`, false},          // a wrong type
	{"{\"text\": \"a\tb\"}", false}, // a control character
	{`{"text": "\x"}`, false},
	{`[{"text": "x"}]`, false},
	{`"text"`, false},
	{``, false},
}

// checkJSONLRecord holds decodeJSONLRecord to json.Unmarshal: where it takes a record, the
// two decode it the same.
func checkJSONLRecord(t *testing.T, data []byte) bool {
	t.Helper()
	var got jsonlRecord
	if !decodeJSONLRecord(data, &got) {
		return false
	}
	var want jsonlRecord
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%q: taken, but json.Unmarshal: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
	}
	for _, raw := range []json.RawMessage{got.ID, got.UID, got.DocID, got.DocU, got.PID} {
		checkJSONID(t, raw)
	}
	return true
}

// checkJSONID holds jsonID's shortcuts to json.Unmarshal.
func checkJSONID(t *testing.T, raw json.RawMessage) {
	t.Helper()
	got, gotErr := jsonID(raw)
	var want string
	var wantErr error
	switch r := strings.TrimSpace(string(raw)); {
	case r == "" || r == "null":
	case r[0] == '"':
		var s string
		if wantErr = json.Unmarshal([]byte(r), &s); wantErr == nil {
			want = strings.TrimSpace(s)
		}
	default:
		var n json.Number
		if wantErr = json.Unmarshal([]byte(r), &n); wantErr == nil {
			want = n.String()
		}
	}
	if got != want || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("jsonID(%q) = %q, %v; json.Unmarshal %q, %v", raw, got, gotErr, want, wantErr)
	}
}

func TestDecodeJSONLRecord(t *testing.T) {
	for _, c := range jsonlRecordCases {
		if got := checkJSONLRecord(t, []byte(c.data)); got != c.fast {
			t.Errorf("%q: taken %v, want %v", c.data, got, c.fast)
		}
	}
	for _, raw := range []string{`"a"`, `" a b "`, `"\u00e9"`, `"\ud83d\ude00"`, `12`, `-0.5e3`, `1e`, `"x`, `{}`, `true`, "\"\xff\""} {
		checkJSONID(t, json.RawMessage(raw))
	}
}

func FuzzDecodeJSONLRecord(f *testing.F) {
	for _, c := range jsonlRecordCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkJSONLRecord(t, data)
		checkJSONID(t, data)
	})
}
