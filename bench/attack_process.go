package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The attacker process: Overload can run the attack in a process of its
// own (OverloadOptions.AttackerCommand), started at a lower priority, so
// that on a load generator with one core the valid clients are not slowed
// by the attacker's own CPU, only by the server. The two talk over the
// child's stdin and stdout, a line each:
//
//	child → parent  "ready"       set up (requests encoded, connections made)
//	parent → child  "start"       attack
//	child → parent  "attacking"   the attack is in place
//	parent → child  "stop"        stop (or stdin closed)
//	child → parent  the AttackerResult as JSON, on one line
const (
	lineReady     = "ready"
	lineStart     = "start"
	lineAttacking = "attacking"
	lineStop      = "stop"
)

// ServeAttacker is the attacker process's side: it prepares opts.Attack,
// and runs it between the parent's "start" and "stop" (see AttackerCommand).
func ServeAttacker(ctx context.Context, opts OverloadOptions, in io.Reader, out io.Writer) error {
	if err := opts.fill(); err != nil {
		return err
	}
	att, err := newAttacker(ctx, &opts)
	if err != nil {
		return err
	}
	defer att.close()
	lines := bufio.NewScanner(in)
	fmt.Fprintln(out, lineReady)
	if !lines.Scan() || lines.Text() != lineStart {
		return fmt.Errorf("attacker: want %q on stdin, got %q (%v)", lineStart, lines.Text(), lines.Err())
	}
	actx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan struct{})
	done := make(chan *AttackerResult, 1)
	go func() { done <- att.run(actx, ready) }()
	select {
	case <-ready:
	case <-time.After(rampLimit):
	case <-ctx.Done():
	}
	fmt.Fprintln(out, lineAttacking)
	lines.Scan() // "stop", or stdin closed: either way the attack ends
	stop()
	res := <-done
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// processAttacker runs the attack in a child process (ServeAttacker).
type processAttacker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	// stderr holds what the child wrote there, for errors.
	stderr *strings.Builder
}

func newProcessAttacker(cmd *exec.Cmd) (*processAttacker, error) {
	p := &processAttacker{cmd: cmd, stderr: new(strings.Builder)}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = p.stderr
	p.lines = bufio.NewScanner(stdout)
	p.lines.Buffer(nil, 16<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the attacker process: %w", err)
	}
	if err := p.expect(lineReady); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// expect reads the child's next line and fails unless it is want.
func (p *processAttacker) expect(want string) error {
	if !p.lines.Scan() {
		return p.failed(fmt.Sprintf("no %q", want))
	}
	if got := p.lines.Text(); got != want {
		return p.failed(fmt.Sprintf("%q instead of %q", got, want))
	}
	return nil
}

func (p *processAttacker) failed(what string) error {
	return fmt.Errorf("attacker process: %s; it said: %s", what, strings.TrimSpace(p.stderr.String()))
}

func (p *processAttacker) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	var once sync.Once
	inPlace := func() { once.Do(func() { close(ready) }) }
	defer inPlace()
	res, err := p.attack(ctx, inPlace)
	if err != nil {
		return &AttackerResult{What: "the attacker process failed", Outcomes: map[string]int{}, Notes: []string{err.Error()}}
	}
	return res
}

func (p *processAttacker) attack(ctx context.Context, inPlace func()) (*AttackerResult, error) {
	if _, err := fmt.Fprintln(p.stdin, lineStart); err != nil {
		return nil, p.failed(err.Error())
	}
	if err := p.expect(lineAttacking); err != nil {
		return nil, err
	}
	inPlace()
	<-ctx.Done()
	fmt.Fprintln(p.stdin, lineStop)
	if !p.lines.Scan() {
		return nil, p.failed("no result")
	}
	var res AttackerResult
	if err := json.Unmarshal(p.lines.Bytes(), &res); err != nil {
		return nil, p.failed(fmt.Sprintf("result: %v", err))
	}
	return &res, nil
}

func (p *processAttacker) close() {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

var _ attacker = (*processAttacker)(nil)
