package testnet

import (
	"io"
	"net"
	"net/http"
	"testing"
)

func TestServerIsLoopbackOnly(t *testing.T) {
	srv := Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	host, _, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("listening on %q (%v), want 127.0.0.1", host, err)
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
}
