// Command testprogress turns `go test -json` into what a person watching `make test` wants:
// a line when each package starts and when it ends (with its time), the full output of every
// failing test, and a closing "N passed, N failed, N skipped" count of tests followed by the
// skipped tests, each with its package and the reason it gave (a skipped test is a check
// that did not run: the summary must not hide which), then the longest tests (what to look at
// when the suite nears its time limit). It exits 1 when anything failed, so
// `set -o pipefail` keeps the suite's verdict.
//
//	go test -json ./... | go run ./internal/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type tally struct{ passed, failed, skipped int }

// longestShown is how many of the longest tests the summary lists, of those that took
// longestFrom seconds or more.
const (
	longestShown = 10
	longestFrom  = 1.0
)

// testTime is a top-level test's time, as its pass or fail event gives it.
type testTime struct {
	name    string // "pkg TestX"
	seconds float64
}

func main() {
	_, failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// run reads events from r and reports to w, ending with the counts and the skipped tests.
// failed is true when a test or a package (a build error, a panic outside a test) failed.
func run(r io.Reader, w io.Writer) (t tally, failed bool, err error) {
	output := map[string][]string{}  // "pkg test" -> its output, kept until it passes
	started := map[string]struct{}{} // packages running
	var skips []string               // "pkg TestX: reason"
	var times []testTime             // top-level tests that passed or failed
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintln(w, string(line)) // build errors come as plain text
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "start":
			started[e.Package] = struct{}{}
			fmt.Fprintf(w, "run   %s\n", e.Package)
		case "build-output": // Go 1.24+: compiler errors as events
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			output[key] = append(output[key], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				failed = failed || e.Action == "fail"
				word := map[string]string{"pass": "ok   ", "fail": "FAIL ", "skip": "none "}[e.Action]
				if e.Action == "fail" {
					for _, o := range output[key] { // package-level output: build errors, panics
						fmt.Fprint(w, o)
					}
				}
				fmt.Fprintf(w, "%s %s\t%.1fs\n", word, e.Package, e.Elapsed)
				delete(output, key)
				delete(started, e.Package)
				continue
			}
			if e.Action != "skip" && !strings.Contains(e.Test, "/") && e.Elapsed >= longestFrom {
				times = append(times, testTime{e.Package + " " + e.Test, e.Elapsed})
			}
			switch e.Action {
			case "pass":
				t.passed++
			case "fail":
				t.failed++
				failed = true
				fmt.Fprintf(w, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(output[key], ""))
			case "skip":
				t.skipped++
				skips = append(skips, e.Package+" "+e.Test+skipReason(output[key]))
			}
			delete(output, key)
		}
	}
	if err := sc.Err(); err != nil {
		return t, true, err
	}
	// A package that started and never ended: the test binary was killed (a timeout) and its
	// fail event lost. Say which, and fail.
	var open []string
	for pkg := range started {
		open = append(open, pkg)
	}
	sort.Strings(open)
	for _, pkg := range open {
		fmt.Fprintf(w, "FAIL  %s\tdid not finish\n", pkg)
		failed = true
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped)
	if len(skips) > 0 {
		sort.Strings(skips)
		fmt.Fprintln(w, "skipped (checks that did not run):")
		for _, s := range skips {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(times) > 0 {
		sort.SliceStable(times, func(i, j int) bool { return times[i].seconds > times[j].seconds })
		fmt.Fprintln(w, "longest tests:")
		for _, tt := range times[:min(len(times), longestShown)] {
			fmt.Fprintf(w, "  %6.1fs %s\n", tt.seconds, tt.name)
		}
	}
	return t, failed, nil
}

// skipReason returns ": reason" from a skipped test's output (the t.Skip message, the lines
// between "=== RUN" and "--- SKIP"), or "" when it gave none.
func skipReason(out []string) string {
	var msg []string
	for _, o := range out {
		l := strings.TrimSpace(o)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		msg = append(msg, l)
	}
	if len(msg) == 0 {
		return ""
	}
	return ": " + strings.Join(msg, " ")
}
