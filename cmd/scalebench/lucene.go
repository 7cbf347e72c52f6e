package scalebench

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/search"
)

// luceneSource is the Lucene anchor (see its header). It is compiled with javac at run time into
// a cache directory keyed by its hash and the jars, so the binary works from any directory and
// ships no class file.
//
//go:embed ScaleLucene.java
var luceneSource []byte

// Lucene anchor settings the issue fixes: Lucene's usual indexing buffer, and enough warm-up
// queries for the JVM's JIT to compile the query path (a hundred leave it interpreted).
const (
	luceneRAMBufferMB = 256
	luceneMinWarmup   = 1000
)

// luceneJars are the jars the anchor needs, found in a directory such as /usr/share/java
// (Debian's liblucene8-java names them with a version: lucene-core-8.7.0.jar in 8.8.1-4).
var luceneJars = []string{"lucene-core", "lucene-analyzers-common"}

// lucene is a ready-to-run anchor: the java to start and its class path.
type lucene struct {
	java, classpath string
}

// prepareLucene finds java, javac and the jars, and compiles the anchor unless its cache holds
// it. The error says what is missing and how to install it.
func prepareLucene(ctx context.Context, java, jarDir, cacheDir string) (*lucene, error) {
	const install = "install Debian's liblucene8-java and default-jdk-headless, or pass --java and --lucene-jars"
	javaPath, err := exec.LookPath(java)
	if err != nil {
		return nil, fmt.Errorf("no java (%v): %s", err, install)
	}
	real, err := filepath.EvalSymlinks(javaPath)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", javaPath, err)
	}
	javac := filepath.Join(filepath.Dir(real), "javac") // the JDK's own, so the versions match
	if _, err := os.Stat(javac); err != nil {
		return nil, fmt.Errorf("%s has no javac beside it (a JRE, not a JDK): %s", real, install)
	}
	var jars []string
	for _, name := range luceneJars {
		m, _ := filepath.Glob(filepath.Join(jarDir, name+"-[0-9]*.jar"))
		if len(m) == 0 {
			m, _ = filepath.Glob(filepath.Join(jarDir, name+".jar"))
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no %s jar in %s: %s", name, jarDir, install)
		}
		jars = append(jars, m[len(m)-1]) // Glob sorts: the last is the newest of a plain version scheme
	}
	h := sha256.New()
	h.Write(luceneSource)
	fmt.Fprintf(h, "\x00%s\x00%s", real, strings.Join(jars, "\x00"))
	classes := filepath.Join(cacheDir, "lucene-anchor-"+hex.EncodeToString(h.Sum(nil))[:16])
	cp := strings.Join(jars, string(os.PathListSeparator))
	if _, err := os.Stat(filepath.Join(classes, "ScaleLucene.class")); err != nil {
		if err := compileLucene(ctx, javac, cp, classes); err != nil {
			return nil, err
		}
	}
	return &lucene{java: javaPath, classpath: classes + string(os.PathListSeparator) + cp}, nil
}

// compileLucene compiles the anchor into a temporary directory beside classes and renames it
// into place, so that a crash or a concurrent run never leaves a half-written cache.
func compileLucene(ctx context.Context, javac, cp, classes string) error {
	if err := os.MkdirAll(filepath.Dir(classes), 0o755); err != nil {
		return fmt.Errorf("lucene anchor cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(classes), ".lucene-anchor-*")
	if err != nil {
		return fmt.Errorf("lucene anchor cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "ScaleLucene.java") // javac wants the public class's name
	if err := os.WriteFile(src, luceneSource, 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, javac, "-nowarn", "-cp", cp, "-d", tmp, src).CombinedOutput()
	if err != nil {
		return fmt.Errorf("compiling the lucene anchor (%s): %w\n%s", javac, err, out)
	}
	if err := os.Rename(tmp, classes); err != nil && !dirHas(classes, "ScaleLucene.class") {
		return fmt.Errorf("lucene anchor cache: %w", err)
	}
	return nil
}

func dirHas(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// run indexes passages (a JSON lines file) with Lucene under dir on threads indexing threads
// (as many as Kairos builds with) and times the queries on the unmerged and on the merged
// index, with Kairos's BM25 k1 and b.
func (l *lucene) run(ctx context.Context, dir, passages, queriesFile string, k, warmup, threads int, progress io.Writer) (*AnchorResult, error) {
	index := filepath.Join(dir, "lucene.index")
	defer os.RemoveAll(index)
	return runAnchor(ctx, "lucene", index, progress, l.java, "-cp", l.classpath, "ScaleLucene",
		"--passages", passages, "--queries", queriesFile, "--index", index,
		"--k", strconv.Itoa(k), "--warmup", strconv.Itoa(max(warmup, luceneMinWarmup)),
		"--k1", strconv.FormatFloat(search.BM25K1, 'g', -1, 64), "--b", strconv.FormatFloat(search.BM25B, 'g', -1, 64),
		"--ram-mb", strconv.Itoa(luceneRAMBufferMB), "--threads", strconv.Itoa(threads))
}
