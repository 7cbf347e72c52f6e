//go:build !unix

package hnsw

import (
	"errors"
	"os"
)

func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.New("memory mapping unsupported") }

func unmapFile([]byte) error { return nil }

func releasePages([]byte) {}

const canMap = false
