package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rewardd/rewardd/internal/servertest"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// brokenRunner is a sandbox whose fork server dies on every job, as one
// did on a file name with a NUL before Go refused it: its error carries
// the helper's traceback.
type brokenRunner struct{}

var errForkServer = errors.New("sandbox failed twice: fork server: EOF (Traceback (most recent call last):\n  File \"<string>\", line 770, in put_files\nValueError: embedded null byte\nsandbox: the zygote is gone)")

func (brokenRunner) Run(context.Context, sandbox.Job) (sandbox.Result, error) {
	return sandbox.Result{}, errForkServer
}

func (brokenRunner) Compile(context.Context, sandbox.CompileJob) (*sandbox.Build, error) {
	return nil, errForkServer
}

func (brokenRunner) Supports(string) error { return nil }

// TestRunCodeSandboxErrorIsOurs: when the sandbox fails, /run_code answers
// SandboxError with a sentence of rewardd's, nothing of the sandbox's
// insides, and the server logs what the sandbox said, once per failure;
// a sandbox that could not start is answered so, and logged by whoever
// started it (the start log), not per request.
func TestRunCodeSandboxErrorIsOurs(t *testing.T) {
	cfg, err := config.Load("t.yml", []byte("functions:\n  - name: acc\n    kind: exact_match\ninline:\n  kinds: [code_exec]\n"), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		sb       codeexec.Sandbox
		language string
		message  string
		// detail is what the sandbox said, logged this many times.
		detail string
		logged int
	}{
		{"run fails", func() (codeexec.Runner, error) { return brokenRunner{}, nil }, "python",
			"the sandbox could not run the program (the server's log says why): try again", "embedded null byte", 1},
		{"compile fails", func() (codeexec.Runner, error) { return brokenRunner{}, nil }, "cpp",
			"the sandbox could not run the program (the server's log says why): try again", "embedded null byte", 1},
		{"no sandbox", func() (codeexec.Runner, error) { return nil, errors.New("sandbox: /nonexistent/python3: no such file") }, "python",
			"code execution is off on this server: its sandbox could not start (its start log says why)", "/nonexistent/python3", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			srv := servertest.Start(t, server.Options{Config: cfg, Workers: 2, Log: zap.New(core), RunCode: codeexec.NewExecutor(c.sb)})
			body := `{"code": "print(1)", "language": "` + c.language + `", "run_timeout": 1}`
			code, out := post(t, srv.HTTPURL+"/run_code", []byte(body))
			var a struct{ Status, Message string }
			if err := json.Unmarshal(out, &a); err != nil || code != http.StatusOK || a.Status != "SandboxError" || a.Message != c.message {
				t.Errorf("HTTP %d %s, want 200 SandboxError %q", code, out, c.message)
			}
			var said []string
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.ContextMap()["error"]), c.detail) {
					said = append(said, e.Message)
				}
			}
			if len(said) != c.logged {
				t.Errorf("the log says what the sandbox said %d times (%q), want %d", len(said), said, c.logged)
			}
		})
	}
}
