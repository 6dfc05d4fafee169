// Package rewardd_test runs the shell blocks of the repository's READMEs, so
// that what they tell a user to type keeps working.
package rewardd_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A block is a ```sh fence of a README. The HTML comment right before it,
// <!-- readme-test: … -->, says how it runs:
//
//	skip="why"                   not run (it needs a trainer, a GPU, a cluster)
//	background ready="cmd" [until="heading"]
//	                             run in the background until cmd succeeds, and
//	                             stopped before the first block under a heading
//	                             that starts with the given text, else at the
//	                             end; it must still run when it is stopped
//	exit="N"                     its last command exits N
//
// Every other block runs as it is, in order, in one bash session with
// errexit and pipefail, from the repository's root; a command a block
// starts with & must still run at the end, or have ended with status 0.
// README.md's ```python blocks are parts of a file the tests run:
// <!-- readme-test: file="path" why="…" --> names it, and every line of the
// block is a line of that file, in order (TestREADMEBlocksAccounted).
type block struct {
	file    string
	line    int
	heading string
	text    string
	attrs   map[string]string
}

var (
	fenceOpen = regexp.MustCompile("^( *)```sh *$")
	directive = regexp.MustCompile(`^ *<!-- readme-test: (.*) -->$`)
	attr      = regexp.MustCompile(`([a-z]+)(?:="([^"]*)")?`)
)

func parseBlocks(t *testing.T, file string) []block {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []block
	heading := ""
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") {
			heading = strings.TrimPrefix(lines[i], "## ")
		}
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := block{file: file, line: i + 1, heading: heading, attrs: map[string]string{}}
		if i > 0 {
			if d := directive.FindStringSubmatch(lines[i-1]); d != nil {
				for _, a := range attr.FindAllStringSubmatch(d[1], -1) {
					b.attrs[a[1]] = a[2]
				}
			}
		}
		var text []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			text = append(text, strings.TrimPrefix(lines[i], m[1]))
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: the block is not closed", file, b.line)
		}
		b.text = strings.Join(text, "\n")
		blocks = append(blocks, b)
	}
	return blocks
}

