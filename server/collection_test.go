package server

import (
	"strings"
	"testing"
)

func TestCollectionOptions(t *testing.T) {
	l := (&fakeLoader{}).index()
	for _, tt := range []struct {
		name string
		opts Options
		err  string
	}{
		{"neither", Options{}, "Index or Collections is required"},
		{"both", Options{Index: l, Collections: []Collection{{Name: "a", Index: l}}}, "not both"},
		{"reserved", Options{Collections: []Collection{{Name: "V2", Index: l}}}, `"V2" is a path of the API itself`},
		{"slash", Options{Collections: []Collection{{Name: "a/b", Index: l}}}, `collection name "a/b": want`},
		{"twice", Options{Collections: []Collection{{Name: "a", Index: l}, {Name: "a", Index: l}}}, `"a" is given twice`},
		{"no index", Options{Collections: []Collection{{Name: "a"}}}, `"a" has no Index`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %s", err, tt.err)
			}
		})
	}
}
