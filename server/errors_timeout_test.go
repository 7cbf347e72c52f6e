package server

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A client that stalls its body gets a 408 when the read timeout ends it, not silence: the
// write deadline had run out with the read's, and the log recorded a 400.
func TestStalledBodyIs408(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ReadTimeout, ts.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	ts.Start()
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\":")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(b.String(), "did not arrive in time") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("stalled body: %d %q %v", resp.StatusCode, b.String(), resp.Header)
	}
}
