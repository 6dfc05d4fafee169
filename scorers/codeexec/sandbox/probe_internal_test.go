package sandbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// errNotProbed fails, in these tests, the probes of the languages they do
// not look at, so that those cost nothing.
var errNotProbed = errors.New("not probed in this test")

// heldProbe is a Config.gate that holds the probe of one language until
// the test lets it go, fails another's, and every other's at once.
type heldProbe struct {
	held, failed string
	entered      chan struct{} // closed when held's probe reaches the gate
	release      chan struct{} // closed by the test: held's probe runs

	mu    sync.Mutex
	gated []string // the languages whose probe reached the gate
}

func (h *heldProbe) probed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.gated)
}

func newHeldProbe(held, failed string) *heldProbe {
	return &heldProbe{held: held, failed: failed, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldProbe) gate(ctx context.Context, language string) error {
	h.mu.Lock()
	h.gated = append(h.gated, language)
	h.mu.Unlock()
	if language != h.held {
		return errNotProbed
	}
	close(h.entered)
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startHeld starts a pool of every installed language whose probes h
// gates, skipping unless this machine can run held (and failed).
func startHeld(t *testing.T, h *heldProbe, onDemand bool) *Pool {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the sandbox needs root (namespaces, mounts, setuid); not root")
	}
	for _, name := range []string{h.held, h.failed} {
		l, err := LookupLanguage(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Available(); err != nil {
			t.Skip(err)
		}
	}
	// A bound on a hang, not a timing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := Start(ctx, Config{Slots: 2, gate: h.gate, ProbeOnDemand: onDemand})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// echo is a javascript job that prints its stdin.
func echo(input string) Job {
	return Job{Language: "javascript", Style: IO, Code: `process.stdin.pipe(process.stdout);`, Inputs: []string{input},
		Limits: Limits{CPUSeconds: 5, WallSeconds: 30, MemoryMB: 512, OutputKB: 64, Processes: 32}}
}

// TestPendingLanguage: a pool that names no languages serves once python
// is probed; a language whose probe has not ended is listed as probing and
// supported, a run in it waits for the probe within its own ctx and runs
// once the probe passes; a language whose probe failed is not supported,
// and a run in it fails at once.
func TestPendingLanguage(t *testing.T) {
	h := newHeldProbe("javascript", "cpp")
	p := startHeld(t, h, false)
	if got := p.Languages(); !slices.Equal(got, []string{"python"}) {
		t.Errorf("Languages() after Start = %v, want [python]: the other probes run after Start", got)
	}
	// cpp's probe fails: the pool says it does not run it.
	if err := p.Await(context.Background(), "c++"); !errors.Is(err, errNotProbed) {
		t.Errorf("Await(c++) = %v, want its probe's failure", err)
	}
	if err := p.Supports("cpp"); !errors.Is(err, errNotProbed) {
		t.Errorf("Supports(cpp) after its probe failed = %v, want the probe's failure", err)
	}
	if _, err := p.Compile(context.Background(), CompileJob{Language: "cpp", Source: "int main() {}"}); !errors.Is(err, errNotProbed) {
		t.Errorf("Compile(cpp) after its probe failed = %v, want the probe's failure", err)
	}

	<-h.entered
	if !slices.Contains(p.Probing(), "javascript") || slices.Contains(p.Languages(), "javascript") {
		t.Errorf("javascript's probe held: Probing() = %v, Languages() = %v; want it probing, not running", p.Probing(), p.Languages())
	}
	if err := p.Supports("js"); err != nil {
		t.Errorf("Supports(js) while its probe runs = %v, want nil: a run waits for the probe", err)
	}
	// A run whose ctx ends while the probe is held ends with its ctx.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Run(ctx, echo("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled ctx while the probe is held = %v, want context.Canceled", err)
	}
	// One whose ctx lasts waits, and runs once the probe passes.
	type outcome struct {
		res Result
		err error
	}
	ran := make(chan outcome, 1)
	go func() {
		res, err := p.Run(context.Background(), echo("hello"))
		ran <- outcome{res, err}
	}()
	close(h.release)
	o := <-ran
	if o.err != nil {
		t.Fatalf("Run once the probe passed: %v", o.err)
	}
	if tr := o.res.Tests[0]; tr.Status != Ran || string(tr.Stdout) != "hello" {
		t.Errorf("Run once the probe passed: %s %q, want Ran \"hello\"", tr.Status, tr.Stdout)
	}
	if err := p.Await(context.Background(), "javascript"); err != nil {
		t.Errorf("Await(javascript) after its probe passed: %v", err)
	}
	if !slices.Contains(p.Languages(), "javascript") || slices.Contains(p.Probing(), "javascript") {
		t.Errorf("javascript's probe passed: Probing() = %v, Languages() = %v; want it running", p.Probing(), p.Languages())
	}
}

// TestCloseCancelsProbes: Close ends a probe that is still running and
// waits for its goroutine (goleak checks that none is left); a run
// waiting for the probe fails.
func TestCloseCancelsProbes(t *testing.T) {
	h := newHeldProbe("javascript", "cpp")
	p := startHeld(t, h, false)
	<-h.entered
	waited := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), echo("x"))
		waited <- err
	}()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err == nil {
		t.Error("a run waiting for a probe Close ended succeeded")
	}
	if probing := p.Probing(); len(probing) != 0 {
		t.Errorf("Probing() after Close = %v, want none", probing)
	}
}

// TestProbeOnDemand: with Config.ProbeOnDemand, a language is probed when
// a job first asks for it, and no other is.
func TestProbeOnDemand(t *testing.T) {
	h := newHeldProbe("javascript", "cpp")
	close(h.release)
	p := startHeld(t, h, true)
	if !slices.Contains(p.Probing(), "cpp") || !slices.Contains(p.Probing(), "javascript") {
		t.Errorf("Probing() after Start = %v, want every installed language but python", p.Probing())
	}
	res, err := p.Run(context.Background(), echo("hello"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if tr := res.Tests[0]; tr.Status != Ran || string(tr.Stdout) != "hello" {
		t.Errorf("Run: %s %q, want Ran \"hello\"", tr.Status, tr.Stdout)
	}
	if got := h.probed(); !slices.Equal(got, []string{"javascript"}) {
		t.Errorf("probes started: %v, want javascript's only", got)
	}
	if !slices.Contains(p.Probing(), "cpp") || !slices.Contains(p.Languages(), "javascript") {
		t.Errorf("Probing() = %v, Languages() = %v; want cpp still pending, javascript running", p.Probing(), p.Languages())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if probing := p.Probing(); len(probing) != 0 {
		t.Errorf("Probing() after Close = %v, want none", probing)
	}
	if err := p.Supports("cpp"); err == nil {
		t.Error("Supports(cpp) after Close left it unprobed: nil, want an error")
	}
}
