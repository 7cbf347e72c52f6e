package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/embed"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/internal/tty"
	"github.com/kairos-rag/kairos/search"
)

// chatCLIOptions are the parsed flags of `kairos chat`.
type chatCLIOptions struct {
	Index      indexer.Location
	Pipeline   string
	Message    string
	Transcript string
	Trace      bool
	Conv       string
	StateDir   string
	StorePath  string            // serve --chat-store
	storeSet   bool              // --chat-store was given ("" included)
	Store      chat.StoreOptions // serve's limits of the conversation store
	Prompts    string
	Bank       string
	Encoder    string
	Logger     *slog.Logger // nil: silent
	// Runtime says how model folders named by Encoder or a bank run (--device, --backend,
	// ...): the same as --model's, so that a GPU asked for is used by every model.
	Runtime  embed.Options
	Client   chat.ClientOptions
	Stages   chat.LLMStageOptions // --llm-config, --llm-stage: per-stage URL, model, sampling
	WikiChat chat.WikiChatOptions
	SICL     chat.SICLOptions
	MSDP     chat.MSDPOptions
	MPC      chat.MPCOptions
}

// chatPipelines are the names --pipeline accepts.
var chatPipelines = []string{"wikichat", "commonsense", "mpc", "msdp", "sicl"}

func cmdChat(ctx context.Context, args []string, stdio IO) error {
	var o chatCLIOptions
	fs := newFlags("chat", "--index LOCATION --llm-url URL --llm-model M [--pipeline NAME] [--message TEXT] [flags]\n\n"+
		"Chat through an OpenAI-compatible LLM, grounded in an index. Without --message: a REPL on stdin.", stdio.Stderr)
	o.Index.Flag(fs, "to retrieve from: wikichat, commonsense; msdp with --msdp-knowledge retrieve")
	o.Client.Flags(fs) // --llm-url, --llm-model, key, limits, retries
	o.Stages.Flags(fs) // --llm-config, --llm-stage
	fs.Lookup("llm-url").Usage += " (required)"
	fs.Lookup("llm-model").Usage += " (required)"
	fs.StringVar(&o.Pipeline, "pipeline", "wikichat", "pipeline: "+strings.Join(chatPipelines, ", "))
	fs.StringVar(&o.Message, "message", "", "send this one `message` and exit")
	fs.StringVar(&o.Transcript, "transcript", "", "append every turn to this JSONL `file`")
	fs.BoolVar(&o.Trace, "trace", false, "print each turn as JSON (response, stages, passages, timings, tokens)")
	fs.StringVar(&o.Conv, "conversation", "", "conversation `id` to continue (default: a new one)")
	fs.StringVar(&o.StateDir, "state", "", "`directory` keeping conversations (and MPC memory) across runs, in its "+chatStateFile)
	fs.StringVar(&o.Prompts, "prompts", "", "`directory` of .tmpl files overriding the embedded prompts")
	fs.StringVar(&o.Bank, "bank", "", "example bank `file` (msdp, sicl; see kairos bank build)")
	fs.StringVar(&o.Encoder, "encoder", "", "sentence encoder for banks and MPC memory: a model folder or hash (default: the bank's, then --model's, then hash)")
	var models modelFlags
	models.register(fs, false)
	models.registerModelsDir(fs)
	o.WikiChat.Flags(fs) // --passages, --evidence, --max-claims
	var skip stringList
	fs.Var(&skip, "skip", "wikichat: stage to skip: retrieve, generate or refine (repeatable)")
	mode := fs.String("mode", "", "retrieval mode: bm25, dense or hybrid (default: the index's)")
	o.SICL.Flags(fs) // --sicl-approach
	o.MSDP.Flags(fs) // --msdp-knowledge
	personaFile := fs.String("persona", "", "mpc: `file` with the bot's persona, one fact per line")
	var lf logFlags
	lf.register(fs, "warn")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q (quote the --message)", pos[0])
	}
	if o.Client.BaseURL == "" || o.Client.Model == "" {
		return usageErr(fs, "need --llm-url and --llm-model")
	}
	if !containsString(chatPipelines, o.Pipeline) {
		return usageErr(fs, "unknown --pipeline %q", o.Pipeline)
	}
	// A bad --llm-config is refused before the index and models are opened.
	if _, err := o.Stages.Resolve(); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	log, err := lf.logger(fs, stdio.Stderr)
	if err != nil {
		return err
	}
	o.Logger, o.Runtime = log, models.options("", log)
	o.WikiChat.Skip = skip
	if o.WikiChat.Mode, err = search.ParseMode(*mode, ""); err != nil {
		return usageErr(fs, "--mode: %v", err)
	}
	if *personaFile != "" {
		if o.MPC.Persona, err = readLines(*personaFile); err != nil {
			return fmt.Errorf("chat: persona: %w", err)
		}
	}

	// The index's sentence encoder (--model) serves dense retrieval and, by default, MPC
	// memory recall and the bank.
	var indexEnc chat.Encoder
	ro := retrievalOptions{Location: o.Index, Logger: log, Notes: stdio.Stderr, ModeAsked: o.WikiChat.Mode != ""}
	// Without --model, the index's own is looked for, as search and serve look for it.
	if !o.Index.IsZero() && o.WikiChat.Mode != search.ModeBM25 {
		found := models.findIndexModel(ctx, o.Index)
		if found.dir != "" {
			fmt.Fprintf(stdio.Stderr, "kairos: %s\n", found.note)
		}
		ro.ModelNote = found.note
	}
	if models.model != "" {
		enc, err := openEncoder(ctx, &models, log)
		if err != nil {
			return fmt.Errorf("chat: %w", err)
		}
		defer enc.Close()
		ro.Search.Encoder, indexEnc = enc, bankEncoder(enc)
	}
	var r chat.Retriever
	var terms chat.TermStats
	if !o.Index.IsZero() {
		ret, err := openRetrieval(ctx, ro)
		if err != nil {
			return fmt.Errorf("chat: %w", err)
		}
		defer ret.Close()
		r, terms = chat.RetrieverFunc(ret.re.Search), ret.re
	}
	enc, err := chatEncoder(ctx, o, indexEnc)
	if err != nil {
		return err
	}
	if _, hashed := enc.(chat.HashEncoder); hashed && o.Pipeline == "mpc" {
		fmt.Fprintln(stdio.Stderr, hashMemoryNote)
	}
	return runChat(ctx, o, r, terms, enc, stdio)
}

