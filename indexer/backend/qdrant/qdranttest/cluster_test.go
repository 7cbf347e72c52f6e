package qdranttest

import (
	"context"
	"fmt"
	"testing"
)

// TestStartKillRestart forms a 3-peer cluster, kills one peer and restarts it: every peer
// answers /readyz and the restarted one sees all three again.
func TestStartKillRestart(t *testing.T) {
	c := Start(t, 3)
	if len(c.Addrs()) != 3 {
		t.Fatalf("addrs %v", c.Addrs())
	}
	c.Kill(1)
	code, _, err := get(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/readyz", c.Peers[1].HTTP))
	if err == nil {
		t.Fatalf("killed peer still answers (%d)", code)
	}
	c.Restart(t, 1)
	for i := range c.Peers {
		if err := c.waitReady(i, 3, StartupTimeout); err != nil {
			t.Fatal(err)
		}
	}
}
