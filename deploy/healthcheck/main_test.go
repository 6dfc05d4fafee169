package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRun checks a real HTTP server: 200 is healthy, anything else or no
// answer is not, and the error says what came back.
func TestRun(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || !ready {
			http.Error(w, "not ready: draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()

	if err := run(context.Background(), []string{srv.URL + "/healthz"}); err != nil {
		t.Errorf("a server answering 200: %v", err)
	}
	ready = false
	err := run(context.Background(), []string{srv.URL + "/healthz"})
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "draining") {
		t.Errorf("a server answering 503: %v; want an error naming the status and the body", err)
	}

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if err := run(context.Background(), []string{"http://" + addr + "/healthz"}); err == nil {
		t.Error("no server: healthy; want an error")
	}
	if err := run(context.Background(), []string{"a", "b"}); err == nil {
		t.Error("two arguments: no error")
	}
}
