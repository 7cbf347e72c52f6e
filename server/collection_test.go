package server

import (
	"strings"
	"testing"
)

func TestCollectionOptions(t *testing.T) {
	l := (&fakeLoader{}).load
	for _, tt := range []struct {
		name string
		opts Options
		err  string
	}{
		{"neither", Options{}, "Loader or Collections is required"},
		{"both", Options{Loader: l, Collections: []Collection{{Name: "a", Loader: l}}}, "not both"},
		{"reserved", Options{Collections: []Collection{{Name: "V2", Loader: l}}}, `"V2" is a path of the API itself`},
		{"slash", Options{Collections: []Collection{{Name: "a/b", Loader: l}}}, `collection name "a/b": want`},
		{"twice", Options{Collections: []Collection{{Name: "a", Loader: l}, {Name: "a", Loader: l}}}, `"a" is given twice`},
		{"no loader", Options{Collections: []Collection{{Name: "a"}}}, `"a" has no Loader`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %s", err, tt.err)
			}
		})
	}
}
