//go:build linux

package ivf

import (
	"os"
	"testing"
)

func TestCgroupLimit(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": "9223372036854771712\n", // v1: none
		"/sys/fs/cgroup/memory/a/memory.limit_in_bytes":   "4294967296\n",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":     "9223372036854771712\n",
		"/sys/fs/cgroup/memory/c/memory.limit_in_bytes":   "8589934592\n",
		"/sys/fs/cgroup/svc/x/memory.max":                 "max\n",
		"/sys/fs/cgroup/svc/memory.max":                   "2147483648\n",
		"/sys/fs/cgroup/bad/memory.max":                   "-5\n",
		"/sys/fs/cgroup/word/memory.max":                  "lots\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tc := range []struct {
		name, cgroup string
		want         int64
	}{
		{"v1, the limit on a parent", "4:memory:/a/b\n", 4294967296},
		{"v1, among other controllers", "9:name=systemd:/\n4:cpu,memory:/c\n0::/\n", 8589934592},
		{"v1, no limit anywhere", "4:memory:/\n", 0},
		{"v2, max on the leaf, a limit above it", "0::/svc/x\n", 2147483648},
		{"v2, no files", "0::/elsewhere\n", 0},
		{"a negative limit is none", "0::/bad\n", 0},
		{"a word is none", "0::/word\n", 0},
		{"not a cgroup line", "garbage\n4:memory\n4:memory:relative\n", 0},
		{"the least of both hierarchies", "4:memory:/c\n0::/svc\n", 2147483648},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cgroupLimit([]byte(tc.cgroup), read); got != tc.want {
				t.Errorf("cgroupLimit(%q) = %d, want %d", tc.cgroup, got, tc.want)
			}
		})
	}
	if m := availableMemory(); m <= 0 {
		t.Errorf("availableMemory() = %d on linux, want the machine's memory at least", m)
	}
}

// FuzzCgroupLimit: any content of /proc/self/cgroup gives a limit of 0 or one of the files'
// values, without a panic.
func FuzzCgroupLimit(f *testing.F) {
	f.Add([]byte("4:memory:/a/b\n0::/svc/x\n"))
	f.Add([]byte("0::/\n"))
	f.Add([]byte("::::\n1:memory,cpu:/../..//x\n"))
	read := func(p string) ([]byte, error) {
		switch p {
		case "/sys/fs/cgroup/memory/memory.limit_in_bytes":
			return []byte("4294967296"), nil
		case "/sys/fs/cgroup/memory.max":
			return []byte("2147483648\n"), nil
		}
		return nil, os.ErrNotExist
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got := cgroupLimit(b, read); got != 0 && got != 4294967296 && got != 2147483648 {
			t.Errorf("cgroupLimit(%q) = %d", b, got)
		}
	})
}
