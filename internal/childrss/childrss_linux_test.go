package childrss

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The main goroutine keeps the main thread, which Go's runtime never ends (it parks it
// instead). StartOnCPU's locked threads are therefore others, which end with their goroutines,
// as in a program whose main goroutine is busy: TestChildEndsWithParent's start-on-cpu case
// then shows that the child outlives the start.
func init() { runtime.LockOSThread() }

// TestChildPeakRSSIsTheChilds: after this process has touched 256 MB and let them go, a child
// that needs a few MB reports a few MB, not this process's peak (which a child started
// without the reset inherits: see the package comment).
func TestChildPeakRSSIsTheChilds(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	const size = 256 << 20
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if err := syscall.Munmap(b); err != nil {
		t.Fatal(err)
	}
	peak, err := Run(exec.Command(truePath))
	if err != nil {
		t.Fatal(err)
	}
	if peak <= 0 || peak >= size/2 {
		t.Fatalf("true(1) peaked at %d MB; this process had reached %d MB before it started", peak>>20, size>>20)
	}
}

// TestChildEndsWithParent: a child started by Start or StartOnCPU is alive while the process
// that started it runs (StartOnCPU's thread must outlive the start), and is killed when that
// process is killed before it can clean up. The starting process is this test binary run
// again as helperStarter.
func TestChildEndsWithParent(t *testing.T) {
	for _, how := range []string{"start", "start-on-cpu"} {
		t.Run(how, func(t *testing.T) {
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperStarter$")
			helper.Env = append(os.Environ(), "CHILDRSS_HELPER="+how)
			out, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			defer helper.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("helper said %q: %v", line, err)
			}
			pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "child "))
			if err != nil {
				t.Fatalf("helper said %q", line)
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			time.Sleep(300 * time.Millisecond) // the helper's GC and scheduler run meanwhile
			if !running(pid) {
				t.Fatalf("child %d ended while its parent ran", pid)
			}
			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			helper.Wait()
			for deadline := time.Now().Add(5 * time.Second); running(pid); {
				if time.Now().After(deadline) {
					t.Fatalf("child %d still runs 5 s after its parent was killed", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestHelperStarter is TestChildEndsWithParent's starting process: it starts sleep(1) as
// CHILDRSS_HELPER says, prints its pid, and waits to be killed. It does nothing in a plain run.
func TestHelperStarter(t *testing.T) {
	how := os.Getenv("CHILDRSS_HELPER")
	if how == "" {
		return
	}
	cmd := exec.Command("sleep", "300")
	var err error
	if how == "start" {
		err = Start(cmd)
	} else {
		err = StartOnCPU(cmd, LastCPU())
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("child %d\n", cmd.Process.Pid)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// running says whether process pid exists and is not a zombie (a child whose parent died is
// adopted by a process that may not reap it at once).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
