package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// noRaceExitSleep spares the -race binary its one-second sleep at each
// clean exit, in tests that run it to completion dozens of times: races
// found before the exit are still reported, only the wait for goroutines
// still running then is skipped.
func noRaceExitSleep(t *testing.T) { t.Setenv("GORACE", "atexit_sleep_ms=0") }

var (
	commandLine = regexp.MustCompile(`^  rewardd ([a-z]+)\b`)
	flagName    = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	helpFlag    = regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)
)

// usageLines splits `rewardd --help` into each command's lines (a line and
// its continuations) and the sandbox flags' lines.
func usageLines(t *testing.T, usage string) (byCommand map[string][]string, order []string, sandbox []string) {
	t.Helper()
	byCommand = map[string][]string{}
	current := ""
	for _, line := range strings.Split(usage, "\n") {
		if m := commandLine.FindStringSubmatch(line); m != nil {
			current = m[1]
			order = append(order, current)
			byCommand[current] = []string{line}
			continue
		}
		if current != "" && strings.HasPrefix(line, "    ") {
			byCommand[current] = append(byCommand[current], line)
			continue
		}
		current = ""
		if strings.HasPrefix(line, "  [--sandbox") {
			sandbox = append(sandbox, line)
		}
	}
	if len(order) == 0 || len(sandbox) == 0 {
		t.Fatalf("no command lines or no sandbox flags in rewardd --help:\n%s", usage)
	}
	return byCommand, order, sandbox
}

