package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// FuzzJSONEndpoints posts any body to every HTTP scoring endpoint: the
// answer is a 200 or a 4xx with a JSON body, never a 5xx or a panic.
// /run_code is allowed by the config, and runs nothing: the process has no
// sandbox (SandboxError).
func FuzzJSONEndpoints(f *testing.F) {
	for _, s := range []string{
		`{"rollouts": [{"completion": "<answer>4</answer>", "fields": {"answer": "4"}}]}`,
		`{"rollouts": [{"completion": "x"}], "inline": [{"name": "r", "kind": "regex", "params": {"pattern": "("}}]}`,
		`{"rollouts": [{"group": "g", "completion": "x"}], "aggregation": {"mode": "AGGREGATION_MODE_NORMALIZE_THEN_SUM"}}`,
		`{"query": ["ab"], "prompts": ["a"], "labels": ["b"]}`,
		`{"query": "ab"}`,
		`{"response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "4"}]}]}, "answer": "4"}`,
		`{"rollouts": [` + "\xff" + `]}`,
		`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`,
		`{"rollouts": [{"fields": {"a": {"b": {"c": [1, [2, [3]]]}}}}]}`,
		`{"prompts": ["q"], "promptFields": [{"name": "answer", "values": ["4"]}], "rolloutFields": [{"name": "t", "values": [1, null]}],
		  "rollouts": [{"completion": "<answer>4</answer>"}, {"completion": "5", "promptIndex": 0}]}`,
		`{"prompts": ["q"], "rollouts": [{"completion": "x", "promptIndex": 3}]}`,
		`{"code": "print(1)", "language": "python", "stdin": "", "compile_timeout": 10, "run_timeout": 1, "memory_limit_MB": 128, "files": {"a/b": "eA=="}, "fetch_files": []}`,
		`{"code": "int main() {}", "language": "cpp", "run_timeout": 1e308, "memory_limit_MB": -1, "files": {"../x": null}}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(2))
		f.Add([]byte(s), uint8(3))
	}
	cfg, err := config.Load("fuzz.yml", []byte(testConfig+"inline:\n  kinds: [code_exec]\n"), builtin.Registry())
	if err != nil {
		f.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Workers: 2})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	paths := []string{"/v1/score", "/get_reward", "/verify", "/run_code"}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		path := paths[int(which)%len(paths)]
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		if rec.Code >= 500 || rec.Code != http.StatusOK && rec.Code < 400 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("POST %s %q: %d with a body that is not JSON: %q", path, body, rec.Code, rec.Body)
		}
	})
}
