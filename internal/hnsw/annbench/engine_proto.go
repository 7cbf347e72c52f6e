package annbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/internal/childrss"
	"github.com/kairos-rag/kairos/internal/hnsw/bench"
)

// The engines that speak the child protocol (engine_child.go): Kairos's own, through `kairos
// bench ann-engine`, and the anchor scripts, through python and node.

// kairosRunner runs a Kairos index as `kairos bench ann-engine` children.
type kairosRunner struct{}

func (kairosRunner) argv(e *Entry, env *runEnv) ([]string, []string) {
	return append(append([]string{}, env.o.Kairos...), "--engine", e.Name), env.o.KairosEnv
}

func (r kairosRunner) version(ctx context.Context, e *Entry, env *runEnv) (string, error) {
	argv, extra := r.argv(e, env)
	return protoVersion(ctx, argv, extra, "")
}

func (r kairosRunner) build(ctx context.Context, e *Entry, env *runEnv) (built, error) {
	argv, extra := r.argv(e, env)
	return protoBuild(ctx, argv, extra, e, env)
}

func (r kairosRunner) serve(ctx context.Context, e *Entry, s Setting, env *runEnv) (served, error) {
	argv, extra := r.argv(e, env)
	if s.Name != "" {
		argv = append(argv, "--setting", s.Name)
	}
	return protoServe(ctx, argv, extra, s, env)
}

// scriptRunner runs an anchor script: anchor_bench.py with python ("python") or
// anchor_lancedb.js with node ("node").
type scriptRunner struct{ kind string }

// Script file names, written under the work directory from the embedded copies.
const (
	pyScript   = "anchor_bench.py"
	nodeScript = "anchor_lancedb.js"
)

func writeScripts(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, pyScript), bench.AnchorPy, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, nodeScript), bench.AnchorLanceDB, 0o644)
}

func (r scriptRunner) argv(e *Entry, env *runEnv) (argv, extra []string) {
	if r.kind == "node" {
		return []string{env.o.Node, filepath.Join(env.scripts, nodeScript)}, []string{"NODE_PATH=" + env.o.LanceDBModules}
	}
	// OpenMP's default wait spins: on this shared 2-core machine, a FAISS build of 3,000
	// vectors took 23 s spinning against 1.4 s waiting passively at load 20.
	return []string{env.o.Python, filepath.Join(env.scripts, pyScript), "--engine", e.Name}, []string{"OMP_WAIT_POLICY=PASSIVE"}
}

func (r scriptRunner) version(ctx context.Context, e *Entry, env *runEnv) (string, error) {
	argv, extra := r.argv(e, env)
	if _, err := exec.LookPath(argv[0]); err != nil {
		return "", fmt.Errorf("no %s (%v): run `%s`", argv[0], err, e.Install)
	}
	v, err := protoVersion(ctx, argv, extra, e.Install)
	if err == nil && r.kind == "node" && v != bench.LanceDBVersion {
		return "", fmt.Errorf("%s has @lancedb/lancedb %s, not %s: run `%s`", env.o.LanceDBModules, v, bench.LanceDBVersion, e.Install)
	}
	return v, err
}

func (r scriptRunner) build(ctx context.Context, e *Entry, env *runEnv) (built, error) {
	argv, extra := r.argv(e, env)
	return protoBuild(ctx, argv, extra, e, env)
}

func (r scriptRunner) serve(ctx context.Context, e *Entry, s Setting, env *runEnv) (served, error) {
	argv, extra := r.argv(e, env)
	return protoServe(ctx, argv, extra, s, env)
}

