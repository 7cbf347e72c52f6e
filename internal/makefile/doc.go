// Package makefile holds the tests of the repository's Makefile: what `make build`, `make run`
// and the setup that `make test` runs print before they work for minutes, and how setup
// refuses when it cannot install Debian packages (issue 54). It has no code of its own.
package makefile
