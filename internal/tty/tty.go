// Package tty tells whether a stream is a terminal, for the few places that behave differently
// on one (progress lines redrawn in place, the chat REPL's prompt).
package tty

import "os"

// Is reports whether v is an *os.File on a character device such as a terminal. Anything
// else (a buffer, a pipe, a regular file) is not.
func Is(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
