package doctable

import (
	"encoding/binary"
	"strings"
	"testing"
)

// A document count larger than the file's bytes can hold is refused before it sizes anything:
// a document takes at least 34 bytes (id length, hash, key count).
func TestParseRefusesCountPastTheFile(t *testing.T) {
	doc := append([]byte{0}, make([]byte, 32)...) // an empty id, a hash
	doc = append(doc, 0)                          // no keys
	for _, tc := range []struct {
		count uint64
		want  string
	}{
		{1, ""},
		{2, "exceeds what the file's 34 bytes hold"},
		{1 << 40, "exceeds what the file's 34 bytes hold"},
	} {
		b := binary.LittleEndian.AppendUint64(Format.Begin(), tc.count)
		_, err := Parse(Format.Seal(append(b, doc...)))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("count %d: %v, want %q", tc.count, err, tc.want)
		}
	}
}
