package embed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotModelFolder is wrapped by the error of a --model that names no model folder: a path
// that does not exist, a file, or a folder without a model (a parent of model folders, say).
var ErrNotModelFolder = errors.New("not a model folder")

// modelFolderHelp ends the error: where model folders come from.
const modelFolderHelp = "a model folder holds config.json, tokenizer.json and model.onnx, or a static model's files; kairos models list shows the pulled ones, kairos models pull NAME downloads one"

// checkModelFolder refuses a dir that cannot be a model folder before its files are read one
// by one: a missing config read as empty made "/nonexistent/model" fail as "max sequence
// length 0 is unknown or too small". A folder of folders names the model folders below it.
func checkModelFolder(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w: no such folder; %s", dir, ErrNotModelFolder, modelFolderHelp)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s: %w: a file, not a folder; %s", dir, ErrNotModelFolder, modelFolderHelp)
	case hasModelFile(dir):
		return nil
	}
	if below := modelFoldersBelow(dir, 3, 4); len(below) > 0 {
		more := ""
		if len(below) > 3 {
			below, more = below[:3], ", ..."
		}
		return fmt.Errorf("%s: %w: no config.json or model file here; model folders below it: %s%s", dir, ErrNotModelFolder, strings.Join(below, ", "), more)
	}
	return fmt.Errorf("%s: %w: no config.json or model file; %s", dir, ErrNotModelFolder, modelFolderHelp)
}

// hasModelFile reports whether dir has the files that make a model folder: a config.json or
// modules.json (the configuration every encoder, cross-encoder and static model has), or an
// ONNX file (a folder that relies on kairos.json and the tokenizer).
func hasModelFile(dir string) bool {
	for _, name := range []string{"config.json", "modules.json", "kairos.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	for _, sub := range []string{dir, filepath.Join(dir, "onnx")} {
		if m, _ := filepath.Glob(filepath.Join(sub, "*.onnx")); len(m) > 0 {
			return true
		}
	}
	return false
}

// modelFoldersBelow lists up to max model folders under dir, depth at most depth, as paths
// joined to dir, in lexical order.
func modelFoldersBelow(dir string, depth, max int) []string {
	var found []string
	var walk func(d string, left int)
	walk = func(d string, left int) {
		ents, err := os.ReadDir(d)
		if err != nil || left == 0 {
			return
		}
		for _, e := range ents {
			if len(found) >= max {
				return
			}
			p := filepath.Join(d, e.Name())
			if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if hasModelFile(p) {
				found = append(found, p)
				continue
			}
			walk(p, left-1)
		}
	}
	walk(dir, depth)
	slices.Sort(found)
	return found
}
