package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasDoc: every package has a package comment ("Package x ..." or, for a
// main package, "Command x ..."). External test packages (x_test) are not packages of their own.
func TestEveryPackageHasDoc(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "build" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		var name string
		documented := false
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if strings.HasSuffix(af.Name.Name, "_test") {
				continue
			}
			name = af.Name.Name
			if af.Doc == nil {
				continue
			}
			doc := af.Doc.Text()
			if strings.HasPrefix(doc, "Package "+name+" ") || name == "main" && strings.HasPrefix(doc, "Command ") {
				documented = true
			}
		}
		if name == "" {
			return nil // no package here
		}
		checked++
		if !documented {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: package %s has no package comment (add a doc.go)", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages under %s", checked, root)
	}
}
