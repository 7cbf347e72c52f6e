package nearest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"text", "text", 0},
		{"txet", "text", 1}, // a swap of neighbours is one edit
		{"serach", "search", 1},
		{"indx", "index", 1},
		{"idnex", "index", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestName(t *testing.T) {
	commands := []string{"index", "search", "serve", "stats", "verify", "eval", "chat"}
	tests := []struct {
		word string
		want string
	}{
		{"serach", "search"},
		{"indx", "index"},
		{"serv", "serve"},
		{"stat", "stats"},
		{"sreve", "serve"},
		{"frob", ""},     // nothing near
		{"x", ""},        // too short to mean anything
		{"chta", "chat"}, // one swap in a 4-letter name: 2*1 < 4
		{"ival", "eval"},
	}
	for _, tc := range tests {
		if got := Name(tc.word, commands); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	// Ties go to the first in byte order, whatever the order given.
	if a, b := Name("cat", []string{"cut", "bat"}), Name("cat", []string{"bat", "cut"}); a != "bat" || b != "bat" {
		t.Errorf("tie: %q, %q, want bat both times", a, b)
	}
}

func FuzzDistance(f *testing.F) {
	f.Add("serach", "search")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := Distance(a, b)
		if d < 0 || d > max(len(a), len(b)) {
			t.Fatalf("Distance(%q, %q) = %d out of range", a, b, d)
		}
		if (d == 0) != (a == b) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
	})
}
