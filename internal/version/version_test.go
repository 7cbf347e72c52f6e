package version

import "testing"

func TestBuildVersion(t *testing.T) {
	tests := []struct {
		name string
		b    Build
		want string
	}{
		{"no record (go run, go test)", Build{}, Base},
		{"a clean checkout", Build{Revision: "4f1991e3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7", Time: "2026-01-01T00:00:00Z"}, Base + "+4f1991e3b2c1"},
		{"uncommitted changes", Build{Revision: "4f1991e3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7", Modified: true}, Base + "+4f1991e3b2c1.modified"},
		{"a short revision", Build{Revision: "abc"}, Base + "+abc"},
	}
	for _, tc := range tests {
		if got := tc.b.Version(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A test binary records no commit: String is Base.
	if got := String(); got != Read().Version() {
		t.Errorf("String() = %q, Read().Version() = %q", got, Read().Version())
	}
}
