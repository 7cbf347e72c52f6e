// Package smaps reads how much of a memory mapping is resident, from Linux's
// /proc/self/smaps: the measure the tests of mapped files use to show that pages a walk or a
// check has read are released again (kpst's store walk, hnsw's graph load).
package smaps

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// MappingRSS returns the resident bytes of this process's mapping that starts at b's first
// byte (b must be the start of a mapping, as a mapped file's whole slice is).
func MappingRSS(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("smaps: empty mapping")
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	found := false // the mapping's header line was read: its first Rss line is the answer
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		found = found || strings.HasPrefix(line, start)
		if found && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				return 0, fmt.Errorf("smaps: %q: %w", line, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("smaps: no mapping at %s in /proc/self/smaps", start)
}
