package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin writes executable shell scripts named after the keys of cmds into a new directory,
// for PATH to find before the real ones.
func fakeBin(t *testing.T, cmds map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range cmds {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runMake runs make with args in the repository root, PATH starting with bin.
func runMake(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"-s", "-C", root, "--no-print-directory"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// make apt installs only the missing Debian packages, saying which before apt-get runs; run
// by another user than root it does not call apt-get but says what to run.
func TestAptSaysWhatItInstallsAndNeedsRoot(t *testing.T) {
	pkgs := "python3-hnswlib python3-faiss python3-numpy python3-onnx chromium liblucene8-java default-jdk-headless"
	tests := []struct {
		name      string
		uid       string
		installed bool   // dpkg -s finds every package
		wantErr   bool   // make fails
		want      string // the output, exactly
		apt       string // apt-get's calls, one a line ("" none)
	}{
		{"root, packages missing", "0", false, false,
			"setup: installing Debian packages with apt-get (needs root): " + pkgs + "\n",
			"update -qq\ninstall -y -qq " + pkgs + "\n"},
		{"not root, packages missing", "1000", false, true,
			"setup: installing Debian packages with apt-get (needs root): " + pkgs + "\n" +
				"setup: not root: run 'sudo make setup' once (it installs them), or: sudo apt-get install " + pkgs + "\n", ""},
		{"not root, nothing missing", "1000", true, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := filepath.Join(t.TempDir(), "apt-get.calls")
			dpkg := "exit 1"
			if tc.installed {
				dpkg = "exit 0"
			}
			bin := fakeBin(t, map[string]string{
				"id":      `echo ` + tc.uid,
				"dpkg":    dpkg,
				"apt-get": `echo "$*" >> ` + calls,
			})
			out, err := runMake(t, bin, "apt")
			if (err != nil) != tc.wantErr {
				t.Errorf("make apt: err %v, want failure %v\n%s", err, tc.wantErr, out)
			}
			if strings.HasSuffix(out, "Error 1\n") { // make's own line after the recipe's
				out = out[:strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1]
			}
			if out != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out, tc.want)
			}
			got, _ := os.ReadFile(calls)
			if string(got) != tc.apt {
				t.Errorf("apt-get calls:\n%s\nwant:\n%s", got, tc.apt)
			}
		})
	}
}

// make build says what it compiles before the compiler runs for minutes in silence.
func TestBuildSaysSoFirst(t *testing.T) {
	bin := fakeBin(t, map[string]string{"fakego": `echo "fakego $*"`})
	out, err := runMake(t, bin, "build", "GO=fakego", "BIN=build/kairos-maketest")
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	want := "build: go build -o build/kairos-maketest ./cmd/kairos (the first build compiles every dependency: minutes on a small machine, seconds after)\n" +
		"fakego build -buildvcs=auto -o build/kairos-maketest ./cmd/kairos\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
