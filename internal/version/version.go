// Package version is the one version string of Kairos: what `kairos version` prints and what
// an index's manifest records as the program that wrote it (`kairos stats`: "built ... by
// kairos V"). Before it, the first was Go's pseudo-version of the module
// ("v0.0.0-20260101...-4f1991e") and the second a constant ("0.1.0-dev"), and they disagreed.
package version

import "runtime/debug"

// Base is the release this tree is, or prepares: "-dev" until it is tagged.
const Base = "0.1.0-dev"

// String is Base, followed, when the binary records the commit it was built from (go build
// in a git checkout; `make build`), by "+" and the commit's first 12 hex digits, and
// ".modified" when the tree had uncommitted changes: "0.1.0-dev+4f1991e3b2c1.modified". A
// binary without that record (go run, a test binary) is Base alone.
func String() string { return Read().Version() }

// Version is the version string of a binary built as b describes (String).
func (b Build) Version() string {
	if b.Revision == "" {
		return Base
	}
	s := Base + "+" + b.Revision[:min(12, len(b.Revision))]
	if b.Modified {
		s += ".modified"
	}
	return s
}

// Build is what the binary records of the commit it was built from.
type Build struct {
	Revision string // the full commit hash; "" when not recorded
	Time     string // the commit's time, RFC 3339
	Modified bool   // the tree had uncommitted changes
}

// Read returns the binary's record of its commit (runtime/debug.ReadBuildInfo).
func Read() Build {
	var b Build
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}
