package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/search"
)

// The same SciFact subset indexed locally and on a 1-peer Qdrant cluster, both through the
// commands: the BM25 top 10 of every judged query is the same passages in the same order with
// the same scores, eval's nDCG@10 agrees to 3 decimals, stats and verify agree, and a plain
// rebuild is refused without --force. One cluster serves every subtest (each start costs
// seconds of the machine's two cores).
func TestQdrantIndexMatchesLocal(t *testing.T) {
	cluster := qdranttest.Start(t, 1)
	host := cluster.Peers[0].GRPCAddr()
	tmp := t.TempDir()
	corpusFile := filepath.Join(tmp, "sf800.jsonl")
	writeHead(t, coreShared(t, "data/beir-scifact/corpus.jsonl"), corpusFile, 800)
	queries, qrels := judgedSubset(t, corpusFile, tmp)
	local := filepath.Join(tmp, "idx")
	remote := "qdrant://" + host + "/scifact?shards=3"
	for _, dir := range []string{local, remote} {
		if _, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", dir); err != nil {
			t.Fatalf("index %s: %v", dir, err)
		}
	}

	t.Run("search top 10", func(t *testing.T) {
		runs := map[string]map[string][]qrunHit{}
		for _, dir := range []string{local, remote} {
			out := filepath.Join(tmp, strings.NewReplacer("/", "_", ":", "_", "?", "_").Replace(filepath.Base(dir))+".jsonl")
			if _, _, err := runCLI(t, "search", "--index", dir, "--batch", queries, "-k", "10", "--out", out); err != nil {
				t.Fatalf("search %s: %v", dir, err)
			}
			runs[dir] = readRun(t, out)
		}
		want, got := runs[local], runs[remote]
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("local run has %d queries, qdrant's %d", len(want), len(got))
		}
		hits := 0
		for qid, w := range want {
			g := got[qid]
			if len(g) != len(w) {
				t.Errorf("query %s: %d hits on qdrant, %d locally", qid, len(g), len(w))
				continue
			}
			for i := range w {
				hits++
				if g[i].PassageID != w[i].PassageID || math.Abs(g[i].Score-w[i].Score) > 1e-5 {
					t.Errorf("query %s rank %d: qdrant %s %.7f, local %s %.7f", qid, i+1, g[i].PassageID, g[i].Score, w[i].PassageID, w[i].Score)
				}
			}
		}
		if hits < 10*len(want)/2 {
			t.Errorf("only %d hits over %d queries: the comparison is too thin to mean anything", hits, len(want))
		}
	})

	t.Run("eval nDCG@10", func(t *testing.T) {
		ndcg := map[string]float64{}
		for _, dir := range []string{local, remote} {
			out, _, err := runCLI(t, "eval", "--index", dir, "--queries", queries, "--qrels", qrels, "--json", "--depth", "100")
			if err != nil {
				t.Fatalf("eval %s: %v", dir, err)
			}
			var ev struct {
				NDCG   float64 `json:"ndcg_at_10"`
				Judged int     `json:"judged_queries"`
			}
			if err := json.Unmarshal([]byte(out), &ev); err != nil || ev.Judged < 50 {
				t.Fatalf("eval %s: %s: %v", dir, out, err)
			}
			ndcg[dir] = ev.NDCG
			t.Logf("%s: nDCG@10 %.4f over %d judged queries", dir, ev.NDCG, ev.Judged)
		}
		if math.Round(ndcg[local]*1000) != math.Round(ndcg[remote]*1000) || ndcg[local] == 0 {
			t.Errorf("nDCG@10: local %.4f, qdrant %.4f", ndcg[local], ndcg[remote])
		}
	})

	t.Run("stats and verify", func(t *testing.T) {
		passages := map[string]string{}
		for _, dir := range []string{local, remote} {
			out, _, err := runCLI(t, "stats", "--index", dir)
			if err != nil {
				t.Fatalf("stats %s: %v", dir, err)
			}
			passages[dir] = strings.SplitN(out[strings.Index(out, "passages"):], "\n", 2)[0]
			if out, _, err := runCLI(t, "verify", "--index", dir); err != nil || !strings.HasSuffix(out, "ok\n") {
				t.Errorf("verify %s: %v\n%s", dir, err, out)
			}
		}
		if passages[local] != passages[remote] || passages[local] == "" {
			t.Errorf("stats: local %q, qdrant %q", passages[local], passages[remote])
		}
	})

	t.Run("serve's engine", func(t *testing.T) {
		ctx := context.Background()
		q := rerank.Query{Request: search.Request{Text: "cerebral white matter diffusion tensor newborn", K: 5, Mode: search.ModeBM25}}
		var got [2]rerank.Result
		var stats [2]search.Stats
		for i, dir := range []string{local, remote} {
			e := openLive(t, dir)
			var err error
			if got[i], err = e.Search(ctx, q); err != nil || len(got[i].Hits) != 5 {
				t.Fatalf("%s: search: %v, %d hits", dir, err, len(got[i].Hits))
			}
			p, err := e.Passage(ctx, got[i].Hits[0].ID)
			if err != nil || p.ID != got[i].Hits[0].ID || p.Text == "" {
				t.Errorf("%s: passage %s: %+v, %v", dir, got[i].Hits[0].ID, p, err)
			}
			if stats[i], err = e.Stats(); err != nil {
				t.Fatal(err)
			}
		}
		for r := range got[0].Hits {
			if a, b := got[0].Hits[r], got[1].Hits[r]; a.ID != b.ID || a.Text != b.Text || math.Abs(a.Score-b.Score) > 1e-5 {
				t.Errorf("rank %d: local %s %.6f, qdrant %s %.6f", r+1, a.ID, a.Score, b.ID, b.Score)
			}
		}
		if stats[0].Documents != stats[1].Documents || stats[0].Passages != stats[1].Passages || stats[1].Dense {
			t.Errorf("stats: local %+v, qdrant %+v", stats[0], stats[1])
		}
	})

	t.Run("dense", func(t *testing.T) {
		requireORTLib(t)
		model := coreShared(t, "models/synthetic/tiny-encoder")
		small := filepath.Join(tmp, "sf100.jsonl")
		writeHead(t, corpusFile, small, 100)
		denseLocal, denseRemote := filepath.Join(tmp, "dense"), "qdrant://"+host+"/dense"
		top := map[string][]string{}
		for _, dir := range []string{denseLocal, denseRemote} {
			if _, _, err := runCLI(t, "index", "--quiet", "--input", small, "--index", dir, "--model", model, "--backend", "ort"); err != nil {
				t.Fatalf("index %s: %v", dir, err)
			}
			if out, _, err := runCLI(t, "verify", "--index", dir); err != nil || !strings.HasSuffix(out, "ok\n") {
				t.Errorf("verify %s: %v\n%s", dir, err, out)
			}
			out, _, err := runCLI(t, "search", "--index", dir, "--model", model, "--backend", "ort", "--mode", "dense", "--exact", "-k", "10", "--json", "vitamin D deficiency and bone density")
			if err != nil {
				t.Fatalf("dense search %s: %v", dir, err)
			}
			var res struct {
				Hits []struct {
					ID string `json:"id"`
				} `json:"hits"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Hits) != 10 {
				t.Fatalf("dense search %s: %v\n%s", dir, err, out)
			}
			for _, h := range res.Hits {
				top[dir] = append(top[dir], h.ID)
			}
		}
		if strings.Join(top[denseLocal], " ") != strings.Join(top[denseRemote], " ") {
			t.Errorf("exact dense top 10:\nlocal  %v\nqdrant %v", top[denseLocal], top[denseRemote])
		}
	})

	t.Run("existing index refused without --force", func(t *testing.T) {
		_, _, err := runCLI(t, "index", "--quiet", "--input", corpusFile, "--index", remote)
		if err == nil || !strings.Contains(err.Error(), "already holds an index (generation 1") {
			t.Fatalf("plain rebuild: %v", err)
		}
	})

	// An update with --delete-missing (50 documents gone, 50 new, one changed), then a
	// delete, then compact: each side ends with the same passages and the same rankings, and
	// the cluster keeps only the live collection and the one before it.
	t.Run("update, delete, compact", func(t *testing.T) {
		b, err := os.ReadFile(coreShared(t, "data/beir-scifact/corpus.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")[50:850]
		lines[10] = strings.Replace(lines[10], `"text": "`, `"text": "Vitamin D supplementation changed this abstract. `, 1)
		updated := filepath.Join(tmp, "updated.jsonl")
		if err := os.WriteFile(updated, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		var gone struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(lines[20]), &gone); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{local, remote} {
			out, _, err := runCLI(t, "index", "--update", "--delete-missing", "--compact-ratio", "-1", "--input", updated, "--index", dir)
			if err != nil || !strings.Contains(out, "added       50 documents\nchanged     1 document\nunchanged   749 documents\ndeleted     50 documents") {
				t.Fatalf("update %s: %v\n%s", dir, err, out)
			}
			if out, _, err := runCLI(t, "delete", "--index", dir, gone.ID); err != nil || !strings.Contains(out, "deleted     1 document") {
				t.Fatalf("delete %s: %v\n%s", dir, err, out)
			}
			if out, _, err := runCLI(t, "verify", "--index", dir); err != nil || !strings.HasSuffix(out, "ok\n") {
				t.Errorf("verify %s: %v\n%s", dir, err, out)
			}
		}
		if out, _, err := runCLI(t, "compact", "--index", remote); err != nil || !strings.Contains(out, "(generation 3)") {
			t.Errorf("compact on qdrant: %v\n%s", err, out)
		}
		runs := map[string]map[string][]qrunHit{}
		for _, dir := range []string{local, remote} {
			out := filepath.Join(tmp, "after-update-"+strconv.Itoa(len(runs))+".jsonl")
			if _, _, err := runCLI(t, "search", "--index", dir, "--batch", queries, "-k", "10", "--out", out); err != nil {
				t.Fatalf("search %s: %v", dir, err)
			}
			runs[dir] = readRun(t, out)
		}
		for qid, w := range runs[local] {
			g := runs[remote][qid]
			if len(g) != len(w) {
				t.Errorf("query %s: %d hits on qdrant, %d locally", qid, len(g), len(w))
				continue
			}
			for i := range w {
				if g[i].PassageID != w[i].PassageID || math.Abs(g[i].Score-w[i].Score) > 1e-5 {
					t.Errorf("query %s rank %d: qdrant %s %.7f, local %s %.7f", qid, i+1, g[i].PassageID, g[i].Score, w[i].PassageID, w[i].Score)
				}
			}
		}
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(cluster.Peers[0].HTTP) + "/collections")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for gen, want := range map[string]bool{"scifact-g-000001": false, "scifact-g-000002": true, "scifact-g-000003": true} {
			if strings.Contains(string(body), `"`+gen+`"`) != want {
				t.Errorf("collection %s present = %v, want %v: %s", gen, !want, want, body)
			}
		}
	})

	// A rebuild moves the alias while an opened index is being queried: every query of the
	// loop succeeds and answers from the generation it opened, never a mix; an index opened
	// afterwards answers from the new one.
	t.Run("alias swap under queries", func(t *testing.T) {
		ctx := context.Background()
		q := rerank.Query{Request: search.Request{Text: "cerebral white matter diffusion tensor newborn", K: 10, Mode: search.ModeBM25}}
		e := openLive(t, remote)
		before, err := e.Search(ctx, q)
		if err != nil || len(before.Hits) == 0 {
			t.Fatalf("search before the swap: %v", err)
		}
		small := filepath.Join(tmp, "sf60.jsonl")
		writeHead(t, corpusFile, small, 60)
		stop := make(chan struct{})
		type outcome struct{ queries, errs, mixed int }
		done := make(chan outcome)
		go func() {
			var o outcome
			for {
				select {
				case <-stop:
					done <- o
					return
				default:
				}
				res, err := e.Search(ctx, q)
				o.queries++
				switch {
				case err != nil:
					o.errs++
				case !sameRerankHits(res.Hits, before.Hits):
					o.mixed++
				}
			}
		}()
		_, _, err = runCLI(t, "index", "--quiet", "--force", "--input", small, "--index", remote)
		close(stop)
		o := <-done
		if err != nil {
			t.Fatal(err)
		}
		if o.errs != 0 || o.mixed != 0 || o.queries < 2 {
			t.Errorf("%d queries during the rebuild: %d errors, %d answered otherwise than before", o.queries, o.errs, o.mixed)
		}
		t.Logf("%d queries during the rebuild, all answered from the opened generation", o.queries)
		out, _, err := runCLI(t, "stats", "--index", remote)
		if err != nil || !strings.Contains(out, "documents   60\n") {
			t.Errorf("stats after the swap: %v\n%s", err, out)
		}
	})
}

// A cluster that does not answer is one clear error naming it, from every command.
func TestQdrantUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	loc := "qdrant://" + addr + "/wiki"
	for _, args := range [][]string{
		{"search", "--index", loc, "vitamin"},
		{"verify", "--index", loc},
	} {
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "grpc://"+addr) || !strings.Contains(err.Error(), "cluster unreachable") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", args[0], err)
		}
	}
}

// sameRerankHits reports whether a and b are the same passages with the same scores, in order.
func sameRerankHits(a, b []rerank.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Score != b[i].Score {
			return false
		}
	}
	return true
}

type qrunHit struct {
	PassageID string  `json:"passage_id"`
	Score     float64 `json:"score"`
}

// readRun reads a `search --batch` run: one {"qid", "hits"} line per query.
func readRun(t *testing.T, path string) map[string][]qrunHit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]qrunHit{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line struct {
			QID  string    `json:"qid"`
			Hits []qrunHit `json:"hits"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[line.QID] = line.Hits
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// judgedSubset writes the SciFact train queries and qrels whose judged documents are all in
// corpusFile, so the comparison runs on queries that mean something for the subset.
func judgedSubset(t *testing.T, corpusFile, dir string) (queries, qrels string) {
	t.Helper()
	docs := map[string]bool{}
	b, err := os.ReadFile(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		docs[d.ID] = true
	}
	all := readQrels(t, coreShared(t, "data/beir-scifact/qrels/train.tsv"))
	keep := map[string]bool{}
	var qrelLines []string
	for qid, judged := range all {
		ok := true
		for d := range judged {
			ok = ok && docs[d]
		}
		if ok {
			keep[qid] = true
			for d, g := range judged {
				qrelLines = append(qrelLines, qid+"\t"+d+"\t"+strconv.FormatFloat(g, 'f', -1, 64))
			}
		}
	}
	var qLines []string
	qb, err := os.ReadFile(coreShared(t, "data/beir-scifact/queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(qb)), "\n") {
		var q struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		if keep[q.ID] {
			qLines = append(qLines, line)
		}
	}
	if len(qLines) < 50 {
		t.Fatalf("only %d judged queries in the subset", len(qLines))
	}
	queries, qrels = filepath.Join(dir, "queries.jsonl"), filepath.Join(dir, "qrels.tsv")
	if err := os.WriteFile(queries, []byte(strings.Join(qLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\n"+strings.Join(qrelLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return queries, qrels
}
