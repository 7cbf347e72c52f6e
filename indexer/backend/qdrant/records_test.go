package qdrant

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// chunked splits data as WriteRecord does and returns its sha256.
func chunked(data []byte) ([]string, string) {
	var parts []string
	for lo := 0; lo < len(data); lo += recordChunk {
		parts = append(parts, base64.StdEncoding.EncodeToString(data[lo:min(lo+recordChunk, len(data))]))
	}
	sum := sha256.Sum256(data)
	return parts, hex.EncodeToString(sum[:])
}

func TestAssembleRecord(t *testing.T) {
	big := bytes.Repeat([]byte("kairos manifest "), recordChunk/8) // two full chunks
	big = append(big, "tail"...)
	bigParts, bigSum := chunked(big)
	smallParts, smallSum := chunked([]byte(`{"format_version":4}`))
	for _, tc := range []struct {
		name    string
		size    int64
		sha     string
		parts   []string
		want    []byte
		wantErr string
	}{
		{name: "empty", size: 0, sha: hex.EncodeToString(func() []byte { s := sha256.Sum256(nil); return s[:] }()), want: []byte{}},
		{name: "one chunk", size: 20, sha: smallSum, parts: smallParts, want: []byte(`{"format_version":4}`)},
		{name: "three chunks", size: int64(len(big)), sha: bigSum, parts: bigParts, want: big},
		{name: "wrong sum", size: 20, sha: bigSum, parts: smallParts, wantErr: "sha256"},
		{name: "short", size: 21, sha: smallSum, parts: smallParts, wantErr: "21 bytes"},
		{name: "chunk missing from the list", size: int64(len(big)), sha: bigSum, parts: bigParts[:2], wantErr: "damaged header"},
		{name: "extra chunk", size: 20, sha: smallSum, parts: append(append([]string(nil), smallParts...), smallParts...), wantErr: "damaged header"},
		{name: "bad base64", size: 3, sha: smallSum, parts: []string{"!!!!"}, wantErr: "chunk 1"},
		{name: "negative size", size: -1, parts: nil, wantErr: "damaged header"},
		{name: "chunk longer than the header", size: 5, sha: smallSum, parts: smallParts, wantErr: "more than the header allows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assembleRecord(tc.size, tc.sha, tc.parts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("got %d bytes, %v; want %d bytes", len(got), err, len(tc.want))
			}
		})
	}
}

// FuzzAssembleRecord: whatever the cluster hands back, assembleRecord returns exactly the
// bytes whose size and sha256 the header names, or an error; never a panic.
func FuzzAssembleRecord(f *testing.F) {
	parts, sum := chunked([]byte("hello record"))
	f.Add(int64(12), sum, parts[0], "")
	f.Add(int64(3), "", "AAAA", "AA==")
	f.Fuzz(func(t *testing.T, size int64, sha, a, b string) {
		var ps []string
		for _, p := range []string{a, b} {
			if p != "" {
				ps = append(ps, p)
			}
		}
		got, err := assembleRecord(size, sha, ps)
		if err != nil {
			return
		}
		s := sha256.Sum256(got)
		if int64(len(got)) != size || hex.EncodeToString(s[:]) != sha {
			t.Fatalf("accepted %d bytes (sha256 %x) for size %d sha256 %s", len(got), s, size, sha)
		}
	})
}
