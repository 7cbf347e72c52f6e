package kpst

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/corpus/timex"
	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/tombstones"
	"github.com/kairos-rag/kairos/internal/framing"
)

func TestStoreRoundTrip(t *testing.T) {
	ps := []corpus.Passage{
		{ID: "1#0", DocID: "1", Title: "Ünïcode", Section: "A > B", Text: "Ünïcode > A > B | text 1994", URL: "https://x/1",
			Date: time.Date(2016, 4, 29, 10, 0, 0, 0, time.UTC), Source: "s", Ordinal: 0,
			Years: []timex.Mention{{From: 1994, To: 1994, Pos: 24}, {From: 1990, To: 1998, Pos: 3}}},
		{ID: "1#1", DocID: "1", Title: "", Text: ""}, // zero date, no years
		{ID: "de:2#0", DocID: "de:2", Title: "Häuser", Text: "Häuser | 1990", Language: "de", // multilingual index
			Years: []timex.Mention{{From: 1990, To: 1990, Pos: 10}}},
		{ID: "3#5", DocID: "3", Title: "T", Text: "T | Kingdom: Animalia", BlockType: corpus.BlockInfobox},
		{ID: "fr:4#2", DocID: "fr:4", Text: "a; b", Language: "fr", BlockType: corpus.BlockTable},
	}
	path := filepath.Join(t.TempDir(), "p.kpst")
	w, err := createStore(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if k, err := w.Add(&ps[i]); err != nil || k != uint32(i) {
			t.Fatalf("Add = %d, %v", k, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// the writer hashed the file as it wrote it
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if size, sum := w.Sum(); size != int64(len(b)) || sum != sha256.Sum256(b) {
		t.Fatalf("Sum = %d %x, the file has %d bytes, sha256 %x", size, sum, len(b), sha256.Sum256(b))
	}
	s, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range ps {
		got, err := s.Get(t.Context(), uint32(i))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%d) = %+v, %v\nwant %+v", i, got, err, want)
		}
		if doc, err := s.DocID(t.Context(), uint32(i)); err != nil || doc != want.DocID {
			t.Errorf("DocID(%d) = %q, %v", i, doc, err)
		}
	}
	if _, err := s.Get(t.Context(), uint32(len(ps))); err == nil {
		t.Error("Get past the end succeeded")
	}
	// GetMany and DocIDs answer in the order asked, repeats included; a key past the end
	// fails them, as does a cancelled context.
	ctx := context.Background()
	keys := []uint32{1, 0, 1}
	many, err := s.GetMany(ctx, keys)
	if err != nil || len(many) != 3 || !reflect.DeepEqual(many[0], ps[1]) || !reflect.DeepEqual(many[1], ps[0]) || !reflect.DeepEqual(many[2], ps[1]) {
		t.Errorf("GetMany(%v) = %+v, %v", keys, many, err)
	}
	if docs, err := s.DocIDs(ctx, keys); err != nil || !reflect.DeepEqual(docs, []string{"1", ps[0].DocID, "1"}) {
		t.Errorf("DocIDs(%v) = %q, %v", keys, docs, err)
	}
	end := uint32(len(ps))
	if _, err := s.GetMany(ctx, []uint32{0, end}); err == nil {
		t.Error("GetMany past the end succeeded")
	}
	if _, err := s.DocIDs(ctx, []uint32{end}); err == nil {
		t.Error("DocIDs past the end succeeded")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.GetMany(done, keys); err == nil {
		t.Error("GetMany with a cancelled context succeeded")
	}
}

// FuzzParseStore: a damaged store, of either version read, is an error, never a panic.
func FuzzParseStore(f *testing.F) {
	path := filepath.Join(f.TempDir(), "p.kpst")
	w, _ := createStore(path)
	w.Add(&corpus.Passage{ID: "a#0", DocID: "a", Text: "a | b", Years: []timex.Mention{{From: 1, To: 2}}})
	w.Add(&corpus.Passage{ID: "a#1", DocID: "a", Text: "a | c; d", Language: "en", BlockType: corpus.BlockTable})
	w.Close()
	s, _ := openStore(path)
	f.Add(s.segs[0].data)
	if v2, err := os.ReadFile(v2Fixture); err == nil {
		f.Add(v2)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seg, err := parseStore(b, true)
		if err != nil {
			return
		}
		s := &Store{segs: []*segment{seg}, dead: &tombstones.Set{}, n: seg.count}
		for k := 0; k < s.Len() && k < 100; k++ {
			s.Get(t.Context(), uint32(k))
			s.DocID(t.Context(), uint32(k))
			s.Meta(t.Context(), uint32(k))
			s.Language(t.Context(), uint32(k))
			s.BlockType(t.Context(), uint32(k))
		}
	})
}

// FuzzDecodeRecord checks the record decoder of both versions on arbitrary bytes (the CRC
// normally keeps damaged records out, so this guards against panics on crafted files). A
// record that decodes re-encodes to the same passage; a version 2 one, written again in
// version 3, keeps its fields and reads as prose.
func FuzzDecodeRecord(f *testing.F) {
	for _, p := range []corpus.Passage{
		{ID: "x#1", Title: "t", Years: []timex.Mention{{From: 2000, To: 2001, Pos: 5}}},
		{ID: "fr:x#1", Title: "t", Language: "fr"},
	} {
		f.Add(appendRecordV2(nil, &p), uint8(2))
		f.Add(appendRecord(nil, &p), uint8(3))
	}
	f.Add(appendRecord(nil, &corpus.Passage{ID: "x#2", Text: "k: v", BlockType: corpus.BlockInfobox}), uint8(3))
	f.Add(appendRecord(nil, &corpus.Passage{ID: "fr:x#2", Text: "a; b", Language: "fr", BlockType: corpus.BlockTable}), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, v uint8) {
		version := uint32(2 + v%2)
		p, err := decodeRecord(b, version)
		if err != nil {
			return
		}
		if version == 2 && p.BlockType != "" {
			t.Fatalf("version 2 record with block type %q", p.BlockType)
		}
		again, err := decodeRecord(appendRecord(nil, &p), 3)
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("re-encoding changed the record: %+v vs %+v (%v)", again, p, err)
		}
	})
}