// hashMemoryNote says that MPC memory recall runs on the no-model fallback.
const hashMemoryNote = "kairos chat: mpc memory recall uses the hashed bag-of-words encoder, the no-model fallback " +
	"(lexical matches only); give the index's sentence encoder with --model MODEL_DIR"

// chatEncoder picks the encoder for banks and MPC memory: --encoder; else the one the bank was
// built with (its vectors only compare with that encoder's); else indexEnc, the index's
// sentence encoder, when --model gave one; else the hashed bag of words.
func chatEncoder(ctx context.Context, o chatCLIOptions, indexEnc chat.Encoder) (chat.Encoder, error) {
	name := o.Encoder
	if name == "" && o.Bank != "" {
		b, err := chat.ReadBank(o.Bank)
		if err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
		name = b.Header.Encoder
	}
	if name == "" && indexEnc != nil {
		return indexEnc, nil
	}
	if name == "" {
		name = "hash"
	}
	return openBankEncoder(ctx, name, o.Runtime)
}

// runChat builds the client, prompts, bank and pipeline from o and runs one message or a REPL.
// r and enc may be nil when the pipeline does not need them.
func runChat(ctx context.Context, o chatCLIOptions, r chat.Retriever, terms chat.TermStats, enc chat.Encoder, stdio IO) error {
	if r == nil && (o.Pipeline == "wikichat" || o.Pipeline == "commonsense") && o.Index.IsZero() {
		return fmt.Errorf("chat: pipeline %s needs --index: %w", o.Pipeline, ErrUsage)
	}
	var transcript io.Writer
	if o.Transcript != "" {
		f, err := os.OpenFile(o.Transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("chat: transcript: %w", err)
		}
		defer f.Close()
		transcript = f
	}
	store, err := openChatState(o.StateDir)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	defer store.Close()
	svc, err := newChatService(o, []string{o.Pipeline}, r, terms, enc, transcript, store, false, o.Logger)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	conv := o.Conv
	if conv == "" {
		conv = chat.NewConversationID()
	}
	if o.Message != "" {
		return chatTurn(ctx, svc, conv, o.Message, o.Trace, o.Logger, stdio)
	}
	return chatREPL(ctx, svc, conv, o.Trace, o.Logger, stdio)
}

