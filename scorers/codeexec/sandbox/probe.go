package sandbox

import (
	"context"
	"fmt"
	"strings"
)

// languageProbes are, per language other than python, a program that tries
// the ways out of the sandbox its runtime offers and prints one line per
// attempt: its name and "closed" or "open". (Java has no getuid: the C++
// probe checks the uid every exec'd program runs as.)
var languageProbes = map[string]string{
	"cpp": `#include <cstdio>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
static void t(const char *name, bool open) { std::printf("%s %s\n", name, open ? "open" : "closed"); }
int main() {
	t("tcp", socket(AF_INET, SOCK_STREAM, 0) >= 0);
	t("udp", socket(AF_INET, SOCK_DGRAM, 0) >= 0);
	t("unix", socket(AF_UNIX, SOCK_STREAM, 0) >= 0);
	t("vsock", socket(40, SOCK_STREAM, 0) >= 0);
	t("host_files", open("/etc/passwd", O_RDONLY) >= 0);
	t("proc", open("/proc/self/status", O_RDONLY) >= 0);
	t("write_outside_workdir", open("/var/tmp/rewardd-sandbox-probe", O_WRONLY | O_CREAT, 0600) >= 0);
	t("uid_0", getuid() == 0 || geteuid() == 0);
}
`,
	"java": `import java.io.*;
import java.net.*;
public class Main {
	interface Try { void run() throws Exception; }
	static void t(String name, Try f) {
		try { f.run(); System.out.println(name + " open"); } catch (Throwable e) { System.out.println(name + " closed"); }
	}
	public static void main(String[] args) {
		t("tcp", () -> new Socket("127.0.0.1", 1).close());
		t("udp", () -> new DatagramSocket().close());
		t("host_files", () -> new FileInputStream("/etc/passwd").close());
		t("proc", () -> new FileInputStream("/proc/self/status").close());
		t("write_outside_workdir", () -> new FileOutputStream("/var/tmp/rewardd-sandbox-probe").close());
	}
}
`,
	"javascript": `const fs = require("fs");
function t(name, f) {
	try { f(); console.log(name + " open"); } catch (e) { console.log(name + " closed"); }
}
t("host_files", () => fs.readFileSync("/etc/passwd"));
t("proc", () => fs.readFileSync("/proc/self/status"));
t("write_outside_workdir", () => fs.writeFileSync("/var/tmp/rewardd-sandbox-probe", "x"));
t("uid_0", () => { if (process.getuid() !== 0 && process.geteuid() !== 0) throw new Error("not root"); });
const s = require("net").connect(1, "127.0.0.1");
s.on("connect", () => { console.log("tcp open"); s.destroy(); });
s.on("error", () => console.log("tcp closed"));
`,
}

// probeLanguages probes, in the first slot, every language the pool runs
// besides python (probeLanguage). A language that fails is a failed Start:
// its toolchain is installed, so the sandbox is at fault.
func (p *Pool) probeLanguages(ctx context.Context) error {
	for _, name := range p.Languages() {
		if err := p.probeLanguage(ctx, p.slots[0], p.langs[name]); err != nil {
			return err
		}
	}
	return nil
}

// probeLanguage compiles (when the language is compiled) and runs, in slot
// s, the probe of lang: the toolchain must work in the sandbox, and every
// line the probe prints must say "closed". Python's is Pool.probe.
func (p *Pool) probeLanguage(ctx context.Context, s *slot, lang *poolLanguage) error {
	name := lang.Name
	if lang.InProcess {
		return nil
	}
	src, ok := languageProbes[name]
	if lang.Probe != "" {
		src, ok = lang.Probe, true
	}
	if !ok {
		return fmt.Errorf("sandbox probe: no probe program for %s", name)
	}
	job := Job{Language: name, Style: IO, Inputs: []string{""}, Limits: lang.RunLimits}
	if lang.ProbeArgs != nil {
		job.Args = [][]string{lang.ProbeArgs}
	}
	if lang.Compiled() {
		b, err := p.compileIn(ctx, s, lang, CompileJob{Language: name, Source: src, Limits: lang.CompileLimits})
		if err != nil {
			return fmt.Errorf("sandbox probe: compile the %s probe: %w", name, err)
		}
		if !b.OK() {
			return fmt.Errorf("sandbox probe: the %s probe does not compile: %s (%s) %s", name, b.Status, b.Detail, firstLines(b.Output, 5))
		}
		job.Build = b
	} else {
		job.Code = src
	}
	res, err := p.runIn(ctx, s, lang, job)
	if err != nil {
		return fmt.Errorf("sandbox probe: run the %s probe: %w", name, err)
	}
	t := res.Tests[0]
	if t.Status != Ran {
		return fmt.Errorf("sandbox probe: the %s probe did not run: %s %s", name, t.Status, t.Detail)
	}
	var open, lines []string
	for _, line := range strings.Split(strings.TrimSpace(string(t.Stdout)), "\n") {
		if lang.ProbePrefix != "" {
			var ok bool
			if line, ok = strings.CutPrefix(line, lang.ProbePrefix); !ok {
				continue // the runner's report
			}
		}
		lines = append(lines, line)
	}
	for _, line := range lines {
		if what, state, _ := strings.Cut(line, " "); state != "closed" {
			open = append(open, what)
		}
	}
	if len(open) > 0 || len(lines) < 4 {
		return fmt.Errorf("sandbox probe: %s: these ways out are open: %s (output %q)", name, strings.Join(open, ", "), t.Stdout)
	}
	return nil
}

