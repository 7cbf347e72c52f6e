package framing

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var testFormat = Format{Name: "test table", Magic: "KTST", Version: 3}

func frame(payload string) []byte {
	return testFormat.Seal(append(testFormat.Begin(), payload...))
}

func TestOpen(t *testing.T) {
	good := frame("payload bytes")
	flipped := bytes.Clone(good)
	flipped[HeaderSize+2] ^= 0x20
	oldVersion := Format{Name: "test table", Magic: "KTST", Version: 2}.Seal(append(Format{Name: "x", Magic: "KTST", Version: 2}.Begin(), "payload bytes"...))
	tests := []struct {
		name        string
		in          []byte
		wantPayload string
		wantErr     string // substring; "" means success
		wantVersion uint32 // a VersionError with this version
	}{
		{"good", good, "payload bytes", "", 0},
		{"empty payload", frame(""), "", "", 0},
		{"other magic", Format{Name: "x", Magic: "KOTH", Version: 3}.Seal(append(Format{Name: "x", Magic: "KOTH", Version: 3}.Begin(), "p"...)), "", "not a test table", 0},
		{"too short", good[:HeaderSize+FooterSize-1], "", "not a test table", 0},
		{"empty file", nil, "", "not a test table", 0},
		{"truncated", good[:len(good)-3], "", "truncated test table", 0},
		{"flipped payload bit", flipped, "", "checksum mismatch", 0},
		{"old version", oldVersion, "", "test table version 2, this build reads version 3", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := testFormat.Open(tc.in)
			if tc.wantErr == "" {
				if err != nil || string(p) != tc.wantPayload {
					t.Fatalf("Open = %q, %v; want %q", p, err, tc.wantPayload)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrFormat) {
				t.Fatalf("err = %v, want one containing %q and wrapping ErrFormat", err, tc.wantErr)
			}
			var ve *VersionError
			if got := errors.As(err, &ve); got != (tc.wantVersion != 0) || (got && ve.Got != tc.wantVersion) {
				t.Errorf("VersionError = %v (%v), want version %d", got, ve, tc.wantVersion)
			}
		})
	}
}

// TestWriterMatchesSeal: streaming a payload in pieces gives the bytes Begin+Seal give.
func TestWriterMatchesSeal(t *testing.T) {
	for _, pieces := range [][]string{nil, {""}, {"a"}, {"records ", "offsets ", "trailer"}} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, testFormat)
		if err != nil {
			t.Fatal(err)
		}
		if w.Offset() != HeaderSize {
			t.Errorf("offset after header = %d", w.Offset())
		}
		for _, p := range pieces {
			if _, err := w.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		joined := strings.Join(pieces, "")
		if w.Offset() != uint64(HeaderSize+len(joined)) {
			t.Errorf("%q: offset %d", pieces, w.Offset())
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := frame(joined); !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%q: streamed %x, sealed %x", pieces, buf.Bytes(), want)
		}
	}
}

// FuzzOpen: Open never panics, and whatever it accepts is exactly the framing of the payload it
// returns (nothing outside the envelope is ignored).
func FuzzOpen(f *testing.F) {
	f.Add(frame("payload"))
	f.Add(frame(""))
	f.Add([]byte("KTST"))
	f.Add(frame("x")[:10])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := testFormat.Open(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if again := frame(string(p)); !bytes.Equal(again, b) {
			t.Fatalf("accepted %x, which is not the framing of its payload %x", b, p)
		}
	})
}