// newChatService builds the LLM client, templates and the named pipelines (the first is the
// default) into a chat service. kairos chat and kairos serve (POST /v1/chat) share it.
// serverIDs is set by serve: ids are generated, never chosen by clients (chat.ServiceOptions).
// terms is the index's TermStats for the attribution check (nil without an index).
func newChatService(o chatCLIOptions, pipelines []string, r chat.Retriever, terms chat.TermStats, enc chat.Encoder, transcript io.Writer, store *chat.Store, serverIDs bool, log *slog.Logger) (*chat.Service, error) {
	stages, err := o.Stages.Resolve()
	if err != nil {
		return nil, err
	}
	llm, err := chat.NewRouter(o.Client, stages)
	if err != nil {
		return nil, err
	}
	if log != nil {
		for stage, where := range llm.Endpoints() {
			log.Info("chat stage LLM", "stage", stage, "llm", where)
		}
	}
	tpl, err := chat.LoadTemplates(o.Prompts)
	if err != nil {
		return nil, err
	}
	deps := chat.Deps{LLM: llm, Templates: tpl, Retriever: r, Terms: terms, Encoder: enc}
	if o.Bank != "" {
		if deps.Bank, err = chat.ReadBank(o.Bank); err != nil {
			return nil, err
		}
	}
	sopts := chat.ServiceOptions{Transcript: transcript, Logger: log, Store: store, ServerIDs: serverIDs,
		MaxReplyTokens: o.Client.MaxTokens}
	for _, name := range pipelines {
		o.Pipeline = name
		p, err := buildPipeline(o, deps)
		if err != nil {
			return nil, pipelineError(name, deps, err)
		}
		sopts.Pipelines = append(sopts.Pipelines, p)
	}
	return chat.NewService(sopts)
}

func buildPipeline(o chatCLIOptions, d chat.Deps) (chat.Pipeline, error) {
	switch o.Pipeline {
	case "wikichat":
		return chat.NewWikiChat(d, o.WikiChat)
	case "commonsense":
		w := o.WikiChat
		w.QueryGen = "commonsense"
		return chat.NewWikiChat(d, w)
	case "mpc":
		return chat.NewMPC(d, o.MPC)
	case "msdp":
		return chat.NewMSDP(d, o.MSDP)
	case "sicl":
		return chat.NewSICL(d, o.SICL)
	}
	return nil, fmt.Errorf("unknown pipeline %q", o.Pipeline)
}

// chatTurn runs one turn and prints the reply and the sources its [n] markers cite, or with
// trace the whole turn as one JSON line.
func chatTurn(ctx context.Context, svc *chat.Service, conv, msg string, trace bool, log *slog.Logger, stdio IO) error {
	resp, err := svc.Turn(ctx, chat.TurnRequest{ConversationID: conv, Message: msg}, nil)
	if err != nil {
		return turnError(err, log)
	}
	if trace {
		b, err := json.Marshal(resp)
		if err != nil {
			return fmt.Errorf("chat: trace: %w", err)
		}
		_, err = fmt.Fprintf(stdio.Stdout, "%s\n", b)
		return err
	}
	if _, err := fmt.Fprintln(stdio.Stdout, resp.Response); err != nil {
		return err
	}
	// The sources the reply's [n] markers cite, one line each, indented under the reply.
	for _, c := range resp.Turn.Citations {
		if c.N == 0 {
			continue
		}
		line := fmt.Sprintf("  [%d] %s", c.N, c.Title)
		if c.Section != "" {
			line += " § " + c.Section
		}
		if c.URL != "" {
			line += " " + c.URL
		}
		if _, err := fmt.Fprintln(stdio.Stdout, line); err != nil {
			return err
		}
	}
	return nil
}

// chatREPL reads one message per line until EOF or "/quit". A failed turn is reported and the
// session goes on: one bad LLM answer should not end a conversation.
func chatREPL(ctx context.Context, svc *chat.Service, conv string, trace bool, log *slog.Logger, stdio IO) error {
	interactive := tty.Is(stdio.Stdin)
	if interactive {
		fmt.Fprintf(stdio.Stderr, "conversation %s; /quit to leave, /trace to toggle the trace\n", conv)
	}
	sc := bufio.NewScanner(stdio.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		if interactive {
			fmt.Fprint(stdio.Stderr, "> ")
		}
		if !sc.Scan() {
			break
		}
		line := strings.TrimSpace(sc.Text())
		switch line {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/trace":
			trace = !trace
			fmt.Fprintf(stdio.Stderr, "trace %v\n", trace)
			continue
		}
		if err := chatTurn(ctx, svc, conv, line, trace, log, stdio); err != nil {
			if ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(stdio.Stderr, "error: %v\n", err)
		}
	}
	return sc.Err()
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(path + " is empty")
	}
	return out, nil
}

// chatStateFile is the database kairos chat --state DIR keeps conversations in.
const chatStateFile = "conversations.db"

// openChatState opens the conversation store of kairos chat: in dir, or in memory for "".
func openChatState(dir string) (*chat.Store, error) {
	if dir == "" {
		return chat.OpenStore(chat.StoreOptions{})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("conversation state: %w", err)
	}
	return chat.OpenStore(chat.StoreOptions{Path: filepath.Join(dir, chatStateFile)})
}
