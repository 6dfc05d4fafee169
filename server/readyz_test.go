package server_test

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// probingLanguages is a sandbox's languages as a test sets them.
type probingLanguages struct {
	mu               sync.Mutex
	running, probing []string
}

func (l *probingLanguages) Languages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

func (l *probingLanguages) Probing() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.probing
}

func (l *probingLanguages) set(running, probing []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running, l.probing = running, probing
}

// TestReadyzLanguages: GET /readyz lists the languages the sandbox runs,
// and those it is still probing as long as there are some, as they are at
// each request.
func TestReadyzLanguages(t *testing.T) {
	cfg, err := config.Load("test.yml", []byte(testConfig), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	langs := &probingLanguages{}
	langs.set([]string{"cpp", "python"}, []string{"rust", "scala"})
	srv, err := server.New(server.Options{Config: cfg, Workers: 2, Languages: langs})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(nil, lis) }()
	defer func() {
		srv.Shutdown(t.Context())
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + lis.Addr().String() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	want := "ready\ncode_exec languages: cpp, python\ncode_exec languages being probed: rust, scala\n"
	if code, body := readyz(); code != http.StatusOK || body != want {
		t.Errorf("GET /readyz while probing: %d %q, want 200 %q", code, body, want)
	}
	langs.set([]string{"cpp", "python", "rust"}, nil)
	want = "ready\ncode_exec languages: cpp, python, rust\n"
	if code, body := readyz(); code != http.StatusOK || body != want {
		t.Errorf("GET /readyz once probed: %d %q, want 200 %q", code, body, want)
	}
}