// pendingLanguage is a language whose setup and probe run after Start.
type pendingLanguage struct {
	lang *Language
	// done is closed when the probe has ended: the language is then in
	// Pool.langs or Pool.unsupported.
	done chan struct{}
}

// startProbes starts probing the pending languages, under a context of
// ctx's values that Close cancels (Close waits for every probe). Unless
// Config.ProbeOnDemand, it starts min(2, slots-1) probers (at least one),
// each of which takes the next pending language (one a job waits for
// first) until none is left: a pool of two slots or more keeps one for
// jobs.
func (p *Pool) startProbes(ctx context.Context) {
	if len(p.probeOrder) == 0 {
		return
	}
	p.probeCtx, p.stopProbes = context.WithCancel(context.WithoutCancel(ctx))
	if p.cfg.ProbeOnDemand {
		return
	}
	for range min(2, max(1, len(p.slots)-1)) {
		p.probers.Go(p.probePending)
	}
}

// probePending probes pending languages until none is left to start.
func (p *Pool) probePending() {
	for {
		p.langMu.Lock()
		if len(p.probeOrder) == 0 {
			p.langMu.Unlock()
			return
		}
		name := p.probeOrder[0]
		p.probeOrder = p.probeOrder[1:]
		p.langMu.Unlock()
		p.probePendingLanguage(name)
	}
}

// probeOnDemand starts the probe of the pending language name, which no
// prober has taken (Config.ProbeOnDemand), unless the pool is closed.
func (p *Pool) probeOnDemand(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.probers.Go(func() { p.probePendingLanguage(name) })
	}
}

// probePendingLanguage sets up and probes the pending language name, which
// the caller took from probeOrder, and settles it: in langs, or in
// unsupported with the reason.
func (p *Pool) probePendingLanguage(name string) {
	p.langMu.Lock()
	pending := p.pending[name]
	p.langMu.Unlock()
	pl, err := p.setUpLater(p.probeCtx, pending.lang)
	p.langMu.Lock()
	if err != nil {
		p.unsupported[name] = err
	} else {
		p.langs[name] = pl
	}
	delete(p.pending, name)
	p.langMu.Unlock()
	close(pending.done)
	if p.cfg.Probed != nil && p.probeCtx.Err() == nil {
		p.cfg.Probed(name, err)
	}
}

// settleUnprobed leaves out, as the pool is closed, the pending languages
// whose probe never started (Config.ProbeOnDemand); the probers are done.
func (p *Pool) settleUnprobed() {
	p.langMu.Lock()
	defer p.langMu.Unlock()
	for name, pending := range p.pending {
		p.unsupported[name] = errClosed
		delete(p.pending, name)
		close(pending.done)
	}
	p.probeOrder = nil
}

// setUpLater builds what the pending language l needs once per machine and
// probes it, in a slot taken as a job takes one.
func (p *Pool) setUpLater(ctx context.Context, l *Language) (*poolLanguage, error) {
	pl := &poolLanguage{Language: l}
	if err := p.prepare(ctx, pl); err != nil {
		return nil, err
	}
	if p.cfg.Unsafe {
		return pl, nil // no sandbox to probe
	}
	if p.cfg.gate != nil {
		if err := p.cfg.gate(ctx, l.Name); err != nil {
			return nil, fmt.Errorf("sandbox probe: %s: %w", l.Name, err)
		}
	}
	err := p.inSlot(ctx, programKey(l.Name, "\x00probe"), func(s *slot) error {
		return p.probeLanguage(ctx, s, pl)
	})
	if err != nil {
		return nil, err
	}
	return pl, nil
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
