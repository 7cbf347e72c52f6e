package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kairos-rag/kairos/rerank/live"
)

// A server over a live index: load it, then serve. kairos serve does the same with the live
// index of its --index (live.Opener) and an http.Server with timeouts and graceful shutdown.
func ExampleServer() {
	passages, err := readSciFact(100)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := New(Options{
		// kairos serve passes live.Opener(location, options), the real index's.
		Index:  live.New(func(ctx context.Context) (live.Engine, error) { return newFakeEngine(passages), nil }, live.Options{}),
		APIKey: "s3cret",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if err := s.Reload(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(s)
	defer ts.Close()

	req, _ := http.NewRequest("POST", ts.URL+"/v1/search",
		strings.NewReader(`{"text": "cerebral white matter diffusion tensor newborn", "k": 1}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var out SearchResponse
	json.NewDecoder(resp.Body).Decode(&out)
	hit := out.Results[0].Hits[0]
	fmt.Println(resp.StatusCode, hit.Rank, hit.PassageID, hit.Title)
	// Output:
	// 200 1 4983#0 Microstructural development of human newborn cerebral white matter assessed in vivo by diffusion tensor magnetic resonance imaging.
}
