package indexer

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-rag/kairos/indexer/backend"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant"
	"github.com/kairos-rag/kairos/indexer/backend/qdrant/qdranttest"
	"github.com/kairos-rag/kairos/indexer/manifest"
)

// errInjected is the failure the hooks below inject.
var errInjected = errors.New("injected failure")

// On a 1-peer cluster: a build that fails before its commit leaves the live generation live
// and its own collection dropped; a build that fails after a checkpoint resumes from it (an
// unfinished collection beside it is ignored) and ends with what a clean build of the same
// inputs has, locally; the checkpoint and the leftover are dropped by that commit.
func TestQdrantCommitAndResume(t *testing.T) {
	cluster := qdranttest.Start(t, 1)
	loc := "qdrant://" + cluster.Peers[0].GRPCAddr() + "/t?shards=2&rest=" + cluster.Peers[0].HTTPAddr()
	httpBase := "http://127.0.0.1:" + strconv.Itoa(cluster.Peers[0].HTTP)
	ctx := context.Background()
	input := scifactHead(t, 300)
	opts := func(hook func(string) error) Options {
		o := crashOptions(loc, input)
		o.faultAt = hook
		return o
	}
	collections := func() string {
		resp, err := http.Get(httpBase + "/collections")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	first, err := Build(ctx, opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	local, err := Build(ctx, crashOptions(filepath.Join(t.TempDir(), "local"), input))
	if err != nil {
		t.Fatal(err)
	}

	// A failure after the writer finished, before the alias moved (no checkpoint, which a
	// failed build would keep for Resume).
	noCheckpoints := opts(func(p string) error {
		if p == "finished" {
			return errInjected
		}
		return nil
	})
	noCheckpoints.CheckpointEvery = -1
	_, err = Build(ctx, noCheckpoints)
	if !errors.Is(err, errInjected) {
		t.Fatalf("build with a failure at finished: %v", err)
	}
	if man, err := liveManifest(ctx, loc); err != nil || man.Generation != first.Generation {
		t.Fatalf("after the failed build: live %+v, %v; want generation %d", man, err, first.Generation)
	}
	if cs := collections(); strings.Count(cs, `"t-g-`) != 1 {
		t.Errorf("the failed build's collection was not dropped: %s", cs)
	}

	// A failure at the first batch after a checkpoint, then an unfinished collection beside
	// the checkpoint (what a killed writer leaves), then Resume.
	checkpointed := false
	_, err = Build(ctx, opts(func(p string) error {
		switch {
		case p == "checkpoint-recorded":
			checkpointed = true
		case p == "batch-applied" && checkpointed:
			return errInjected
		}
		return nil
	}))
	if !errors.Is(err, errInjected) || !checkpointed {
		t.Fatalf("build with a failure after a checkpoint: %v (checkpointed %v)", err, checkpointed)
	}
	req, _ := http.NewRequest(http.MethodPut, httpBase+"/collections/t-g-000099", strings.NewReader(`{"vectors":{"dense":{"size":32,"distance":"Cosine"}}}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("creating a leftover collection: %v %v", resp, err)
	}
	sum, err := resumeBuild(ctx, opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed == 0 {
		t.Errorf("Resume started from scratch (Resumed 0)")
	}
	man, err := liveManifest(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	lman, err := liveManifest(ctx, local.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Counts.Passages != lman.Counts.Passages || man.Counts.Documents != lman.Counts.Documents ||
		*man.BM25 != *lman.BM25 || man.Dense == nil || man.Dense.Vectors != lman.Counts.Passages {
		t.Errorf("resumed on qdrant: counts %+v bm25 %+v dense %+v; a clean local build: %+v %+v", man.Counts, man.BM25, man.Dense, lman.Counts, lman.BM25)
	}
	rep, err := verifyIndex(ctx, loc)
	if err != nil || !rep.OK() || rep.Passages != lman.Counts.Passages {
		t.Errorf("verify after resume: %+v, %v", rep, err)
	}
	cs := collections()
	for name, want := range map[string]bool{"t-g-" + genNum(first.Generation): true, "t-g-" + genNum(sum.Generation): true, "t-g-000099": false} {
		if strings.Contains(cs, `"`+name+`"`) != want {
			t.Errorf("collection %s present = %v, want %v: %s", name, !want, want, cs)
		}
	}
	if n := strings.Count(cs, `"t-g-`); n != 2 {
		t.Errorf("%d collections after the resumed commit, want the live one and the previous: %s", n, cs)
	}

	// A record of several chunks (a large document table) comes back whole.
	l, _ := ParseLocation(loc)
	e, err := connectTestEngine(ctx, l.Qdrant, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	big := []byte(strings.Repeat("document table bytes ", 60000)) // 1.26 MB: three chunks
	if err := e.WriteRecord(ctx, backend.Gen{Name: manifest.GenerationName(sum.Generation)}, 9, big); err != nil {
		t.Fatal(err)
	}
	if got, err := e.ReadRecord(ctx, e.Collection(manifest.GenerationName(sum.Generation)), 9); err != nil || string(got) != string(big) {
		t.Errorf("record of %d bytes read back as %d bytes, %v", len(big), len(got), err)
	}
}

func genNum(n int) string { return strings.TrimPrefix(manifest.GenerationName(n), "g-") }

// connectTestEngine connects to the cluster of q for vectors of dim, to read and write its
// records directly.
func connectTestEngine(ctx context.Context, q *QdrantLocation, dim int) (*qdrant.Engine, error) {
	return qdrant.New(ctx, qdrant.Options{Hosts: q.Hosts, REST: q.REST, Index: q.Name, Dim: dim})
}
