package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func ptr(f float64) *float64 { return &f }

func TestParseStageFlag(t *testing.T) {
	for _, tt := range []struct {
		in, stage string
		want      StageLLM
		err       string
	}{
		{"draft:url=http://h:1/v1,model=big,temperature=0.2,max_tokens=300", "draft",
			StageLLM{URL: "http://h:1/v1", Model: "big", Temperature: ptr(0.2), MaxTokens: 300}, ""},
		{"wikichat_refine:top_p=0.9,api_key_env=K", "refine", StageLLM{TopP: ptr(0.9), APIKeyEnv: "K"}, ""}, // a prompt name
		{"draft", "", StageLLM{}, "want STAGE:FIELD=VALUE"},
		{"draft:", "", StageLLM{}, "want STAGE:FIELD=VALUE"},
		{"drafts:model=x", "", StageLLM{}, `unknown stage "drafts"`},
		{"retrieve:model=x", "", StageLLM{}, `unknown stage "retrieve"`}, // no LLM call
		{"draft:temprature=1", "", StageLLM{}, "draft: temprature: unknown field"},
		{"draft:temperature=3", "", StageLLM{}, "draft: temperature: 3 outside [0, 2]"},
		{"draft:temperature=warm", "", StageLLM{}, `draft: temperature: "warm" is not a number`},
		{"draft:max_tokens=-1", "", StageLLM{}, "max_tokens: -1 is negative"},
		{"draft:url=javascript:alert(1)", "", StageLLM{}, "not an http(s) URL"},
		{"draft:model=a,model=b", "", StageLLM{}, "model is given twice"},
		{"draft:model", "", StageLLM{}, `"model": want FIELD=VALUE`},
	} {
		stage, got, err := ParseStageFlag(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(tt.want)
		if err != nil || stage != tt.stage || string(gb) != string(wb) {
			t.Errorf("%q: %s %s %v, want %s %s", tt.in, stage, gb, err, tt.stage, wb)
		}
	}
}

// A config file's errors name the file and the field.
func TestReadLLMConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, body, err string }{
		{"ok", `{"stages": {"draft": {"model": "big", "max_tokens": 300}, "wikichat_verify": {"temperature": 0}}}`, ""},
		{"unknown field", `{"stages": {"draft": {"temprature": 0.2}}}`, `stages.draft: unknown field "temprature"`},
		{"unknown top field", `{"stage": {}}`, `unknown field "stage": want {"stages"`},
		{"type", `{"stages": {"draft": {"temperature": "hot"}}}`, "stages.draft.temperature: want a number, got JSON string"},
		{"range", `{"stages": {"draft": {"temperature": 2.5}}}`, "stages.draft.temperature: 2.5 outside [0, 2]"},
		{"stage", `{"stages": {"drfat": {"model": "x"}}}`, `stages.drfat: unknown stage "drfat"`},
		{"twice", `{"stages": {"draft": {"model": "x"}, "wikichat_draft": {"model": "y"}}}`, "stage draft is given twice"},
		{"syntax", "{\"stages\": {\n\"draft\": {\"model\": \"x\",}}}", "line 2:"},
		{"empty", ``, "empty file"},
		{"trailing", `{"stages": {}} {}`, "unexpected data after the JSON object"},
	} {
		path := filepath.Join(dir, tt.name+".json")
		os.WriteFile(path, []byte(tt.body), 0o644)
		st, err := ReadLLMConfig(path)
		switch {
		case tt.err == "" && (err != nil || st["draft"].Model != "big" || st["verify"].Temperature == nil):
			t.Errorf("%s: %+v %v", tt.name, st, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: err %v, want %q and the file", tt.name, err, tt.err)
		}
	}
}

// --llm-stage lays its fields over the file's, field by field.
func TestLLMStageOptionsResolve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.json")
	os.WriteFile(path, []byte(`{"stages": {"draft": {"model": "file-model", "max_tokens": 100}, "refine": {"model": "r"}}}`), 0o644)
	o := LLMStageOptions{ConfigFile: path}
	for _, v := range []string{"draft:temperature=0.3", "draft:model=flag-model"} {
		st, s, err := ParseStageFlag(v)
		if err != nil {
			t.Fatal(err)
		}
		if o.Stages == nil {
			o.Stages = map[string]StageLLM{}
		}
		o.Stages[st] = o.Stages[st].merge(s)
	}
	got, err := o.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if d := got["draft"]; d.Model != "flag-model" || d.MaxTokens != 100 || d.Temperature == nil || *d.Temperature != 0.3 || got["refine"].Model != "r" {
		t.Errorf("resolved %+v", got)
	}
}