func flagsIn(lines []string) []string {
	var names []string
	for _, line := range lines {
		for _, m := range flagName.FindAllStringSubmatch(line, -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestHelpMatchesREADME: docs/cli.md holds `rewardd --help` verbatim; each
// command's -h prints its lines of that usage and describes exactly the
// flags those lines name; `make` lists the targets README.md shows.
func TestHelpMatchesREADME(t *testing.T) {
	noRaceExitSleep(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cliDoc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	usage, _, exit := runRewardd(t, "", "--help")
	if exit != 0 {
		t.Fatalf("rewardd --help: exit %d", exit)
	}
	if !strings.Contains(string(cliDoc), "```\n$ rewardd --help\n"+usage+"```\n") {
		t.Errorf("docs/cli.md does not hold `rewardd --help` verbatim in a block; it prints:\n%s", usage)
	}
	byCommand, order, sandbox := usageLines(t, usage)
	for _, name := range order {
		stdout, stderr, exit := runRewardd(t, "", name, "-h")
		if exit != 0 || stderr != "" {
			t.Errorf("rewardd %s -h: exit %d, stderr %q; want 0 and the help on stdout", name, exit, stderr)
			continue
		}
		if name == "help" {
			if stdout != usage {
				t.Errorf("rewardd help -h is not rewardd --help:\n%s", stdout)
			}
			continue
		}
		lines := byCommand[name]
		if want := "Usage:\n" + strings.Join(lines, "\n") + "\n"; !strings.HasPrefix(stdout, want) {
			t.Errorf("rewardd %s -h does not start with its lines of rewardd --help:\n%s\nwant first:\n%s", name, stdout, want)
		}
		named := lines
		if strings.Contains(strings.Join(lines, " "), "[sandbox flags]") {
			named = append(slices.Clone(lines), sandbox...)
		}
		var described []string
		for _, m := range helpFlag.FindAllStringSubmatch(stdout, -1) {
			described = append(described, m[1])
		}
		slices.Sort(described)
		if want := flagsIn(named); !slices.Equal(described, want) {
			t.Errorf("rewardd %s: -h describes the flags %v, rewardd --help and docs/cli.md name %v", name, described, want)
		}
		if again, _, _ := runRewardd(t, "", "help", name); again != stdout {
			t.Errorf("rewardd help %s differs from rewardd %s -h", name, name)
		}
	}

	makeHelp, err := exec.Command("make", "-s", "--no-print-directory", "-C", "../..", "help").Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	if !strings.Contains(string(readme), "```\n$ make\n"+string(makeHelp)+"```\n") {
		t.Errorf("README.md does not hold `make`'s list of targets verbatim in a block; make prints:\n%s", makeHelp)
	}
}

// TestUsageErrorsNameTheCommandOnce: a mistake on the command line prints
// one line naming the command once, and exits 2.
func TestUsageErrorsNameTheCommandOnce(t *testing.T) {
	for _, args := range [][]string{
		{"score", "--bogus"},
		{"score"},
		{"check", "extra"},
		{"check", "--addr", "http://127.0.0.1:50051"},
		{"serve", "--workers", "0"},
		{"version", "extra"},
		{"init", "a.yml", "b.yml"},
	} {
		stdout, stderr, exit := runRewardd(t, "", args...)
		prefix := "rewardd: " + args[0] + ": "
		if exit != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, prefix) ||
			strings.Contains(strings.TrimPrefix(stderr, prefix), args[0]+":") {
			t.Errorf("rewardd %s: exit %d, stdout %q, stderr %q; want 2 and one line naming the command once", strings.Join(args, " "), exit, stdout, stderr)
		}
	}
	if _, stderr, exit := runRewardd(t, "", "frobnicate"); exit != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, %q", exit, stderr)
	}
}

// TestCheckAddrURL: an --addr written as a URL is refused with the
// host:port to give instead, before anything is dialled.
func TestCheckAddrURL(t *testing.T) {
	for addr, want := range map[string]string{
		"http://127.0.0.1:50051":       "--addr 127.0.0.1:50051",
		"grpc://127.0.0.1:50051/":      "--addr 127.0.0.1:50051",
		"https://rewardd.internal:443": "--tls-ca",
	} {
		_, stderr, exit := runRewardd(t, "", "check", "--addr", addr)
		if exit != 2 || !strings.Contains(stderr, "is a URL") || !strings.Contains(stderr, want) {
			t.Errorf("--addr %s: exit %d, %q; want 2 naming %q", addr, exit, stderr, want)
		}
	}
}

// TestInit: `rewardd init` writes a config that loads to the embedded
// default's meaning, and one that loads with its commented kinds
// uncommented too; it does not overwrite a file without --force.
func TestInit(t *testing.T) {
	noRaceExitSleep(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "rewards.yml")
	if _, stderr, exit := runRewardd(t, "", "init", path); exit != 0 {
		t.Fatalf("init: exit %d: %s", exit, stderr)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if stdout, _, _ := runRewardd(t, "", "init"); stdout != string(text) {
		t.Error("rewardd init without a file writes something else to stdout")
	}
	fingerprint := func(cfg string) string {
		t.Helper()
		r, stderr, exit := checkJSON(t, "--config", cfg)
		if exit != 0 {
			t.Fatalf("check --config %s: exit %d: %s", cfg, exit, stderr)
		}
		return r.Fingerprint
	}
	if got, want := fingerprint(path), fingerprint(""); got != want || got == "" {
		t.Errorf("init's config has fingerprint %q, the embedded default %q", got, want)
	}
	if _, stderr, exit := runRewardd(t, "", "init", path); exit != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("init over an existing file: exit %d, %q; want 2 pointing at --force", exit, stderr)
	}
	if _, stderr, exit := runRewardd(t, "", "init", "--force", path); exit != 0 {
		t.Errorf("init --force: exit %d: %s", exit, stderr)
	}

	// The commented kinds, uncommented under functions:, load too (not
	// code_exec's: it needs the sandbox, which this test does not start).
	more := strings.SplitN(string(text), "# More kinds", 2)
	if len(more) != 2 {
		t.Fatal(`no "# More kinds" section`)
	}
	var extra []string
	for _, line := range strings.Split(more[1], "\n")[1:] {
		if strings.HasPrefix(line, "#  ") {
			l := line[1:]
			if strings.Contains(l, "kind: code_exec") {
				extra = extra[:len(extra)-2] // its comment and name lines
				break
			}
			extra = append(extra, l)
		}
	}
	cfg := strings.Replace(more[0], "functions:\n", "functions:\n"+strings.Join(extra, "\n")+"\n", 1)
	uncommented := filepath.Join(dir, "more.yml")
	os.WriteFile(uncommented, []byte(cfg), 0o644)
	if fingerprint(uncommented) == fingerprint("") {
		t.Error("uncommenting the extra kinds did not change the config")
	}
}
