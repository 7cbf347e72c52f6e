package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFromTheModuleRoot(t *testing.T) {
	t.Setenv(EnvVar, "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// This package is internal/sharedtest: the module root is two levels up.
	want := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(wd))), "shared")
	if got := Dir(); got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
}

func TestDirFromTheEnvironment(t *testing.T) {
	t.Setenv(EnvVar, "/somewhere/else")
	if got := Join("data/x.jsonl"); got != filepath.FromSlash("/somewhere/else/data/x.jsonl") {
		t.Errorf("Join = %q", got)
	}
}

func TestPathFindsSharedData(t *testing.T) {
	// The shared models README is part of every shared checkout.
	p := Path(t, "models/README.md")
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}
