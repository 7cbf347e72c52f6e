// Package doccheck keeps the project's Markdown documentation honest: every relative link and
// #anchor of README.md, CHANGELOG.md and docs/*.md resolves to a file of the repository and to
// a heading of the page it names (Links), and the reference tables of docs/http-api.md are the
// ones server/openapi.json, the route contract, generates (HTTPReference). A documentation
// page that a newcomer follows to a missing file, or an API table that drifted from the
// server, fails the tests here rather than the reader.
//
// The tests find the repository by walking up from their working directory to go.mod, as
// internal/sharedtest does, so they give the same answer from any git worktree.
package doccheck
