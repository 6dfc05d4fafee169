package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// unsupportedLanguage is /run_code's refusal of a language this server does
// not run: SandboxFusion's own answer to a language it does not know
// (FastAPI's 422, a pydantic literal_error on body.language), its message
// saying why (a language SandboxFusion has and rewardd lacks; a toolchain
// this machine lacks, with the package to install) and which languages
// the server runs.
type unsupportedLanguage struct {
	input, why string
	// runs are the SandboxFusion names of the languages the server runs.
	runs []string
}

func (u *unsupportedLanguage) Error() string {
	return fmt.Sprintf("request body: language %q: %s; this server runs %s", u.input, u.why, strings.Join(u.runs, ", "))
}

// Unwrap makes it a bad request to the metrics and the logs.
func (u *unsupportedLanguage) Unwrap() error {
	return &RequestError{Code: codes.InvalidArgument, Msg: u.Error()}
}

// writeHTTP writes SandboxFusion's answer.
func (u *unsupportedLanguage) writeHTTP(w http.ResponseWriter) {
	quoted := make([]string, len(u.runs))
	for i, n := range u.runs {
		quoted[i] = "'" + n + "'"
	}
	expected := strings.Join(quoted, ", ")
	if n := len(quoted); n > 1 {
		expected = strings.Join(quoted[:n-1], ", ") + " or " + quoted[n-1]
	}
	body, _ := json.Marshal(map[string]any{"detail": []map[string]any{{
		"type": "literal_error", "loc": []string{"body", "language"},
		"msg":   fmt.Sprintf("Input should be %s (rewardd: %s)", expected, u.why),
		"input": u.input, "ctx": map[string]string{"expected": expected},
	}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	w.Write(body)
}

// httpAnswer is an error whose HTTP answer is its own, not its status's.
type httpAnswer interface {
	error
	writeHTTP(http.ResponseWriter)
}

// runCodeLanguage finds the language of a /run_code request among those
// the server runs (runner nil: the sandbox could not start, which the
// answer says later), by rewardd's names or SandboxFusion's.
func runCodeLanguage(name string, runner codeexec.Runner) (*sandbox.Language, error) {
	var runs []string
	for _, l := range sandbox.Languages() {
		if runner == nil || runner.Supports(l.Name) == nil {
			runs = append(runs, l.SandboxFusion)
		}
	}
	lang, err := sandbox.LookupLanguage(name)
	if err != nil {
		why := "not a language SandboxFusion or rewardd knows"
		if reason, ok := sandbox.SandboxFusionOnly[strings.ToLower(name)]; ok {
			why = "rewardd does not run it: " + reason
		}
		return nil, &unsupportedLanguage{input: name, why: why, runs: runs}
	}
	if runner != nil {
		if err := runner.Supports(lang.Name); err != nil {
			why := "this server does not run it"
			if err := lang.Available(); err != nil {
				why = err.Error()
			}
			return nil, &unsupportedLanguage{input: name, why: why, runs: runs}
		}
	}
	return lang, nil
}
