package asmcheck

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	wideReg   = regexp.MustCompile(`\b[YZ]\d+\b`)
	xmmReg    = regexp.MustCompile(`\bX\d+\b`)
	mnemonic  = regexp.MustCompile(`^\s*([A-Z][A-Z0-9]*)\b`)
	textStart = regexp.MustCompile(`^TEXT\s`)
	define    = regexp.MustCompile(`^#define\s+([A-Z][A-Z0-9_]*)`)
)

// TestNoLegacySSEAfterWideRegisters: in each function of every *_amd64.s file, once an
// instruction has used a 256- or 512-bit register, no instruction without the VEX or EVEX
// encoding (a mnemonic not starting with V) may touch an X register before VZEROUPPER. On
// the build machine such an instruction with the upper halves in use cost about 115 ns, each
// time (a MOVQ into X14 after a VPBROADCASTQ into Y15: 115.5 ns a call against 2.9 with
// VMOVQ); the kernels are called thousands of times a query.
func TestNoLegacySSEAfterWideRegisters(t *testing.T) {
	const root = "../.." // the module's root, from this package's directory
	var files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_amd64.s") {
			return nil
		}
		files++
		checkFile(t, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no *_amd64.s file under %s", root)
	}
}

func checkFile(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	wide, line := false, 0
	macros := map[string]bool{} // checked where they are defined, not where they are used
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "//")
		text = strings.TrimSuffix(strings.TrimSpace(text), `\`) // macro bodies too
		if d := define.FindStringSubmatch(text); d != nil {
			macros[d[1]] = true
			wide = false
			continue
		}
		if textStart.MatchString(text) {
			wide = false
			continue
		}
		m := mnemonic.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		switch op := m[1]; {
		case macros[op]:
		case op == "VZEROUPPER" || op == "VZEROALL":
			wide = false
		case wideReg.MatchString(text):
			wide = true
		case wide && !strings.HasPrefix(op, "V") && !strings.HasPrefix(op, "K") && xmmReg.MatchString(text):
			t.Errorf("%s:%d: %s touches an X register while the wide registers are in use: use its V form", path, line, op)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