// script is the bash session that runs the blocks.
func script(t *testing.T, blocks []block) string {
	t.Helper()
	var s strings.Builder
	s.WriteString(`set -euo pipefail
__bgs=() __allbgs=()
__stop() { # stops a background block's process group and waits until it is gone; it must still run
  kill -0 -- "-$1" 2>/dev/null || { echo "### a background block (process group $1) ended before it was stopped" >&2; return 1; }
  kill -TERM -- "-$1" 2>/dev/null || return 0
  for _ in $(seq 300); do kill -0 -- "-$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$1" 2>/dev/null || true
}
__stopbg() { # stops a background block before the block named by its until="…"
  local keep=() p
  for p in "${__bgs[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  __bgs=("${keep[@]}")
  __stop "$1"
}
__end() { # the background blocks, then what the blocks started with &: each must still run, or have ended with 0
  local st=$? bad=0 pg j
  for pg in "${__bgs[@]}"; do __stop "$pg" || bad=1; done
  for j in $(jobs -p); do
    if [[ " ${__allbgs[*]} " == *" $j "* ]]; then wait "$j" 2>/dev/null || true
    elif kill -0 "$j" 2>/dev/null; then kill "$j" 2>/dev/null || true; wait "$j" 2>/dev/null || true
    elif ! wait "$j"; then echo "### a command a block started with & (pid $j) ended with a non-zero status" >&2; bad=1
    fi
  done
  if [ "$st" = 0 ] && [ "$bad" = 1 ]; then exit 1; fi
}
trap __end EXIT
`)
	stops := map[int][]string{} // block index → background process groups to stop before it
	for i, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		for _, pg := range stops[i] {
			fmt.Fprintf(&s, "__stopbg \"$%s\"\n", pg)
		}
		fmt.Fprintf(&s, "echo '### %s' >&2\n", where)
		switch {
		case hasKey(b.attrs, "skip"):
			fmt.Fprintf(&s, "echo %s >&2\n", shellQuote("### "+where+": not run: "+b.attrs["skip"]))
		case hasKey(b.attrs, "background"):
			ready, until := b.attrs["ready"], b.attrs["until"]
			if ready == "" {
				t.Fatalf("%s: a background block needs ready=\"…\"", where)
			}
			pg := fmt.Sprintf("__bg%d", b.line)
			if hasKey(b.attrs, "until") {
				stopAt := -1
				for j := i + 1; j < len(blocks); j++ {
					if strings.HasPrefix(blocks[j].heading, until) {
						stopAt = j
						break
					}
				}
				if stopAt < 0 {
					t.Fatalf("%s: no block under a heading %q after it", where, until)
				}
				stops[stopAt] = append(stops[stopAt], pg)
			} // else __end stops it
			fmt.Fprintf(&s, "cat > \"$__dir/%s.sh\" <<'__README_BLOCK__'\n%s\n__README_BLOCK__\n", pg, b.text)
			fmt.Fprintf(&s, "setsid bash -e \"$__dir/%s.sh\" > \"$__dir/%s.log\" 2>&1 &\n%s=$!\n__bgs+=(\"$%s\")\n__allbgs+=(\"$%s\")\n", pg, pg, pg, pg, pg)
			fmt.Fprintf(&s, `for _ in $(seq 600); do
  if %s >/dev/null 2>&1; then break; fi
  kill -0 "$%s" 2>/dev/null || { echo '%s: ended before it was ready:' >&2; cat "$__dir/%s.log" >&2; exit 1; }
  sleep 0.2
done
%s >/dev/null 2>&1 || { echo '%s: not ready after 2 minutes:' >&2; cat "$__dir/%s.log" >&2; exit 1; }
`, ready, pg, where, pg, ready, where, pg)
		case b.attrs["exit"] != "":
			fmt.Fprintf(&s, "set +e\n%s\n__st=$?\nset -e\n", b.text)
			fmt.Fprintf(&s, "[ \"$__st\" = %q ] || { echo \"%s: exit $__st, want %s\" >&2; exit 1; }\n", b.attrs["exit"], where, b.attrs["exit"])
		default:
			s.WriteString(b.text + "\n")
		}
	}
	s.WriteString("echo '### all blocks ran' >&2\n")
	return s.String()
}

// shellQuote quotes s as one bash word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// TestREADME runs every sh block of README.md and clients/python/README.md
// as a user would type them, from the repository's root, with a fresh $HOME
// (Go's module and build caches kept, so nothing is downloaded), no rewardd
// already on PATH, and, where it can (as root), in a network namespace of
// its own, so that the ports the README names are free and nothing is
// fetched. The blocks must write nothing inside the repository but its
// ignored build outputs.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's blocks build and start servers")
	}
	const gsm8k = "../shared/data/gsm8k_test.jsonl"
	for _, need := range []struct{ path, why string }{
		{gsm8k, "the GSM8K data README.md's check samples are made from (CI has ../shared beside the repo)"},
	} {
		if _, err := os.Stat(need.path); err != nil {
			t.Skipf("%s is missing: %s", need.path, need.why)
		}
	}
	for _, tool := range []string{"bash", "curl", "make", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs what the README needs): %v", tool, err)
		}
	}
	for _, file := range []string{"README.md", "clients/python/README.md"} {
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			home := t.TempDir()
			data, err := os.ReadFile(gsm8k)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "gsm8k_test.jsonl"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			runBlocks(t, parseBlocks(t, file), home)
		})
	}
}

