package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestRunCodeFetchFiles: POST /run_code's files and fetch_files on a real
// server, in python (the zygote), C++ (compiled, exec'd) and bash (exec'd,
// not compiled): a program reads a file the request sent into a
// subdirectory and writes one the answer sends back, in base64, whether
// the run succeeded, failed or ran out of time; a path it did not write is
// left out of files, as SandboxFusion leaves it out. What a program may
// leave to steer the read elsewhere (a symbolic link to /etc/shadow, one
// up out of the work dir, a fifo, a directory) is left out and named
// in the message, and a 1 GiB sparse file cannot be made; what a request may ask (a path up out of the work
// dir, an absolute one, 10,000 paths) is a 400 naming it. No fork server
// restarts.
func TestRunCodeFetchFiles(t *testing.T) {
	srv := startCodeServer(t, languagesConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	restarts := metric(t, srv, "rewardd_sandbox_restarts_total")
	call := func(t *testing.T, fields map[string]any) (int, *sandboxFusionAnswer, string) {
		t.Helper()
		body, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		return postRunCode(t, url, body)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	files := map[string]any{"in/deep/data.txt": b64("hello")}

	for _, c := range []struct {
		language, code string
		runTimeout     float64
		status, run    string
	}{
		{"python", `print(open("result.txt", "w").write(open("in/deep/data.txt").read() + " seen\n"))`, 10, "Success", "Finished"},
		{"python", "open('result.txt', 'w').write(open('in/deep/data.txt').read() + ' seen\\n')\nraise SystemExit(3)", 10, "Failed", "Finished"},
		{"python", "f = open('result.txt', 'w'); f.write(open('in/deep/data.txt').read() + ' seen\\n'); f.close()\nwhile True: pass", 1, "Failed", "TimeLimitExceeded"},
		{"cpp", "#include <fstream>\n#include <string>\nint main() { std::ifstream in(\"in/deep/data.txt\"); std::string s; in >> s; std::ofstream(\"result.txt\") << s << \" seen\\n\"; }\n", 10, "Success", "Finished"},
		{"cpp", "#include <fstream>\n#include <string>\nint main() { std::ifstream in(\"in/deep/data.txt\"); std::string s; in >> s; std::ofstream(\"result.txt\") << s << \" seen\\n\"; return 3; }\n", 10, "Failed", "Finished"},
		{"bash", `echo "$(cat in/deep/data.txt) seen" > result.txt`, 10, "Success", "Finished"},
		{"bash", `echo "$(cat in/deep/data.txt) seen" > result.txt; sleep 100`, 1, "Failed", "TimeLimitExceeded"},
	} {
		name := fmt.Sprintf("%s %s %s", c.language, c.status, c.run)
		t.Run(name, func(t *testing.T) {
			requireLanguage(t, c.language)
			code, a, out := call(t, map[string]any{"code": c.code, "language": c.language, "run_timeout": c.runTimeout,
				"files": files, "fetch_files": []string{"result.txt", "missing.txt", "in/deep/data.txt"}})
			if code != http.StatusOK || a == nil || a.Status != c.status || a.RunResult == nil || a.RunResult.Status != c.run {
				t.Fatalf("HTTP %d %.500s, want %s with run_result %s", code, out, c.status, c.run)
			}
			want := map[string]any{"result.txt": b64("hello seen\n"), "in/deep/data.txt": b64("hello")}
			if fmt.Sprint(a.Files) != fmt.Sprint(want) {
				t.Errorf("files %v, want %v (missing.txt left out)", a.Files, want)
			}
			if strings.Contains(a.Message, "missing.txt") {
				t.Errorf("message %q names missing.txt, which SandboxFusion leaves out silently", a.Message)
			}
		})
	}

	hostile := map[string]string{
		"python": "import os\nos.symlink('/etc/shadow', 'shadow')\nos.symlink('../../../../../etc/passwd', 'up')\nos.symlink('/etc', 'etc')\n" +
			"os.mkfifo('fifo')\nos.mkdir('dir')\nopen('ok.txt', 'w').write('ok')\n",
		"bash": "ln -s /etc/shadow shadow && ln -s ../../../../../etc/passwd up && ln -s /etc etc && mkfifo fifo && mkdir dir && printf ok > ok.txt",
	}
	// A 1 GiB sparse file: the program cannot make one (a file may not
	// grow past the output limit, RLIMIT_FSIZE); it fails, and the empty
	// file it made comes back. (fetchFiles leaves out a sparse file
	// bigger than it reads without reading it: TestFetchFiles.)
	sparse := map[string]string{
		"python": "open('sparse', 'wb').truncate(1 << 30)",
		"bash":   "truncate -s 1G sparse",
	}
	for _, language := range []string{"python", "bash"} {
		t.Run(language+" hostile", func(t *testing.T) {
			requireLanguage(t, language)
			code, a, out := call(t, map[string]any{"code": hostile[language], "language": language, "run_timeout": 10,
				"fetch_files": []string{"shadow", "up", "etc/passwd", "fifo", "dir", "ok.txt"}})
			if code != http.StatusOK || a == nil || a.Status != "Success" {
				t.Fatalf("HTTP %d %.500s, want Success", code, out)
			}
			if fmt.Sprint(a.Files) != fmt.Sprint(map[string]any{"ok.txt": b64("ok")}) {
				t.Errorf("files %v, want ok.txt only", a.Files)
			}
			for name, why := range map[string]string{"shadow": "not read", "up": "not read", "etc/passwd": "not read", "fifo": "not a regular file (a fifo)", "dir": "not a regular file (a directory)"} {
				if !strings.Contains(a.Message, fmt.Sprintf("%q is left out: %s", name, why)) {
					t.Errorf("message %q does not say %s is left out (%s)", a.Message, name, why)
				}
			}
			code, a, out = call(t, map[string]any{"code": sparse[language], "language": language, "run_timeout": 10, "fetch_files": []string{"sparse"}})
			if code != http.StatusOK || a == nil || a.Status != "Failed" || fmt.Sprint(a.Files) != fmt.Sprint(map[string]any{"sparse": ""}) {
				t.Errorf("a 1 GiB sparse file: HTTP %d %.500s, want Failed with the empty file it made", code, out)
			}
		})
	}

	many := make([]string, 10_000)
	for k := range many {
		many[k] = fmt.Sprintf("f%d", k)
	}
	for _, c := range []struct {
		fetch []string
		want  string
	}{
		{[]string{"ok.txt", "../../etc/passwd"}, `fetch_files[1]: file name \"../../etc/passwd\": want a plain relative path`},
		{[]string{"/etc/passwd"}, `fetch_files[0]: file name \"/etc/passwd\": want a relative path`},
		{[]string{"a\x00b"}, "a NUL byte is in no file's name"},
		{many, fmt.Sprintf("fetch_files: 10000 paths, at most %d", sandbox.MaxFetchFiles)},
	} {
		code, _, out := call(t, map[string]any{"code": "print(1)", "language": "python", "fetch_files": c.fetch})
		if code != http.StatusBadRequest || !strings.Contains(out, c.want) {
			t.Errorf("fetch_files %.60q: HTTP %d %.300s, want 400 with %q", c.fetch, code, out, c.want)
		}
	}
	// files: a name or a content that is wrong is a 400 naming the file.
	for _, c := range []struct {
		files map[string]any
		want  string
	}{
		{map[string]any{"in/a.txt": "%%%"}, `files[\"in/a.txt\"]: not base64`},
		{map[string]any{"in//a.txt": ""}, `file name \"in//a.txt\": want a plain relative path`},
		{map[string]any{"/tmp/a.txt": ""}, `file name \"/tmp/a.txt\": want a relative path`},
	} {
		code, _, out := call(t, map[string]any{"code": "print(1)", "language": "python", "files": c.files})
		if code != http.StatusBadRequest || !strings.Contains(out, c.want) {
			t.Errorf("files %v: HTTP %d %.300s, want 400 with %q", c.files, code, out, c.want)
		}
	}
	if got := metric(t, srv, "rewardd_sandbox_restarts_total"); got != restarts {
		t.Errorf("rewardd_sandbox_restarts_total went from %s to %s", restarts, got)
	}
}

// TestRunCodeFetchFilesUnsafe: without the sandbox (--unsafe-no-sandbox)
// fetch_files reads the same files, from the unconfined servers' work
// dirs, in python and C++.
func TestRunCodeFetchFilesUnsafe(t *testing.T) {
	srv := startServer(t, "--config", writeConfig(t, languagesConfig), "--unsafe-no-sandbox", "--workers", "1")
	defer srv.stop(t)
	url := "http://" + srv.httpAddr + "/run_code"
	for language, code := range map[string]string{
		"python": "import os\nos.symlink('/etc/passwd', 'up')\nopen('out/r.txt', 'w').write(open('in.txt').read() + '!')",
		"cpp":    "#include <fstream>\n#include <unistd.h>\nint main() { symlink(\"/etc/passwd\", \"up\"); std::ofstream(\"out/r.txt\") << \"hi!\"; }\n",
	} {
		requireLanguage(t, language)
		body, err := json.Marshal(map[string]any{"code": code, "language": language, "files": map[string]any{"in.txt": "aGk=", "out/keep": ""},
			"fetch_files": []string{"out/r.txt", "up"}})
		if err != nil {
			t.Fatal(err)
		}
		code, a, out := postRunCode(t, url, body)
		if code != http.StatusOK || a == nil || a.Status != "Success" || fmt.Sprint(a.Files) != fmt.Sprint(map[string]any{"out/r.txt": "aGkh"}) ||
			!strings.Contains(a.Message, `"up" is left out: not read`) {
			t.Errorf("%s: HTTP %d %.500s, want Success with out/r.txt (\"hi!\") and up left out", language, code, out)
		}
	}
}

// requireLanguage skips a test whose language this machine cannot run.
func requireLanguage(t *testing.T, name string) {
	t.Helper()
	l, err := sandbox.LookupLanguage(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Available(); err != nil {
		t.Skipf("%s is not installed here: %v", name, err)
	}
}
