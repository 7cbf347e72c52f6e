package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
	"github.com/kairos-rag/kairos/indexer"
)

// cliScript answers every stage plainly; draft repeats the verified facts it was given.
func cliScript(stage string, msgs []chat.Message) string {
	p := chattest.LastUser(msgs)
	switch stage {
	case chat.StageQuery:
		return "Search: yes\nQuery: Frozen 2013 film Chris Buck Jennifer Lee\nTime: none"
	case chat.StageSummarize:
		if strings.Contains(p, "Chris Buck") {
			return "- Frozen was directed by Chris Buck and Jennifer Lee."
		}
		return "None"
	case chat.StageGenerate:
		return "Frozen came out in 2013."
	case chat.StageClaims:
		return "1. Frozen came out in 1990."
	case chat.StageVerify:
		return "Reasoning: the lead says 2013.\nVerdict: REFUTES"
	case chat.StageDraft:
		// The first fact, cited as the prompt asks: "fact [n]."
		_, facts, _ := strings.Cut(p, "Verified facts:\n- ")
		fact, _, _ := strings.Cut(strings.TrimSpace(facts), "\n")
		if body, n, ok := strings.Cut(fact, ". ["); ok {
			return body + " [" + n + "."
		}
		return fact
	case chat.StageRefine:
		// The refine stage always revises (WikiChat does not skip it); this one keeps the text.
		return "Relevance: 100/100\nNaturalness: 100/100\nNon-repetition: 100/100\nTemporal correctness: 100/100\nRevised response: " + chattest.Field(p, "Reply")
	case chat.StageSICL:
		return "Bot: I love that one too!"
	}
	return "unexpected stage " + stage
}

func chatOpts(url string) chatCLIOptions {
	var o chatCLIOptions
	o.Client = chat.ClientOptions{BaseURL: url, Model: "fake"}
	o.Pipeline = "wikichat"
	return o
}

func TestRunChatOneShotTrace(t *testing.T) {
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	leads, err := chattest.LoadLeads("../../../shared/data/wikichat-topics/recent_articles_en.json", 120)
	if err != nil {
		t.Fatal(err)
	}
	o := chatOpts(llm.BaseURL())
	o.Message, o.Trace, o.Index = "Who directed Frozen?", true, indexer.Location{Dir: "unused-by-runChat"}
	o.Transcript = filepath.Join(t.TempDir(), "t.jsonl")
	var out bytes.Buffer
	if err := runChat(context.Background(), o, chattest.NewRetriever(leads), nil, nil, IO{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	var resp chat.TurnResponse
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, out.String())
	}
	// All scores are 100: the refine stage keeps the draft.
	if resp.Response != "Frozen was directed by Chris Buck and Jennifer Lee [1]." {
		t.Errorf("response %q", resp.Response)
	}
	if c := resp.Turn.Citations; len(c) != 1 || c[0].N != 1 || c[0].Title != "Frozen (2013 film)" {
		t.Errorf("citations %+v", c)
	}
	var stages []string
	for _, s := range resp.Turn.Stages {
		stages = append(stages, s.Stage)
	}
	for _, want := range []string{"query", "retrieve", "summarize", "generate", "claims", "evidence", "verify", "draft", "refine"} {
		if !slices.Contains(stages, want) {
			t.Errorf("trace lacks stage %s: %v", want, stages)
		}
	}
	tr, err := os.ReadFile(o.Transcript)
	if err != nil || strings.Count(string(tr), "\n") != 1 || !strings.Contains(string(tr), resp.ConversationID) {
		t.Errorf("transcript %q, %v", tr, err)
	}
}

