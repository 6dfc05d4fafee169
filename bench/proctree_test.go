package bench

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBreakdownCountsChildrenByRole: a child process named like a zygote
// is counted as one, and the CPU of the processes it reaped as the
// programs', from the kernel's counters.
func TestBreakdownCountsChildrenByRole(t *testing.T) {
	before := snapshotTree(os.Getpid())
	// The shell's $0 is "zygote": its command line names the role. It runs
	// a busy loop in a subshell it reaps (a program), then one of its own,
	// and waits until the test has read its counters.
	busy := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`
	cmd := exec.Command("/bin/sh", "-c", "("+busy+"); "+busy+"; echo done; read x", "zygote")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	buf := make([]byte, 5)
	if n, err := stdout.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "done") {
		t.Fatalf("the shell said %q, %v", buf[:n], err)
	}
	after := snapshotTree(os.Getpid())
	b := breakdown(before, after, 1, "this process")
	parts := map[string]CPUPart{}
	for _, p := range b.Parts {
		parts[p.Name] = p
	}
	z, ok := parts[partZygote]
	if !ok || z.Processes != 1 || z.UserMs+z.SysMs <= 0 {
		t.Errorf("zygote part %+v (of %+v), want one process that used CPU", z, b.Parts)
	}
	if p := parts[partPrograms]; p.UserMs+p.SysMs <= 0 || p.MinorFaults <= 0 {
		t.Errorf("programs part %+v (of %+v), want the reaped subshell's CPU and faults", p, b.Parts)
	}
	if b.Total() < z.UserMs+z.SysMs {
		t.Errorf("total %.3f ms below a part's %.3f ms", b.Total(), z.UserMs+z.SysMs)
	}
}
