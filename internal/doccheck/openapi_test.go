package doccheck

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated reference of docs/http-api.md from server/openapi.json")

// TestHTTPAPIReferenceIsOpenAPIs: the endpoint and field tables of docs/http-api.md are the
// ones server/openapi.json generates, so the page cannot drift from the route contract. With
// -update it rewrites them.
func TestHTTPAPIReferenceIsOpenAPIs(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	specJSON, err := os.ReadFile(filepath.Join(root, "server", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := HTTPReference(specJSON)
	if err != nil {
		t.Fatal(err)
	}
	pagePath := filepath.Join(root, "docs", "http-api.md")
	page, err := os.ReadFile(pagePath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Splice(string(page), gen)
	if err != nil {
		t.Fatalf("%s: %v", pagePath, err)
	}
	if *update {
		if err := os.WriteFile(pagePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(page) != want {
		t.Errorf("%s: the reference differs from server/openapi.json's; run go test ./internal/doccheck -run OpenAPI -update\n%s",
			pagePath, firstDifference(string(page), want))
	}
}

func TestHTTPReference(t *testing.T) {
	spec := `{
  "paths": {
    "/v1/search": {"post": {"summary": "Search | many", "security": [{"bearer": []}]}},
    "/healthz": {"get": {"summary": "Liveness"}}
  },
  "components": {"schemas": {
    "Query": {"required": ["text"], "properties": {
      "text": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the\nquery"},
      "k": {"type": "integer", "minimum": 1, "maximum": 300, "default": 10},
      "mode": {"type": "string", "enum": ["bm25", "dense"]},
      "alpha": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": true},
      "rerank": {"$ref": "#/components/schemas/StringOrList"},
      "filters": {"$ref": "#/components/schemas/Filters"},
      "explain": {"$ref": "#/components/schemas/Explain"},
      "ids": {"type": "array", "maxItems": 100, "items": {"type": "string"}}
    }},
    "Filters": {"properties": {"date_from": {"type": "string"}}},
    "Hit": {"properties": {"rank": {"type": "integer"}}},
    "ChatRequest": {"properties": {"message": {"type": "string"}}},
    "WikiChatRequest": {"properties": {"query": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}},
    "WikiChatFilter": {"properties": {"field_name": {"type": "string"}}},
    "WikiChatV1Request": {"properties": {"evi_num": {"type": "integer", "minimum": 1}}}
  }}
}`
	got, err := HTTPReference([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| GET | `/healthz` | Liveness | no |\n| POST | `/v1/search` | Search \\| many | yes |\n",
		"| `text` | string, 1 to 512 characters, required | the query |\n| `k` | integer, 1 to 300, default `10` |  |\n",
		"| `mode` | `bm25` \\| `dense` |  |",
		"| `alpha` | number, above 0, at most 1 |  |",
		"| `rerank` | string or list of strings |  |",
		"| `filters` | [Filters](#filters) |  |",
		"| `explain` | object (`Explain` in openapi.json) |  |",
		"| `ids` | list of string, at most 100 |  |",
		"| `query` | string or list of string |  |",
		"| `evi_num` | integer, at least 1 |  |",
		"\n### WikiChatV1Request\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("reference lacks %q:\n%s", want, got)
		}
	}
	if _, err := HTTPReference([]byte(`{"paths": {"/x": {"get": {}}}, "components": {"schemas": {}}}`)); err == nil {
		t.Error("a spec without the reference's schemas was rendered")
	}
}

func TestSplice(t *testing.T) {
	page := "# API\n\nprose\n\n" + BeginGenerated + "\n\nold\n" + EndGenerated + "\n\nmore prose\n"
	got, err := Splice(page, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# API\n\nprose\n\n" + BeginGenerated + "\n\nnew\n\n" + EndGenerated + "\n\nmore prose\n"
	if got != want {
		t.Errorf("Splice = %q, want %q", got, want)
	}
	if _, err := Splice("# API\n", "x"); err == nil {
		t.Error("a page without the markers was spliced")
	}
}

// firstDifference shows where two texts part, a few lines of each.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  page:      " + gl + "\n  generated: " + wl
		}
	}
	return ""
}
