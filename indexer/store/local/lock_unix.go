//go:build unix

package local

import (
	"errors"
	"os"
	"syscall"

	"github.com/kairos-rag/kairos/indexer/store"
)

func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return store.ErrLocked
	}
	return err
}
