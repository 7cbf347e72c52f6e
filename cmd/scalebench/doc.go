// Package scalebench is `kairos bench scale`: build and query cost as the collection grows.
//
// For each size N it generates N synthetic passages (real unigram statistics learned from the
// shared texts, seeded: LearnModel, WriteSynthetic), builds them with `kairos index` as a child
// process (so that the build's peak RSS is its own), and reports build rate, the slowest
// 30-second stretch of the build, peak RSS, index size and single-thread query latency, beside
// two anchor engines on the same passages and queries: Xapian (scale_xapian.py, run with
// Debian's python3-xapian) and Apache Lucene (ScaleLucene.java, compiled with the JDK's javac
// into the user cache). Options describes a run and registers its flags; Run measures and
// writes the table or JSON lines; cmd/cli only wires the subcommand.
//
// The anchors' sources are embedded in the binary rather than read from this directory at run
// time, for two reasons. An installed kairos has no source tree beside it, and bench scale
// runs wherever the binary is copied (the GPU and release machines). And an anchor is only a
// reference if it is the same code in every run that is compared: embedded, the anchor is
// fixed by the binary's version, and the Lucene cache is keyed by the hash of the embedded
// source, so an edited anchor can never be measured under an old compiled one. They cost the
// binary about 17 KB.
package scalebench
