package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// The command line's conventions, run against the real binary: those of
// the Go tools users know (go, kubectl, gh).

// TestVersionFlagAndBuildInfo: `rewardd --version` is `rewardd version`,
// and a server's rewardd_build_info metric names the same build: its
// version, commit (as `go version -m` reads it from the binary), Go
// version and regex engine.
func TestVersionFlagAndBuildInfo(t *testing.T) {
	noRaceExitSleep(t)
	flagOut, stderr, exit := runRewardd(t, "", "--version")
	cmdOut, _, _ := runRewardd(t, "", "version")
	if exit != 0 || stderr != "" || flagOut != cmdOut || !strings.Contains(flagOut, runtime.Version()) {
		t.Errorf("rewardd --version: exit %d, %q, stderr %q; want 0 and what rewardd version prints (%q)", exit, flagOut, stderr, cmdOut)
	}

	meta, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	commit := "unknown"
	if m := regexp.MustCompile(`(?m)^\s*build\s+vcs\.revision=(\S+)`).FindSubmatch(meta); m != nil {
		commit = string(m[1])
		if regexp.MustCompile(`(?m)^\s*build\s+vcs\.modified=true`).Match(meta) {
			commit += "-dirty"
		}
	}
	version := "(devel)"
	if m := regexp.MustCompile(`(?m)^\s*mod\s+\S+\s+(\S+)`).FindSubmatch(meta); m != nil {
		version = string(m[1])
	}

	s := startServer(t)
	resp, err := http.Get("http://" + s.httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var series []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "rewardd_build_info{") {
			series = append(series, line)
		}
	}
	want := `rewardd_build_info{commit="` + commit + `",go_version="` + runtime.Version() +
		`",regex_engine="` + rematch.Engine() + `",version="` + version + `"} 1`
	if len(series) != 1 || series[0] != want {
		t.Errorf("/metrics has the build_info series %q, want exactly\n%s", series, want)
	}
	if !strings.Contains(s.logText(), `"version":"`+strings.TrimSpace(cmdOut)+`"`) {
		t.Errorf("the serving log line does not name the version %q:\n%s", cmdOut, s.logText())
	}
	// The engine has a line of its own at startup: a warning when it is
	// not RE2.
	level := "info"
	if !rematch.HasRE2() {
		level = "warn"
	}
	engineLine := regexp.MustCompile(`(?m)^\{"level":"` + level + `".*"msg":"regex engine: [^"]*","regex_engine":"` + regexp.QuoteMeta(rematch.Engine()) + `"\}$`)
	if !engineLine.MatchString(s.logText()) {
		t.Errorf("no %s line naming the regex engine %s at startup:\n%s", level, rematch.Engine(), s.logText())
	}
}

// TestFlagsAfterPositionals: flags go before or after a command's
// arguments; "--" ends the flags.
func TestFlagsAfterPositionals(t *testing.T) {
	noRaceExitSleep(t)
	path := filepath.Join(t.TempDir(), "r.yml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, exit := runRewardd(t, "", "init", path, "--force"); exit != 0 {
		t.Fatalf("rewardd init r.yml --force: exit %d: %s", exit, stderr)
	}
	if text, _ := os.ReadFile(path); string(text) == "old" {
		t.Error("rewardd init r.yml --force did not overwrite r.yml")
	}
	if _, stderr, exit := runRewardd(t, "", "check", path, "--config", path); exit != 2 || !strings.Contains(stderr, `unexpected argument "`+path+`"`) {
		t.Errorf("check with a stray argument before its flags: exit %d, %q; want 2 naming the argument", exit, stderr)
	}
	if _, stderr, exit := runRewardd(t, "", "check", "--", "--strict"); exit != 2 || !strings.Contains(stderr, `unexpected argument "--strict"`) {
		t.Errorf(`check -- --strict: exit %d, %q; want 2: after "--", --strict is an argument`, exit, stderr)
	}
}

// TestFlagErrorsNameDoubleDash: a flag in an error is --name however it
// was typed, a mistyped flag gets the nearest one, and nothing names a
// flag in its one-dash form.
func TestFlagErrorsNameDoubleDash(t *testing.T) {
	oneDash := regexp.MustCompile(`(^|[\s:])-[a-z]`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "-sampels", "x.jsonl"}, "unknown flag --sampels; did you mean --samples?"},
		{[]string{"check", "--sampels", "x.jsonl"}, "unknown flag --sampels; did you mean --samples?"},
		{[]string{"serve", "--wrokers", "2"}, "did you mean --workers?"},
		{[]string{"score", "--zzzzzz"}, "unknown flag --zzzzzz (--help"},
		{[]string{"serve", "--workers"}, "flag --workers needs a value"},
		{[]string{"serve", "-workers=many"}, `invalid value "many" for flag --workers`},
		{[]string{"score", "--progress=maybe"}, `invalid boolean value "maybe" for --progress`},
	} {
		stdout, stderr, exit := runRewardd(t, "", c.args...)
		if exit != 2 || stdout != "" || !strings.Contains(stderr, c.want) || oneDash.MatchString(stderr) {
			t.Errorf("rewardd %s: exit %d, stderr %q; want 2 and %q, no -flag form", strings.Join(c.args, " "), exit, stderr, c.want)
		}
	}
}

