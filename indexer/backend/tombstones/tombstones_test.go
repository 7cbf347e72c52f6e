package tombstones

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	ts := &Set{}
	for _, k := range []uint32{5, 64, 0, 1000, 5} {
		ts.Add(k)
	}
	got, err := parse(ts.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Keys(), []uint32{0, 5, 64, 1000}) || got.Len() != 4 || !got.Has(64) || got.Has(63) {
		t.Fatalf("keys %v len %d", got.Keys(), got.Len())
	}
	if m, ok := got.Max(); !ok || m != 1000 {
		t.Fatalf("max %d %v", m, ok)
	}
}

// A count whose four-byte keys overflow 64 bits (1<<62 + 1 keys: 4 bytes each wrap to 4) in a
// file with a valid checksum is an error, not a read past the keys.
func TestParseHugeCount(t *testing.T) {
	payload := binary.LittleEndian.AppendUint64(format.Begin(), 1<<62+1)
	payload = binary.LittleEndian.AppendUint32(payload, 7)
	if _, err := parse(format.Seal(payload)); err == nil {
		t.Fatal("a count of 1<<62+1 keys over one key's bytes was accepted")
	}
}

// FuzzParse: a damaged tombstone file is an error, never a panic.
func FuzzParse(f *testing.F) {
	ts := &Set{}
	ts.Add(1)
	ts.Add(70)
	f.Add(ts.Encode())
	f.Add((&Set{}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := parse(b)
		if err != nil {
			return
		}
		if again, err := parse(ts.Encode()); err != nil || !reflect.DeepEqual(again.Keys(), ts.Keys()) {
			t.Fatalf("re-encoding changed the set: %v", err)
		}
	})
}
