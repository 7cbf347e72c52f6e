package childrss

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartOnCPU: a child started on one CPU may run on that CPU only, this process keeps
// its own CPUs, and the child's memory and CPU time can be read while it runs.
func TestStartOnCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU affinity is set on Linux")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	before := CPUs(0)
	cpu := LastCPU()
	if cpu < 0 || before < 1 {
		t.Fatalf("LastCPU %d, CPUs %d", cpu, before)
	}
	cmd := exec.Command(sleep, "5")
	if err := StartOnCPU(cmd, cpu); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if got := CPUs(cmd.Process.Pid); got != 1 || !strings.Contains(string(status), "Cpus_allowed_list:\t"+strconv.Itoa(cpu)+"\n") {
		t.Errorf("child may run on %d CPUs, want CPU %d only", got, cpu)
	}
	if CPUs(0) != before {
		t.Errorf("this process went from %d CPUs to %d", before, CPUs(0))
	}
	rss, hwm, err := Status(cmd.Process.Pid)
	if err != nil || rss <= 0 || hwm < rss {
		t.Errorf("Status: rss %d, hwm %d, %v", rss, hwm, err)
	}
	if _, err := CPUTime(cmd.Process.Pid); err != nil {
		t.Error(err)
	}
	_ = cmd.Process.Kill()
	start := time.Now()
	peak, _ := Wait(cmd)
	if peak <= 0 || time.Since(start) > 5*time.Second {
		t.Errorf("peak %d after Wait", peak)
	}
}