// Without --trace, the reply is followed by the sources its [n] markers cite.
func TestRunChatPrintsSources(t *testing.T) {
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	leads, err := chattest.LoadLeads("../../../shared/data/wikichat-topics/recent_articles_en.json", 120)
	if err != nil {
		t.Fatal(err)
	}
	for i := range leads {
		leads[i].URL = "https://en.wikipedia.org/wiki/" + strings.ReplaceAll(leads[i].Title, " ", "_")
	}
	o := chatOpts(llm.BaseURL())
	o.Message, o.Index = "Who directed Frozen?", indexer.Location{Dir: "unused-by-runChat"}
	var out bytes.Buffer
	if err := runChat(context.Background(), o, chattest.NewRetriever(leads), nil, nil, IO{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	want := "Frozen was directed by Chris Buck and Jennifer Lee [1].\n  [1] Frozen (2013 film) https://en.wikipedia.org/wiki/Frozen_(2013_film)\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestRunChatREPL(t *testing.T) {
	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	o := chatOpts(llm.BaseURL())
	o.Index = indexer.Location{Dir: "x"}
	var out, errOut bytes.Buffer
	in := strings.NewReader("Who directed Frozen?\n\n/trace\nAnd who produced it?\n/quit\nnever sent\n")
	if err := runChat(context.Background(), o, chattest.NewRetriever(nil), nil, nil, IO{Stdin: in, Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Sorry, I'm not sure") || !strings.HasPrefix(lines[1], `{"conversation_id"`) {
		t.Errorf("REPL output %q", out.String())
	}
	var resp chat.TurnResponse
	if err := json.Unmarshal([]byte(lines[1]), &resp); err != nil || resp.Turn.Index != 1 {
		t.Errorf("second turn %+v %v: want index 1 in the same conversation", resp.Turn.Index, err)
	}
}

func TestBankCommandsAndSICLChat(t *testing.T) {
	dir := t.TempDir()
	examples, bank := filepath.Join(dir, "ex.jsonl"), filepath.Join(dir, "bank")
	var out, errOut bytes.Buffer
	io := IO{Stdout: &out, Stderr: &errOut}
	ctx := context.Background()
	if err := cmdBank(ctx, []string{"topical", "--dir", "../../../shared/data/topical-chat", "--split", "test_rare", "--max", "150", "--out", examples}, io); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "150 examples") {
		t.Errorf("topical output %q", out.String())
	}
	if err := cmdBank(ctx, []string{"build", "--encoder", "hash-512", "--input", examples, "--out", bank}, io); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := cmdBank(ctx, []string{"info", bank}, io); err != nil || !strings.Contains(out.String(), "150 examples, encoder hash-512, dim 512") {
		t.Fatalf("info %q %v", out.String(), err)
	}

	llm := chattest.NewServer(cliScript, 0)
	defer llm.Close()
	o := chatOpts(llm.BaseURL())
	o.Pipeline, o.Bank, o.Message = "sicl", bank, "Do you like music?"
	enc, err := chatEncoder(context.Background(), o, indexEncoder{}) // from the bank's header, before the index's
	if err != nil {
		t.Fatal(err)
	}
	if enc != (chat.HashEncoder{Dim: 512}) {
		t.Fatalf("encoder with a hash-512 bank and an index encoder: %#v", enc)
	}
	out.Reset()
	if err := runChat(ctx, o, nil, nil, enc, io); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "I love that one too!" {
		t.Errorf("sicl reply %q", out.String())
	}
	calls := llm.Calls()
	if len(calls) != 1 || strings.Count(calls[0].Messages[0].Content, "Sample ") != 3 {
		t.Errorf("sicl prompt did not carry 3 bank samples: %+v", calls)
	}
}

// indexEncoder stands for the index's sentence encoder (--model).
type indexEncoder struct{}

func (indexEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, errors.New("not called")
}

func TestChatEncoderPrecedence(t *testing.T) {
	tests := []struct {
		name     string
		encoder  string
		indexEnc chat.Encoder
		want     chat.Encoder
	}{
		{"nothing given: the hashed fallback", "", nil, chat.HashEncoder{}},
		{"the index's encoder by default", "", indexEncoder{}, indexEncoder{}},
		{"--encoder wins over the index's", "hash-64", indexEncoder{}, chat.HashEncoder{Dim: 64}},
		{"--encoder without an index encoder", "hash", nil, chat.HashEncoder{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chatEncoder(context.Background(), chatCLIOptions{Encoder: tt.encoder}, tt.indexEnc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestChatUsageErrors(t *testing.T) {
	tests := [][]string{
		{"--llm-model", "m", "--index", "x"},
		{"--llm-url", "http://x/v1", "--llm-model", "m", "--pipeline", "nope"},
		{"--llm-url", "http://x/v1", "--llm-model", "m", "stray"},
		{"--llm-url", "http://x/v1", "--llm-model", "m", "--message", "hi"}, // wikichat without --index
		{"--llm-url", "http://x/v1", "--llm-model", "m", "--encoder", "onnx-nope", "--pipeline", "mpc"},
	}
	for _, args := range tests {
		var errOut bytes.Buffer
		err := cmdChat(context.Background(), args, IO{Stdin: strings.NewReader(""), Stdout: &errOut, Stderr: &errOut})
		if !errors.Is(err, ErrUsage) {
			t.Errorf("cmdChat(%q) err = %v, want a usage error", args, err)
		}
	}
	if err := cmdBank(context.Background(), []string{"build", "--input", "x"}, IO{Stderr: &bytes.Buffer{}}); !errors.Is(err, ErrUsage) {
		t.Errorf("bank build without --out: %v", err)
	}
}

// A failed turn's error names the kind of LLM failure and a flag, never what the LLM wrote:
// its body is unverified text, which the error printed to the user.
func TestRunChatErrorsHideWhatTheLLMWrote(t *testing.T) {
	const claim = "Napoleon Bonaparte discovered vitamin D in 1850 and it cures cancer."
	for _, tc := range []struct {
		name   string
		status int
		want   string
	}{
		{"an answer that is no completion", http.StatusOK, "not a usable completion"},
		{"a server error", http.StatusInternalServerError, "failed: it answered HTTP 500"},
		{"a refusal", http.StatusBadRequest, "refused the request: it answered HTTP 400 (check --llm-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, claim)
			}))
			defer llm.Close()
			o := chatOpts(llm.URL)
			o.Client.MaxRetries = -1
			o.Message, o.Index = "Who discovered vitamin D?", indexer.Location{Dir: "unused-by-runChat"}
			var logs bytes.Buffer
			o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			var out bytes.Buffer
			err := runChat(context.Background(), o, chattest.NewRetriever(nil), nil, nil, IO{Stdout: &out, Stderr: &out})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error()+out.String(), "cures cancer") {
				t.Fatalf("error %v, output %q: want %q and not the LLM's words", err, out.String(), tc.want)
			}
			if !strings.Contains(logs.String(), "chat turn failed") {
				t.Errorf("the debug log lacks the failure: %q", logs.String())
			}
		})
	}
}
