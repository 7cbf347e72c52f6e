// Package asmcheck holds the repository's amd64 assembly to rules that a reading of the
// source can check, in its tests. It has no code of its own.
package asmcheck
