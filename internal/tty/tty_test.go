package tty

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestIs(t *testing.T) {
	regular, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	tests := []struct {
		name string
		v    any
		want bool
	}{
		{"buffer", &bytes.Buffer{}, false},
		{"regular file", regular, false},
		{"pipe", w, false},
		{"character device", devNull, true}, // what a terminal is, as far as Is can tell
		{"nil", nil, false},
	}
	for _, tc := range tests {
		if got := Is(tc.v); got != tc.want {
			t.Errorf("%s: Is = %v, want %v", tc.name, got, tc.want)
		}
	}
}
