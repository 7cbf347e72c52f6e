package chat

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

//go:embed prompts/*.tmpl
var defaultPrompts embed.FS

// Prompt names: one template file per stage, "<name>.tmpl".
const (
	PromptQuery       = "wikichat_query"
	PromptSummarize   = "wikichat_summarize"
	PromptGenerate    = "wikichat_generate"
	PromptClaims      = "wikichat_claims"
	PromptVerify      = "wikichat_verify"
	PromptDraft       = "wikichat_draft"
	PromptRefine      = "wikichat_refine"
	PromptCSTopic     = "commonsense_topic"
	PromptCSDirective = "commonsense_directive"
	PromptCSQuery     = "commonsense_query"
	PromptCSResponse  = "commonsense_response"
	PromptMPCClarify  = "mpc_clarify"
	PromptMPCMemory   = "mpc_memory"
	PromptMPCRespond  = "mpc_respond"
	PromptMPCSummary  = "mpc_summarize"
	PromptMSDPKnow    = "msdp_knowledge"
	PromptMSDPResp    = "msdp_response"
	PromptSICL        = "sicl"
)

// allPrompts lists every template Templates must provide.
var allPrompts = [...]string{PromptQuery, PromptSummarize, PromptGenerate, PromptClaims, PromptVerify,
	PromptDraft, PromptRefine, PromptCSTopic, PromptCSDirective, PromptCSQuery, PromptCSResponse, PromptMPCClarify,
	PromptMPCMemory, PromptMPCRespond, PromptMPCSummary, PromptMSDPKnow, PromptMSDPResp, PromptSICL}

// A template file is split into chat messages at its role marker lines: "=== system ===",
// "=== user ===", "=== assistant ===". The split is made on the template's own source, before
// any data is substituted, and each section is rendered on its own: no text from a user, a
// passage, a memory or a bank example can add a message or change a role, whatever it contains.
// A template action cannot span two sections (a {{range}} around a marker is a parse error).
// Few-shot examples are user/assistant pairs.
var roleMarker = regexp.MustCompile(`(?m)^=== (system|user|assistant) ===[ \t]*$`)

// section is one message of a template: its role and the template of its content.
type section struct {
	role string
	t    *template.Template
}

// Templates holds the parsed prompt templates.
type Templates struct {
	t map[string][]section
}

// LoadTemplates parses the embedded defaults, then replaces any of them by the file of the same
// name in overrideDir ("" for none). A file there that matches no prompt is an error, so that a
// typo in a name does not silently leave the default in place.
func LoadTemplates(overrideDir string) (*Templates, error) {
	ts := &Templates{t: map[string][]section{}}
	for _, name := range allPrompts {
		b, err := defaultPrompts.ReadFile("prompts/" + name + ".tmpl")
		if err != nil {
			return nil, fmt.Errorf("embedded prompt %s: %w", name, err)
		}
		if err := ts.parse(name, "embedded:"+name+".tmpl", string(b)); err != nil {
			return nil, err
		}
	}
	if overrideDir == "" {
		return ts, nil
	}
	entries, err := os.ReadDir(overrideDir)
	if err != nil {
		return nil, fmt.Errorf("reading prompt directory: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".tmpl") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".tmpl")
		if _, ok := ts.t[name]; !ok {
			return nil, fmt.Errorf("prompt directory %s: %s matches no prompt (known: %s)",
				overrideDir, e.Name(), strings.Join(allPrompts[:], ", "))
		}
		path := filepath.Join(overrideDir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading prompt: %w", err)
		}
		if err := ts.parse(name, path, string(b)); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

func (ts *Templates) parse(name, file, text string) error {
	locs := roleMarker.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return fmt.Errorf("prompt %s has no role marker line (=== system|user|assistant ===)", file)
	}
	if strings.TrimSpace(text[:locs[0][0]]) != "" {
		return fmt.Errorf("prompt %s: text before its first role marker (line 1)", file)
	}
	var secs []section
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		line := 1 + strings.Count(text[:loc[0]], "\n")
		t, err := template.New(fmt.Sprintf("%s:%d", file, line)).Funcs(templateFuncs).Option("missingkey=error").Parse(text[loc[1]:end])
		if err != nil {
			return fmt.Errorf("parsing prompt %s, section at line %d: %w", file, line, err)
		}
		secs = append(secs, section{role: text[loc[2]:loc[3]], t: t})
	}
	if secs[len(secs)-1].role != "user" {
		return fmt.Errorf("prompt %s must end with a user section", file)
	}
	ts.t[name] = secs
	return nil
}

// Render executes each section of the named template with data and returns the messages. A
// section that renders empty is left out (e.g. no history yet); the last message must be the
// user's.
func (ts *Templates) Render(name string, data any) ([]Message, error) {
	secs, ok := ts.t[name]
	if !ok {
		return nil, fmt.Errorf("no prompt named %q", name)
	}
	if pd, ok := data.(PromptData); ok {
		data = pd.sanitized()
	}
	var msgs []Message
	for _, sec := range secs {
		var b bytes.Buffer
		if err := sec.t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("rendering prompt %s: %w", name, err)
		}
		if content := strings.TrimSpace(b.String()); content != "" {
			msgs = append(msgs, Message{Role: sec.role, Content: content})
		}
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
		return nil, fmt.Errorf("rendering prompt %s: it must end with a non-empty user message", name)
	}
	return msgs, nil
}

// PromptNames returns the name of every prompt, i.e. the file names (without .tmpl) an
// override directory may hold.
func PromptNames() []string { return slices.Clone(allPrompts[:]) }

var _ fs.FS = defaultPrompts

var templateFuncs = template.FuncMap{
	"untrusted": untrusted,
	"inc":       func(i int) int { return i + 1 },
	"join":      strings.Join,
	"trim":      strings.TrimSpace,
}

// untrusted wraps retrieved or user-supplied text in delimiters the prompts tell the model to
// treat as data. The text is put on one line and anything inside that could close the block is
// defused, so a passage can neither break out of its block nor start a line that looks like a
// turn, a label or a role marker.
func untrusted(label, text string) string {
	text = strings.ReplaceAll(text, "<<<", "‹‹‹")
	text = strings.ReplaceAll(text, ">>>", "›››")
	text = roleMarker.ReplaceAllStringFunc(text, func(m string) string { return "(" + strings.Trim(m, "= ") + ")" })
	label = strings.NewReplacer("<", " ", ">", " ").Replace(oneLine(label))
	return "<<<UNTRUSTED " + label + "\n" + oneLine(text) + "\nEND UNTRUSTED>>>"
}