// TestDidYouMeanCommand: a mistyped command gets the nearest one; a name
// near none gets the way to the list.
func TestDidYouMeanCommand(t *testing.T) {
	for typed, want := range map[string]string{
		"serv":    `unknown command "serv"; did you mean "serve"?`,
		"chekc":   `unknown command "chekc"; did you mean "check"?`,
		"vresion": `unknown command "vresion"; did you mean "version"?`,
		"scores":  `unknown command "scores"; did you mean "score"?`,
		"deploy":  `unknown command "deploy"; 'rewardd help' lists the commands`,
		"--force": `unknown flag --force before a command`,
	} {
		if _, stderr, exit := runRewardd(t, "", typed); exit != 2 || !strings.Contains(stderr, want) {
			t.Errorf("rewardd %s: exit %d, %q; want 2 and %q", typed, exit, stderr, want)
		}
	}
}

// TestHelpOnEveryCommand: every command of `rewardd --help` answers
// --help, -h and `rewardd help <command>` alike, on stdout with status 0,
// also after other flags.
func TestHelpOnEveryCommand(t *testing.T) {
	noRaceExitSleep(t)
	usage, _, _ := runRewardd(t, "", "--help")
	_, order, _ := usageLines(t, usage)
	for _, name := range order {
		want, _, _ := runRewardd(t, "", name, "-h")
		for _, args := range [][]string{{name, "--help"}, {"help", name}, {name, "--json", "--help"}} {
			if name == "help" && len(args) == 2 && args[0] == "help" {
				continue // rewardd help help is rewardd help
			}
			if args[1] == "--json" && name != "check" {
				continue
			}
			stdout, stderr, exit := runRewardd(t, "", args...)
			if exit != 0 || stderr != "" || stdout != want || !strings.HasPrefix(stdout, "Usage:") && name != "help" {
				t.Errorf("rewardd %s: exit %d, stderr %q, stdout %q; want 0 and what rewardd %s -h prints", strings.Join(args, " "), exit, stderr, stdout, name)
			}
		}
	}
}

// TestExitStatusTable: `rewardd --help` (and so docs/cli.md) lists the exit
// statuses 0, 1 and 2, and the binary exits with each for what the table
// says.
func TestExitStatusTable(t *testing.T) {
	noRaceExitSleep(t)
	usage, _, _ := runRewardd(t, "", "--help")
	_, table, ok := strings.Cut(usage, "\nExit status:\n")
	if !ok {
		t.Fatalf("rewardd --help has no \"Exit status:\" table:\n%s", usage)
	}
	var codes []int
	for _, m := range regexp.MustCompile(`(?m)^  (\d+)  \S`).FindAllStringSubmatch(table, -1) {
		code, _ := strconv.Atoi(m[1])
		codes = append(codes, code)
	}
	if !slices.Equal(codes, []int{0, 1, 2}) {
		t.Fatalf("the exit status table lists %v, want 0, 1, 2:\n%s", codes, table)
	}
	for code, args := range map[int][]string{
		0: {"check"},                          // the embedded default config checks
		1: {"check", "--addr", "127.0.0.1:1"}, // a check fails: no server there
		2: {"check", "--strictt"},             // bad usage
	} {
		if _, stderr, exit := runRewardd(t, "", args...); exit != code {
			t.Errorf("rewardd %s: exit %d, want %d: %s", strings.Join(args, " "), exit, code, stderr)
		}
	}
	bad := writeConfig(t, "functions:\n  - name: x\n    kind: nosuchkind\n")
	if _, stderr, exit := runRewardd(t, "", "check", "--config", bad); exit != 2 {
		t.Errorf("check of a config that does not load: exit %d, want 2: %s", exit, stderr)
	}
}

// TestREADMEUsageErrors: the command-line mistakes docs/cli.md shows print
// what it shows, and exit 2.
func TestREADMEUsageErrors(t *testing.T) {
	readme, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```\n(\\$ rewardd score --in rows.jsonl --out\n.*?)```\n").FindSubmatch(readme)
	if block == nil {
		t.Fatal("docs/cli.md has no block of command-line mistakes starting with `$ rewardd score --in rows.jsonl --out`")
	}
	lines := strings.Split(strings.TrimSuffix(string(block[1]), "\n"), "\n")
	if len(lines)%2 != 0 {
		t.Fatalf("the block is not command, message pairs:\n%s", block[1])
	}
	for i := 0; i < len(lines); i += 2 {
		args := strings.Fields(strings.TrimPrefix(lines[i], "$ rewardd "))
		if _, stderr, exit := runRewardd(t, "", args...); exit != 2 || stderr != lines[i+1]+"\n" {
			t.Errorf("%s: exit %d, prints %q; docs/cli.md shows %q and exit 2", lines[i], exit, stderr, lines[i+1])
		}
	}
}
