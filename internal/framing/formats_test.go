package framing_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// framedFormat is one framing.Format literal found in the tree.
type framedFormat struct {
	where         string // file:line
	varName       string // the variable it is assigned to
	name, magic   string
	version       uint64
	versionSymbol bool // the version is not a literal (then it is not compared)
}

// legacy reports whether f is a read-only format kept for old files: it may share its magic
// with another format, never its (magic, version) pair.
func (f framedFormat) legacy() bool { return strings.HasPrefix(f.varName, "legacy") }

// TestMagicsAreDistinct lists every framed format of the module (every framing.Format
// literal outside tests) and fails when two formats that are written share a magic, or any
// two share magic and version: a file opened as the wrong kind must be refused as "not a
// ...", not as an old version of it (a postings segment opened as a passage store once read
// "passage store version 1, rebuild").
func TestMagicsAreDistinct(t *testing.T) {
	root := moduleRoot(t)
	var found []framedFormat
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		found = append(found, formatsIn(t, fset, f, filepath.Base(filepath.Dir(path)) == "framing")...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The formats known when this test was written: a format that disappears from the
	// search (renamed, built another way) must not pass unnoticed.
	for _, want := range []string{"passage store", "tombstone file", "document table", "postings segment", "postings deleted term counts"} {
		ok := false
		for _, f := range found {
			ok = ok || f.name == want
		}
		if !ok {
			t.Errorf("no framing.Format named %q found under %s", want, root)
		}
	}
	for i, a := range found {
		t.Logf("%-4q v%d  %-30s %s (%s)", a.magic, a.version, a.name, a.varName, a.where)
		if len(a.magic) != 4 {
			t.Errorf("%s: magic %q of %s is not 4 bytes", a.where, a.magic, a.name)
		}
		for _, b := range found[:i] {
			if a.magic != b.magic {
				continue
			}
			switch {
			case !a.legacy() && !b.legacy():
				t.Errorf("magic %q used by %s (%s) and %s (%s)", a.magic, b.name, b.where, a.name, a.where)
			case !a.versionSymbol && !b.versionSymbol && a.version == b.version:
				t.Errorf("magic %q version %d used by %s (%s) and %s (%s)", a.magic, a.version, b.name, b.where, a.name, a.where)
			}
		}
	}
}

// formatsIn returns the framing.Format literals of f (Format literals, in package framing).
func formatsIn(t *testing.T, fset *token.FileSet, f *ast.File, local bool) []framedFormat {
	var out []framedFormat
	varName := ""
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) > 0 {
			varName = vs.Names[0].Name
		}
		cl, ok := n.(*ast.CompositeLit)
		if !ok || !isFormatType(cl.Type, local) {
			return true
		}
		ff := framedFormat{where: fset.Position(cl.Pos()).String(), varName: varName, versionSymbol: true}
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				t.Errorf("%s: framing.Format without field names", ff.where)
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			lit, isLit := kv.Value.(*ast.BasicLit)
			switch {
			case key == nil:
			case key.Name == "Magic" || key.Name == "Name":
				if !isLit || lit.Kind != token.STRING {
					t.Errorf("%s: %s is not a string literal", ff.where, key.Name)
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				if key.Name == "Magic" {
					ff.magic = s
				} else {
					ff.name = s
				}
			case key.Name == "Version" && isLit:
				ff.version, _ = strconv.ParseUint(lit.Value, 0, 32)
				ff.versionSymbol = false
			}
		}
		out = append(out, ff)
		return true
	})
	return out
}

func isFormatType(e ast.Expr, local bool) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "framing" && x.Sel.Name == "Format"
	case *ast.Ident:
		return local && x.Name == "Format"
	}
	return false
}

// moduleRoot is the directory of go.mod above the test's.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = up
	}
}