func runBlocks(t *testing.T, blocks []block, home string) {
	before := gitStatus(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "session.sh")
	if err := os.WriteFile(path, []byte(script(t, blocks)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args := []string{"bash", path}
	if os.Geteuid() == 0 && exec.Command("unshare", "--net", "true").Run() == nil {
		args = []string{"unshare", "--net", "bash", "-c", `ip link set lo up && exec bash "$0"`, path}
	} else {
		t.Log("not in a network namespace of its own (not root, or no unshare): the ports README.md names must be free")
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = sessionEnv(t, home, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 30 * time.Second // for the output of anything the session failed to stop
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	// What the blocks left running in the background (rewardd serve &).
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		t.Fatalf("the blocks of %s failed: %v; the session's output:\n%s", blocks[0].file, err, out.String())
	}
	t.Logf("the session's output:\n%s", out.String())
	if after := gitStatus(t); after != before {
		t.Errorf("the blocks of %s changed the repository:\nbefore:\n%s\nafter:\n%s", blocks[0].file, before, after)
	}
}

// sessionEnv is the environment of the session: this one's, with HOME (and
// so GOPATH) fresh, Go's caches kept, no REWARDD_* variables, and no
// directory holding a rewardd on PATH but Go's own.
func sessionEnv(t *testing.T, home, dir string) []string {
	t.Helper()
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	var env []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "REWARDD_"), name == "HOME", name == "GOPATH", name == "GOBIN", name == "GOCACHE", name == "GOMODCACHE":
		case name == "PATH":
			var keep []string
			for _, d := range filepath.SplitList(value) {
				if _, err := os.Stat(filepath.Join(d, "rewardd")); err != nil && d != "" {
					keep = append(keep, d)
				}
			}
			keep = append(keep, filepath.Join(goEnv("GOROOT"), "bin"))
			env = append(env, "PATH="+strings.Join(keep, string(os.PathListSeparator)))
		default:
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "GOCACHE="+goEnv("GOCACHE"), "GOMODCACHE="+goEnv("GOMODCACHE"), "__dir="+dir)
}

func gitStatus(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Skipf("not a git checkout, so what the blocks write cannot be told: %v", err)
	}
	return string(out)
}

var (
	anyFence = regexp.MustCompile("^( *)```([A-Za-z0-9_-]*) *$")
	attrs    = map[string]bool{"skip": true, "background": true, "ready": true, "until": true, "exit": true, "file": true, "why": true}
)

// TestREADMEBlocksAccounted: every shell block of README.md and
// clients/python/README.md is a ```sh block, so that TestREADME runs it,
// or says with skip="why" why it is not run; a directive names only the
// attributes TestREADME knows; and each ```python block of README.md is a
// part of the file its file="…" names, which a test runs (why="…" says
// which), its lines that file's, in order.
func TestREADMEBlocksAccounted(t *testing.T) {
	for _, file := range []string{"README.md", "clients/python/README.md"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			m := anyFence.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			where, lang := fmt.Sprintf("%s:%d", file, i+1), m[2]
			d := map[string]string{}
			if i > 0 {
				if dm := directive.FindStringSubmatch(lines[i-1]); dm != nil {
					for _, a := range attr.FindAllStringSubmatch(dm[1], -1) {
						if !attrs[a[1]] {
							t.Errorf("%s: unknown readme-test attribute %q", where, a[1])
						}
						d[a[1]] = a[2]
					}
				}
			}
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			}
			body := lines[start:i]
			switch {
			case lang == "bash" || lang == "shell" || lang == "console" || lang == "zsh" || lang == "shell-session":
				t.Errorf("%s: a ```%s block: write ```sh, so that TestREADME runs it (or marks it skip=\"why\")", where, lang)
			case lang == "sh" && hasKey(d, "skip") && strings.TrimSpace(d["skip"]) == "":
				t.Errorf("%s: skip needs the reason the block is not run: skip=\"why\"", where)
			case lang == "python" && file == "README.md":
				checkPartOf(t, where, d, body)
			}
		}
	}
}

// checkPartOf checks that the lines of a README block are lines of the file
// its directive names, in order.
func checkPartOf(t *testing.T, where string, d map[string]string, body []string) {
	t.Helper()
	if d["file"] == "" || strings.TrimSpace(d["why"]) == "" {
		t.Errorf(`%s: a python block needs <!-- readme-test: file="the file it is part of" why="how a test runs that file" -->`, where)
		return
	}
	data, err := os.ReadFile(d["file"])
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	have := strings.Split(string(data), "\n")
	at := 0
	for _, line := range body {
		if strings.TrimSpace(line) == "" {
			continue
		}
		for at < len(have) && have[at] != line {
			at++
		}
		if at == len(have) {
			t.Errorf("%s: %q is not a line of %s after the block's lines before it", where, line, d["file"])
			return
		}
		at++
	}
}
