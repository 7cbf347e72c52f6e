package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/indexer"
	"github.com/kairos-rag/kairos/server"
)

// registerServeChat adds the flags of POST /v1/chat to serve. Without --llm-url the endpoint
// answers 501.
func registerServeChat(fs *flag.FlagSet, o *chatCLIOptions) {
	o.Client.Flags(fs)   // as kairos chat: --llm-url, --llm-model, keys, limits, retries, prices
	o.Stages.Flags(fs)   // --llm-config, --llm-stage
	o.WikiChat.Flags(fs) // --passages, --evidence, --max-claims
	o.SICL.Flags(fs)     // --sicl-approach
	o.MSDP.Flags(fs)     // --msdp-knowledge
	fs.Lookup("llm-url").Usage += ", for POST /v1/chat (default: chat off)"
	fs.Lookup("llm-model").Usage += " for POST /v1/chat"
	fs.Func("chat-store", "bbolt database `file` keeping conversations (and MPC memory) across restarts; \"\" keeps them in memory only (default: kairos-chat.db beside the --index directory)", func(v string) error {
		o.StorePath, o.storeSet = v, true
		return nil
	})
	o.Store.Flags(fs) // --chat-max-conversations, --chat-idle-ttl, --chat-max-turns, ...
	fs.StringVar(&o.Prompts, "prompts", "", "`directory` of .tmpl files overriding the embedded prompts")
	fs.StringVar(&o.Bank, "bank", "", "example bank `file`: enables the msdp and sicl pipelines")
}

// newServeChat builds the chat service of POST /v1/chat: wikichat (the default), commonsense
// and mpc, plus msdp and sicl when a bank is given. retrieve and terms are the default
// collection's live index, so chat follows index reloads.
// indexEnc is the index's sentence encoder (serve --model), nil without one.
// The store is returned for the caller to close after the server has shut down.
func newServeChat(ctx context.Context, o chatCLIOptions, retrieve chat.Retriever, terms chat.TermStats, indexEnc chat.Encoder, log *slog.Logger) (server.Chatter, *chat.Store, error) {
	if o.Client.BaseURL == "" && o.Client.Model == "" {
		if o.Stages.ConfigFile != "" || len(o.Stages.Stages) > 0 {
			return nil, nil, fmt.Errorf("--llm-config and --llm-stage set the stages of chat, which needs --llm-url and --llm-model: %w", ErrUsage)
		}
		return nil, nil, nil
	}
	if o.Client.BaseURL == "" || o.Client.Model == "" {
		return nil, nil, fmt.Errorf("chat needs both --llm-url and --llm-model: %w", ErrUsage)
	}
	enc, err := chatEncoder(ctx, o, indexEnc)
	if err != nil {
		return nil, nil, err
	}
	if _, hashed := enc.(chat.HashEncoder); hashed {
		// Information, not a warning: mpc is one pipeline of several, and a BM25-only
		// server's chat is well without a sentence encoder.
		log.Info("chat: mpc recalls its memory with the hashed bag-of-words encoder (lexical matches only); with --model MODEL_DIR, the index's sentence encoder, it would recall by meaning")
	}
	names := []string{"wikichat", "commonsense", "mpc"}
	if o.Bank != "" {
		names = append(names, "msdp", "sicl")
	}
	so := o.Store
	so.Path, so.Logger = o.StorePath, log
	store, err := chat.OpenStore(so)
	if err != nil {
		return nil, nil, fmt.Errorf("chat: %w", err)
	}
	if so.Path == "" {
		log.Info("chat conversations are kept in memory only (--chat-store \"\")")
	} else {
		// The file is created beside the index unless --chat-store says otherwise: say so.
		log.Info("chat conversations are kept in a file (--chat-store)", "file", so.Path)
	}
	svc, err := newChatService(o, names, retrieve, terms, enc, nil, store, true, log)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("chat: %w", err)
	}
	return server.NewChatService(svc, store), store, nil
}

// defaultChatStore is where serve keeps conversations when --chat-store is not given: beside
// the index directory (not inside it, where generations are written and dropped); in memory
// for an index that is not a directory.
func defaultChatStore(index indexer.Location) string {
	if index.Dir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Clean(index.Dir)), "kairos-chat.db")
}