// v2Fixture is a version 2 store written by the kairos that preceded block types (three
// passages: dated with years, a section, a German one of a multilingual index).
const v2Fixture = "testdata/store_v2.kpst"

// TestStoreVersion2Opens: a store written before passages carried a block type opens and
// reads as it did, every passage prose; Meta, Language and BlockType agree with Get.
func TestStoreVersion2Opens(t *testing.T) {
	s, err := openStore(v2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []corpus.Passage{
		{ID: "1#0", DocID: "1", Title: "Squirrel", Text: "Squirrel | Squirrels are rodents of 1327.", URL: "https://en.wikipedia.org/wiki/Squirrel",
			Date: time.Date(2023, 8, 24, 1, 14, 42, 0, time.UTC), Source: "articles", Years: []timex.Mention{{From: 1327, To: 1327, Pos: 36}}},
		{ID: "1#1", DocID: "1", Title: "Squirrel", Section: "Diet", Text: "Squirrel > Diet | Nuts.", URL: "https://en.wikipedia.org/wiki/Squirrel#Diet", Source: "articles", Ordinal: 1},
		{ID: "de:2#0", DocID: "de:2", Title: "Hörnchen", Text: "Hörnchen | Nagetiere.", Language: "de"},
	}
	if s.Len() != len(want) || s.segs[0].version != 2 {
		t.Fatalf("%d passages, version %d; want %d, version 2", s.Len(), s.segs[0].version, len(want))
	}
	for k, w := range want {
		p, err := s.Get(t.Context(), uint32(k))
		if err != nil || !reflect.DeepEqual(p, w) {
			t.Errorf("Get(%d) = %+v, %v\nwant %+v", k, p, err, w)
		}
		if p.Block() != corpus.BlockText {
			t.Errorf("key %d: block %q, want text", k, p.Block())
		}
		if bt, err := s.BlockType(t.Context(), uint32(k)); err != nil || bt != "" {
			t.Errorf("BlockType(%d) = %q, %v", k, bt, err)
		}
		if lang, err := s.Language(t.Context(), uint32(k)); err != nil || lang != w.Language {
			t.Errorf("Language(%d) = %q, %v", k, lang, err)
		}
		if date, source, err := s.Meta(t.Context(), uint32(k)); err != nil || !date.Equal(w.Date) || source != w.Source {
			t.Errorf("Meta(%d) = %v %q %v", k, date, source, err)
		}
	}
}

// TestStoreVersions: a new store is written in version 3; a version 4 store (a newer kairos)
// is refused as a version this build does not read, not misread.
func TestStoreVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.kpst")
	w, err := createStore(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(&corpus.Passage{ID: "a#0", DocID: "a", Text: "a | b", BlockType: corpus.BlockTable})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(b[4:8]); v != 3 {
		t.Fatalf("written in version %d, want 3", v)
	}
	binary.LittleEndian.PutUint32(b[4:8], 4)
	var ve *framing.VersionError
	if _, err := parseStore(b, false); !errors.As(err, &ve) || ve.Got != 4 {
		t.Fatalf("parseStore(v4) = %v, want a version error", err)
	}
}

// TestStoreVersion1Refused: a version 1 store (the checksum after the trailer and not covering
// it) is refused with a message that says to rebuild, not read as damage or misread.
func TestStoreVersion1Refused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.kpst")
	w, err := createStore(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(&corpus.Passage{ID: "a#0", DocID: "a", Text: "a | b"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite it in the version 1 layout: header(v1) | records | offsets | trailer(offsetsPos,
	// count) | crc32c(header..offsets) | magic.
	body := cur[:len(cur)-framing.FooterSize-storeTrailer]
	v1 := binary.LittleEndian.AppendUint32([]byte("KPST"), 1)
	v1 = append(v1, body[framing.HeaderSize:]...)
	crc := crc32.Checksum(v1, crc32.MakeTable(crc32.Castagnoli))
	v1 = append(v1, cur[len(body):len(body)+storeTrailer]...)
	v1 = binary.LittleEndian.AppendUint32(v1, crc)
	v1 = append(v1, "KPST"...)
	if len(v1) != len(cur) {
		t.Fatalf("v1 is %d bytes, the current version %d: the envelopes differ only in the checksum's place", len(v1), len(cur))
	}
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openStore(path)
	if err == nil || !strings.Contains(err.Error(), "version 1") || !strings.Contains(err.Error(), "rebuild the index") || !strings.Contains(err.Error(), path) {
		t.Fatalf("openStore(v1) = %v, want a version error naming the file and asking for a rebuild", err)
	}
}

func createStore(path string) (*Writer, error) { return Create(path, 0) }

// TestMetaMatchesGet: Meta, which decodes only the date and the source, agrees with Get for
// dated and undated passages, with and without a source, and fails on a damaged record.
func TestMetaMatchesGet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.kpst")
	w, err := createStore(path)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2005, 6, 1, 0, 0, 0, 0, time.UTC)
	ps := []corpus.Passage{
		{ID: "a#0", DocID: "a", Title: "A", Section: "S", Text: "text | more", URL: "u", Source: "wiki", Date: day},
		{ID: "b#0", DocID: "b", Text: "no date, no source"},
		{ID: "c#0", DocID: "c", Text: "old", Source: "news", Date: time.Date(1850, 1, 2, 0, 0, 0, 0, time.UTC)},
		{ID: "d#0", DocID: "d", Text: "Paris 1900, 1901", Source: "frwiki", Language: "fr",
			Years: []timex.Mention{{From: 1900, To: 1900, Pos: 6}, {From: 1901, To: 1901, Pos: 12}}},
		{ID: "e#3", DocID: "e", Text: "Paris; 1900", Source: "frwiki", Language: "fr", BlockType: corpus.BlockTable,
			Years: []timex.Mention{{From: 1900, To: 1900, Pos: 7}}},
		{ID: "f#1", DocID: "f", Text: "Capital: Paris", BlockType: corpus.BlockInfobox},
	}
	for i := range ps {
		if _, err := w.Add(&ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := range ps {
		p, err := s.Get(t.Context(), uint32(k))
		if err != nil {
			t.Fatal(err)
		}
		date, source, err := s.Meta(t.Context(), uint32(k))
		if err != nil || !date.Equal(p.Date) || source != p.Source {
			t.Errorf("key %d: Meta = %v %q %v, Get has %v %q", k, date, source, err, p.Date, p.Source)
		}
		if lang, err := s.Language(t.Context(), uint32(k)); err != nil || lang != ps[k].Language || p.Language != ps[k].Language {
			t.Errorf("key %d: Language = %q %v, Get has %q, want %q", k, lang, err, p.Language, ps[k].Language)
		}
		if bt, err := s.BlockType(t.Context(), uint32(k)); err != nil || bt != ps[k].BlockType || p.BlockType != ps[k].BlockType {
			t.Errorf("key %d: BlockType = %q %v, Get has %q, want %q", k, bt, err, p.BlockType, ps[k].BlockType)
		}
	}
	if _, _, err := s.Meta(t.Context(), uint32(len(ps))); err == nil {
		t.Error("Meta of a key beyond the store succeeded")
	}
}

// TestStoreMixedVersions: an index built before block types and updated since holds version 2
// segments beside version 3 ones; each is read in its own layout.
func TestStoreMixedVersions(t *testing.T) {
	dir := t.TempDir()
	old, err := os.ReadFile(v2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s0.kpst"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(filepath.Join(dir, "s1.kpst"), 3)
	if err != nil {
		t.Fatal(err)
	}
	added := corpus.Passage{ID: "1#2", DocID: "1", Title: "Squirrel", Text: "Squirrel | Kingdom: Animalia", BlockType: corpus.BlockInfobox}
	if _, err := w.Add(&added); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSegments(dir, []Segment{{Name: "s0.kpst", Base: 0, Count: 3}, {Name: "s1.kpst", Base: 3, Count: 1}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k, want := range []string{"", "", "", corpus.BlockInfobox} {
		p, err := s.Get(t.Context(), uint32(k))
		bt, btErr := s.BlockType(t.Context(), uint32(k))
		if err != nil || btErr != nil || p.BlockType != want || bt != want {
			t.Errorf("key %d: Get block %q (%v), BlockType %q (%v), want %q", k, p.BlockType, err, bt, btErr, want)
		}
	}
	if p, _ := s.Get(t.Context(), 3); !reflect.DeepEqual(p, added) {
		t.Errorf("Get(3) = %+v, want %+v", p, added)
	}
}

// TestEachStopsWhenContextEnds: a walk of the whole store checks its context, every
// eachCheck keys: cancelled before it starts, it reads nothing; cancelled by fn, it stops
// within eachCheck keys with the context's error.
// openTextStore writes a store of n passages of document "d", passage i with text(i), and
// opens it.
func openTextStore(t *testing.T, n int, text func(i int) string) *Store {
	t.Helper()
	s, err := openStore(writeTextStore(t, n, text))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeTextStore writes a single-segment store of n passages of the given texts and returns its
// path.
func writeTextStore(t *testing.T, n int, text func(i int) string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.kpst")
	w, err := createStore(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := corpus.Passage{ID: "d#" + strconv.Itoa(i), DocID: "d", Text: text(i)}
		if _, err := w.Add(&p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEachStopsWhenContextEnds(t *testing.T) {
	n := 3 * eachCheck
	s := openTextStore(t, n, func(int) string { return "t" })
	all := 0
	if err := s.Each(t.Context(), func(uint32, corpus.Passage) error { all++; return nil }); err != nil || all != n {
		t.Fatalf("Each: %d passages, %v; want %d", all, err, n)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	seen := 0
	if err := s.Each(done, func(uint32, corpus.Passage) error { seen++; return nil }); !errors.Is(err, context.Canceled) || seen != 0 {
		t.Errorf("Each under a cancelled context: %d passages, %v; want none and context.Canceled", seen, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	seen = 0
	err := s.Each(ctx, func(uint32, corpus.Passage) error {
		if seen++; seen == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != eachCheck {
		t.Errorf("Each cancelled at the 10th passage: %d passages, %v; want %d and context.Canceled", seen, err, eachCheck)
	}
}

// A record that cannot be decoded, in a segment whose checksum was not read at open (a large
// one, or a trusted one), is reported as damage naming the file, the passage key and the
// byte its record starts at; it said "passage key 1: bad uvarint".
func TestDamagedRecordNamesFileAndOffset(t *testing.T) {
	path := writeTextStore(t, 3, func(i int) string { return "text " + strconv.Itoa(i) })
	seg, err := openSegment(path, true)
	if err != nil {
		t.Fatal(err)
	}
	at := binary.LittleEndian.Uint64(seg.offsets[8:])
	seg.unmap()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 10 { // the id's length: a varint longer than any
		b[int(at)+j] = 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if seg, err = openSegment(path, true); err != nil {
		t.Fatal(err)
	}
	s := &Store{segs: []*segment{seg}, dead: &tombstones.Set{}, n: seg.count}
	defer s.Close()
	want := path + ": "
	where := "passage key 1, record at byte " + strconv.FormatUint(at, 10) + ": "
	_, errGet := s.Get(t.Context(), 1)
	_, errDoc := s.DocID(t.Context(), 1)
	_, _, errMeta := s.Meta(t.Context(), 1)
	_, errLang := s.Language(t.Context(), 1)
	for name, err := range map[string]error{"Get": errGet, "DocID": errDoc, "Meta": errMeta, "Language": errLang} {
		if !errors.Is(err, backend.ErrDamaged) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), where) {
			t.Errorf("%s: %v; want damage naming %q and %q", name, err, want, where)
		}
	}
	if p, err := s.Get(t.Context(), 2); err != nil || p.Text != "text 2" {
		t.Errorf("the record after it: %+v, %v", p, err)
	}
}
