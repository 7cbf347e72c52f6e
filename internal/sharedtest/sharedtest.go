// Package sharedtest locates the shared data sets and models that Kairos's tests read: the
// directory named by $KAIROS_SHARED, else the "shared" directory beside the repository (the
// layout CI uses: a clean clone with ../shared beside it). It finds the repository by walking up
// from the test's working directory to go.mod, so a test gets the same answer from any package
// depth and from any git worktree.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides the shared directory.
const EnvVar = "KAIROS_SHARED"

// Dir returns the shared directory: $KAIROS_SHARED, else the "shared" directory beside the
// module root above the working directory, else "../shared".
func Dir() string {
	if d := os.Getenv(EnvVar); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared")
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared")
		}
		if filepath.Dir(d) == d {
			return filepath.Join("..", "shared")
		}
	}
}

// Join returns the path of rel (slash-separated) inside the shared directory, whether or not it
// exists: for package-level paths, which are checked when opened.
func Join(rel string) string { return filepath.Join(Dir(), filepath.FromSlash(rel)) }

// Path returns the path of rel inside the shared directory, and fails tb (never skips it) when
// rel is missing: a test that cannot read its data has not passed.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p := Join(rel)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("shared test data missing (put ../shared beside the repository or set $%s): %v", EnvVar, err)
	}
	return p
}