// protoVersion runs the version phase; install is the make target named when the child says
// its library is absent (exit status 3).
func protoVersion(ctx context.Context, argv, extra []string, install string) (string, error) {
	var out, stderr bytes.Buffer
	cmd := command(ctx, append(argv, "version"), extra, &out, &stderr)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 && install != "" {
			return "", fmt.Errorf("%s: run `%s`", msg, install)
		}
		if install != "" {
			return "", fmt.Errorf("%s: %v %s (`%s` installs it)", strings.Join(argv, " "), err, msg, install)
		}
		return "", fmt.Errorf("%s: %v %s", strings.Join(argv, " "), err, msg)
	}
	var v struct{ Version string }
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &v); err != nil {
		return "", fmt.Errorf("%s version: output %q: %w", argv[0], out.String(), err)
	}
	return v.Version, nil
}

func command(ctx context.Context, argv, extra []string, stdout, stderr io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), extra...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd
}

// protoBuild runs the build phase on every core; its peak RSS is the child's.
func protoBuild(ctx context.Context, argv, extra []string, e *Entry, env *runEnv) (built, error) {
	params, _ := json.Marshal(e.Params)
	var out bytes.Buffer
	cmd := command(ctx, append(argv, "build", "--data", env.data, "--index", env.index,
		"--threads", strconv.Itoa(env.threads), "--params", string(params)), extra, &out, env.log)
	peak, err := childrss.Run(cmd)
	b := built{peakRSS: peak}
	if err != nil {
		return b, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	var line struct {
		Type   string  `json:"type"`
		BuildS float64 `json:"build_s"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &line); err != nil || line.Type != "build" {
		return b, fmt.Errorf("build output %q: want one {\"type\":\"build\"} line (%v)", out.String(), err)
	}
	b.seconds = line.BuildS
	return b, nil
}

// protoServe runs the serve phase confined to env.cpu and reads its lines.
func protoServe(ctx context.Context, argv, extra []string, s Setting, env *runEnv) (served, error) {
	sweep, _ := json.Marshal(s.Sweep)
	pr, pw := io.Pipe()
	cmd := command(ctx, append(argv, "serve", "--data", env.data, "--index", env.index,
		"--sweep", string(sweep), "--repeat", strconv.Itoa(env.o.Repeat)), extra, pw, env.log)
	var sv served
	start := childrss.Start
	if env.cpu >= 0 {
		start = func(c *exec.Cmd) error { return childrss.StartOnCPU(c, env.cpu) }
	}
	if err := start(cmd); err != nil {
		return sv, err
	}
	sv.cpus = childrss.CPUs(cmd.Process.Pid)
	readErr := make(chan error, 1)
	go func() {
		err := readServe(pr, &sv)
		io.Copy(io.Discard, pr) // let the child finish writing whatever follows an error
		readErr <- err
	}()
	peak, err := childrss.Wait(cmd)
	pw.Close()
	rerr := <-readErr
	sv.peakRSS = peak
	if err != nil {
		return sv, fmt.Errorf("%s: %w", strings.Join(cmd.Args[:min(len(cmd.Args), 4)], " "), err)
	}
	return sv, rerr
}

// readServe reads a serve phase's lines: points, then the serve summary.
func readServe(r io.Reader, sv *served) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 256<<20) // a point's ids: about 70 bytes a query
	done := false
	for sc.Scan() {
		var head struct {
			Type       string  `json:"type"`
			LoadS      float64 `json:"load_s"`
			RSS        int64   `json:"rss_bytes"`
			IndexBytes int64   `json:"index_bytes"`
		}
		line := sc.Bytes()
		if err := json.Unmarshal(line, &head); err != nil {
			return fmt.Errorf("serve output line %q: %w", truncate(line), err)
		}
		switch head.Type {
		case "point":
			var p rawPoint
			if err := json.Unmarshal(line, &p); err != nil {
				return fmt.Errorf("serve output point %q: %w", truncate(line), err)
			}
			sv.points = append(sv.points, p)
		case "serve":
			sv.loadS, sv.rss, sv.indexBytes, done = head.LoadS, head.RSS, head.IndexBytes, true
		default:
			return fmt.Errorf("serve output line %q: unknown type", truncate(line))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !done {
		return errors.New("serve output ended without its summary line")
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
