package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDocsLinksResolve is the check the documentation is held to: every relative link and
// anchor of README.md, CHANGELOG.md and docs/*.md resolves in this checkout.
func TestDocsLinksResolve(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	files, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	// A glob that found no pages would pass having checked nothing.
	if len(files) < 10 {
		t.Fatalf("found only %v under %s", files, root)
	}
	broken, err := CheckLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		links += len(Links(b))
	}
	if links < 50 {
		t.Errorf("read only %d links in %d files: the parser is missing them", links, len(files))
	}
}

// TestReadmeIsShort holds the README to its size: what Kairos is, the two commands, a tour,
// the commands and links. The rest belongs in docs/.
func TestReadmeIsShort(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines, at most 200: move the detail to a page of docs/", n)
	}
}

func TestCheckLinks(t *testing.T) {
	// One small repository: two pages and a file, linked in every way a page may be.
	files := map[string]string{
		"go.mod":       "module example\n",
		"main.go":      "package main\n",
		"docs/img.png": "png",
		"docs/guide.md": "# Guide\n\n## Set up and run\n\n## Set up and run\n\n" +
			"## `kairos serve` flags\n\n<a id=\"custom\"></a>\n",
	}
	tests := []struct {
		name string
		page string   // README.md's text
		want []string // the broken targets, in order
	}{
		{"file", "[g](docs/guide.md) [m](main.go) [d](docs/) [i](docs/img.png)", nil},
		{"missing file", "[x](docs/missing.md)", []string{"docs/missing.md"}},
		{"anchor into a page", "[a](docs/guide.md#set-up-and-run) [b](docs/guide.md#set-up-and-run-1)", nil},
		{"missing anchor", "[a](docs/guide.md#set-up-and-run-2)", []string{"docs/guide.md#set-up-and-run-2"}},
		{"code in a heading", "[a](docs/guide.md#kairos-serve-flags)", nil},
		{"explicit anchor", "[a](docs/guide.md#custom)", nil},
		{"own anchor", "# Top\n\n[a](#top)", nil},
		{"missing own anchor", "# Top\n\n[a](#bottom)", []string{"#bottom"}},
		{"anchor of a file that is not a page", "[a](main.go#L1)", nil},
		{"outside the repository", "[s](../shared/README.md)", []string{"../shared/README.md"}},
		{"absolute path", "[s](/etc/passwd)", []string{"/etc/passwd"}},
		{"absolute URLs", "[h](https://example.com/x.md) [m](mailto:a@b.c) <https://x.y/>", nil},
		{"image", "![shot](docs/nothing.png)", []string{"docs/nothing.png"}},
		{"reference definition", "[r]: docs/gone.md", []string{"docs/gone.md"}},
		{"html", `<img src="docs/img.png"> <a href="docs/none.md">x</a>`, []string{"docs/none.md"}},
		{"title", `[t](docs/guide.md "Guide") [u](docs/no.md "No")`, []string{"docs/no.md"}},
		{"escaped", "[e](docs/guide.md#set%2Dup-and-run)", nil},
		{"code span is not a link", "`[x](docs/missing.md)` and ``[y](nope.md)``", nil},
		{"code block is not a link", "```sh\n[x](docs/missing.md)\n```\n[y](docs/missing2.md)", []string{"docs/missing2.md"}},
		{"tilde fence", "~~~\n[x](docs/missing.md)\n~~~", nil},
		{"two on a line", "[a](docs/a.md) and [b](docs/b.md)", []string{"docs/a.md", "docs/b.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range files {
				write(t, filepath.Join(root, name), text)
			}
			write(t, filepath.Join(root, "README.md"), tc.page+"\n")
			broken, err := CheckLinks(root, []string{"README.md"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range broken {
				got = append(got, b.Target)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("broken %q, want %q (%v)", got, tc.want, broken)
			}
		})
	}
}

func TestCheckLinksFromASubdirectory(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "README.md"), "# Kairos\n")
	write(t, filepath.Join(root, "server/openapi.json"), "{}")
	write(t, filepath.Join(root, "docs/api.md"), "[r](../README.md#kairos) [o](../server/openapi.json)\n"+
		"[bad](../README.md#nothing) [gone](../server/gone.json) [same dir](api.md)\n")
	broken, err := CheckLinks(root, []string{"docs/api.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Broken{
		{File: "docs/api.md", Line: 2, Target: "../README.md#nothing", Reason: "no heading with anchor #nothing"},
		{File: "docs/api.md", Line: 2, Target: "../server/gone.json", Reason: "no such file or directory"},
	}
	if !reflect.DeepEqual(broken, want) {
		t.Errorf("got %v, want %v", broken, want)
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Set up and run", "set-up-and-run"},
		{"`kairos serve` flags", "kairos-serve-flags"},
		{"What's new?", "whats-new"},
		{"CURRENT & CHECKPOINT", "current--checkpoint"},
		{"GPU (CUDA)", "gpu-cuda"},
		{"search_filters", "search_filters"},
		{"Index format, version 4", "index-format-version-4"},
		{"[Linked](other.md) heading", "linked-heading"},
		{"Café au lait", "café-au-lait"},
		{"1. Numbered", "1-numbered"},
		{"WikiChat 2.0 / 2.1", "wikichat-20--21"},
	}
	for _, tc := range tests {
		if got := Slug(tc.heading); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	md := "# Title #\n\n## Intro\n\n```\n# not a heading\n```\n\n## Intro\n\n#hashtag\n\n### Deep\n"
	got := Anchors([]byte(md))
	want := map[string]bool{"title": true, "intro": true, "intro-1": true, "deep": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Anchors = %v, want %v", got, want)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
