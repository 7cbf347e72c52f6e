// Command fakellm is a scripted OpenAI-compatible server for end-to-end checks of `kairos chat`
// as a separate process. It recognises which Kairos stage a prompt belongs to and answers with
// the text the script file gives for that stage; it logs one JSON line per call on stderr
// ({"stage": ..., "roles": "system,user,..."}) so a checker can see which stages ran and the
// roles of the messages each received.
//
//	fakellm -addr 127.0.0.1:8099 -script answers.json
//
// The script is a JSON object from stage name (query, summarize, generate, claims, verify,
// draft, refine, mpc_clarify, ..., or "default") to answer text.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kairos-rag/kairos/chat"
	"github.com/kairos-rag/kairos/chat/chattest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	scriptPath := flag.String("script", "", "JSON `file`: stage -> answer (required)")
	latency := flag.Duration("latency", 0, "delay per call")
	flag.Parse()
	if err := run(*addr, *scriptPath, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

func run(addr, scriptPath string, latency time.Duration) error {
	raw, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	var answers map[string]string
	if err := json.Unmarshal(raw, &answers); err != nil {
		return fmt.Errorf("%s: %w", scriptPath, err)
	}
	var mu sync.Mutex
	logEnc := json.NewEncoder(os.Stderr)
	h := chattest.NewHandler(func(stage string, msgs []chat.Message) string {
		roles := make([]string, len(msgs))
		for i, m := range msgs {
			roles[i] = m.Role
		}
		mu.Lock()
		_ = logEnc.Encode(map[string]any{"stage": stage, "roles": strings.Join(roles, ",")})
		mu.Unlock()
		if a, ok := answers[stage]; ok {
			return a
		}
		return answers["default"]
	}, latency)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
