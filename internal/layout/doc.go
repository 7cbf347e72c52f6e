// Package layout checks the data-flow layering of DEVELOPERS.md: corpus -> indexer -> search
// -> rerank -> chat -> server -> cmd, with shared data structures in internal/ at the bottom and
// embed a leaf that only cmd imports. It has no code, only the test that enforces the rule.
package layout
