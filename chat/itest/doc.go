// Package itest runs the chat pipelines over a real Kairos index (indexer -> search -> rerank)
// built from shared data. It is a separate package so that a change in those packages' APIs
// breaks only these tests, not the chat package's own.
package itest
