//go:build linux

package ivf

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// availableMemory is the memory this process may use: the machine's, or its memory cgroup's
// limit (v1 or v2, the least along the cgroup's path) where that is less. 0: unknown.
func availableMemory() int64 {
	var si unix.Sysinfo_t
	total := int64(0)
	if unix.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return total
	}
	if l := cgroupLimit(b, os.ReadFile); l > 0 && (total == 0 || l < total) {
		return l
	}
	return total
}

// cgroupLimit is the least memory limit set on the cgroup path of /proc/self/cgroup's content
// b or on any cgroup above it, read through read; 0 where none is set or anything is not as
// expected (a limit is advice on speed here, so an unreadable one is no limit).
func cgroupLimit(b []byte, read func(string) ([]byte, error)) int64 {
	var least int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controllers:path; v2's single hierarchy has ID 0 and no controllers.
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		var root, file string
		switch {
		case f[0] == "0" && f[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case cgroupHasController(f[1], "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean(f[2]); ; p = path.Dir(p) {
			if v, err := read(path.Join(root, p, file)); err == nil {
				s := strings.TrimSpace(string(v))
				// v2 writes "max" for none; v1 a number near 2^63 rounded to pages.
				if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < 1<<62 && (least == 0 || n < least) {
					least = n
				}
			}
			if p == "/" {
				break
			}
		}
	}
	return least
}

// cgroupHasController reports whether the comma-separated controllers list names name.
func cgroupHasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