// recordingLLM answers every call and records what it was asked: model, sampling, key.
type recordingLLM struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]any
}

func newRecordingLLM(t *testing.T) *recordingLLM {
	l := &recordingLLM{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		body["authorization"] = r.Header.Get("Authorization")
		l.mu.Lock()
		l.calls = append(l.calls, body)
		l.mu.Unlock()
		w.Write([]byte(okBody("ok", 1, 1)))
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *recordingLLM) all() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.calls...)
}

// The router sends a configured stage to its LLM with its settings, and every other stage to
// the default client; a stage on another origin never receives the default key.
func TestRouter(t *testing.T) {
	main, other := newRecordingLLM(t), newRecordingLLM(t)
	t.Setenv("KAIROS_TEST_MAIN_KEY", "main-secret")
	t.Setenv("KAIROS_TEST_OTHER_KEY", "other-secret")
	base := ClientOptions{BaseURL: main.URL, Model: "m", APIKeyEnv: "KAIROS_TEST_MAIN_KEY", MaxRetries: -1}
	r, err := NewRouter(base, map[string]StageLLM{
		StageDraft:  {URL: other.URL, Model: "big", Temperature: ptr(0.2), MaxTokens: 300},
		StageVerify: {MaxTokens: 50},                                                           // same client, other sampling
		StageRefine: {URL: other.URL, Model: "big", APIKeyEnv: "KAIROS_TEST_OTHER_KEY"},        // its own key
		StageClaims: {URL: strings.Replace(main.URL, "127.0.0.1", "localhost", 1), Model: "m"}, // another origin by name
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, st := range []string{StageQuery, StageDraft, StageVerify, StageRefine, StageClaims} {
		if _, err := r.Complete(ctx, CompletionRequest{Stage: st, Messages: userMsg(st), MaxTokens: 40}); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	if _, err := r.Stream(ctx, CompletionRequest{Stage: StageDraft, Messages: userMsg("streamed draft")}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	type got struct {
		model, auth string
		temp, max   float64
	}
	byStage := map[string][]got{}
	for _, l := range []*recordingLLM{main, other} {
		for _, c := range l.all() {
			msgs := c["messages"].([]any)
			st := msgs[0].(map[string]any)["content"].(string)
			mt, _ := c["max_tokens"].(float64)
			byStage[st] = append(byStage[st], got{c["model"].(string), c["authorization"].(string), c["temperature"].(float64), mt})
		}
	}
	want := map[string]got{
		StageQuery:       {"m", "Bearer main-secret", 0, 40},
		StageDraft:       {"big", "", 0.2, 300}, // another origin: no key of main's
		StageVerify:      {"m", "Bearer main-secret", 0, 50},
		StageRefine:      {"big", "Bearer other-secret", 0, 40},
		StageClaims:      {"m", "", 0, 40},
		"streamed draft": {"big", "", 0.2, 300},
	}
	for st, w := range want {
		if g := byStage[st]; len(g) != 1 || g[0] != w {
			t.Errorf("%s: %+v, want %+v", st, g, w)
		}
	}
	if n := len(other.all()); n != 3 {
		t.Errorf("the draft/refine LLM got %d calls, want 3", n)
	}
}

func FuzzParseStageFlag(f *testing.F) {
	for _, s := range []string{"draft:url=http://h/v1,model=big,temperature=0.2,max_tokens=300", "refine:top_p=1",
		"x:", ":", "draft:temperature=NaN", "draft:max_tokens=99999999999999999999", "wikichat_draft:api_key_file=/k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		stage, s, err := ParseStageFlag(v)
		if err != nil {
			return
		}
		if _, err := stageName(stage); err != nil || stage == "" {
			t.Fatalf("%q: accepted stage %q", v, stage)
		}
		if err := s.validate(); err != nil {
			t.Fatalf("%q: accepted %+v: %v", v, s, err)
		}
	})
}

func FuzzParseLLMConfig(f *testing.F) {
	for _, s := range []string{`{"stages": {"draft": {"model": "big", "max_tokens": 300}}}`, `{}`, `{"stages": null}`,
		`{"stages": {"verify": {"temperature": 1e400}}}`, `{"stages": {"draft": {"url": "http://[::1]:8/v1"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseLLMConfig(b)
		if err != nil {
			return
		}
		for name, s := range st {
			if _, err := stageName(name); err != nil || name != mustStage(name) {
				t.Fatalf("accepted stage %q", name)
			}
			if err := s.validate(); err != nil {
				t.Fatalf("accepted %s %+v: %v", name, s, err)
			}
		}
	})
}

func mustStage(name string) string {
	st, _ := stageName(name)
	return st
}
