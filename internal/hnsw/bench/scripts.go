// Package bench holds the anchor engines of `kairos bench ann` that are not Go: hnswlib and
// FAISS (anchor_bench.py, run with Debian's python3) and LanceDB (anchor_lancedb.js, run with
// node on the packages lancedb/package-lock.json pins, which `make lancedb` installs). The
// scripts are embedded in the binary, as bench scale's anchors are (cmd/scalebench's package
// comment says why): an anchor is a reference only if it is the same code in every run that
// is compared, and an installed kairos has no source tree beside it.
package bench

import _ "embed"

// AnchorPy is anchor_bench.py: the hnswlib and FAISS engines.
//
//go:embed anchor_bench.py
var AnchorPy []byte

// AnchorLanceDB is anchor_lancedb.js: the LanceDB engine.
//
//go:embed anchor_lancedb.js
var AnchorLanceDB []byte

// LanceDBVersion is the @lancedb/lancedb release lancedb/package.json pins.
const LanceDBVersion = "0.31.0"
