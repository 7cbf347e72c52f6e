//go:build !unix

package local

import "os"

// flock is a no-op where flock(2) does not exist: concurrent writers are the user's concern.
func flock(*os.File) error { return nil }
