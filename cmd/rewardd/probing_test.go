package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// readyLanguages reads GET /readyz's languages: those the sandbox runs
// and those it is still probing.
func readyLanguages(t *testing.T, srv *process) (running, probing []string) {
	t.Helper()
	code, body := httpGet(t, "http://"+srv.httpAddr+"/readyz")
	if code != http.StatusOK {
		t.Fatalf("GET /readyz: %d %q, want 200", code, body)
	}
	for _, line := range strings.Split(body, "\n") {
		if list, ok := strings.CutPrefix(line, "code_exec languages: "); ok {
			running = strings.Split(list, ", ")
		}
		if list, ok := strings.CutPrefix(line, "code_exec languages being probed: "); ok {
			probing = strings.Split(list, ", ")
		}
	}
	if running == nil {
		t.Fatalf("GET /readyz: %q lists no code_exec languages", body)
	}
	return running, probing
}

// probedLanguages waits until GET /readyz lists no language as being
// probed, and returns those it lists as running.
func probedLanguages(t *testing.T, srv *process) []string {
	t.Helper()
	// A bound on a hang, not a timing: every installed language's probe,
	// Scala's and Kotlin's compiles among them, on a loaded machine.
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		running, probing := readyLanguages(t, srv)
		if len(probing) == 0 {
			return running
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz still lists %v as being probed after five minutes", probing)
		}
	}
}

// TestServeProbesTheConfigsLanguagesFirst: `rewardd serve` serves once
// the languages its config's code_exec functions use are probed (python,
// and C++ here): GET /readyz lists them as running from the start, every
// other installed language as running or being probed, and, once their
// probes have ended, every installed language as running.
func TestServeProbesTheConfigsLanguagesFirst(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, "cpp")
	srv := startServer(t, "--config", writeConfig(t, codeConfig+`  - name: cpp
    kind: code_exec
    language: cpp
    test_style: io
`), "--workers", "2")
	var installed []string
	for _, l := range sandbox.Languages() {
		if l.Available() == nil {
			installed = append(installed, l.Name)
		}
	}
	slices.Sort(installed)
	running, probing := readyLanguages(t, srv)
	t.Logf("at serving: running %v, being probed %v", running, probing)
	for _, name := range []string{"python", "cpp"} {
		if !slices.Contains(running, name) {
			t.Errorf("at serving, GET /readyz lists %v as running, without %s, which a function of the config uses", running, name)
		}
	}
	for _, name := range installed {
		if !slices.Contains(running, name) && !slices.Contains(probing, name) {
			t.Errorf("at serving, GET /readyz lists %s, installed, neither as running (%v) nor as being probed (%v)", name, running, probing)
		}
	}
	if running := probedLanguages(t, srv); !slices.Equal(running, installed) {
		t.Errorf("once probed, GET /readyz lists %v as running, want every installed language: %v", running, installed)
	}
	if !strings.Contains(srv.logText(), "code_exec language probed") {
		t.Errorf("the log does not say which languages' probes ended:\n%s", srv.logText())
	}
}
