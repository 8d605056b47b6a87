// Package testnet holds network helpers for tests: servers that listen on
// 127.0.0.1 only, so no test is reachable from, or reaches, another host.
package testnet

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Server starts an httptest server for h bound to 127.0.0.1 (httptest's
// default may fall back to [::1]) and closes it when the test ends.
func Server(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
