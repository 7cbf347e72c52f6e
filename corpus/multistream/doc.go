// Package multistream decompresses bzip2 input on every core when it is made of many
// concatenated streams, as Wikipedia's pages-articles-multistream.xml.bz2 dumps are (each
// stream holds about 100 pages, so that a reader can seek to one).
//
// A Reader cuts the compressed input at stream starts, decompresses the streams on a bounded
// pool of goroutines and returns their text in input order: the output is byte for byte what
// a sequential bzip2 reader gives. The stream starts come from the dump's index file
// (ReadIndex: "offset:pageid:title" lines) when the caller has one, and otherwise from a scan
// for the bytes every stream starts with ("BZh", a level digit, then the first block's magic
// 0x314159265359). A scan may in principle match inside compressed data; a stream cut at a
// false start fails to decompress with an unexpected end, and the Reader then decodes it
// joined with the next piece, so the output never depends on the guess.
//
// An ordinary single-stream .bz2 file has no second stream start: once MaxStreamBytes of
// compressed input hold no stream start, the rest is decompressed sequentially, on one
// goroutine of its own (so that the caller's parsing still runs beside it). Such files gain
// nothing from the pool; recompress them as multistream to use every core.
package multistream
