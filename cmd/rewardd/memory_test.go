package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/server/config"
)

// TestServeHoldsGoMemoryUnderBudget: `rewardd serve` sets the Go runtime's
// memory limit so that what the limit does not count fits in the memory
// budget beside it: the files the process maps, and a message that may
// land while the collector is in a cycle. A GOMEMLIMIT the budget follows
// is lowered, and the start log says so. A budget that leaves the
// collector no room above what requests may reserve is refused at start.
func TestServeHoldsGoMemoryUnderBudget(t *testing.T) {
	const budget, message = 256 << 20, 16 << 20
	cfg := writeConfig(t, string(config.Default())+"limits: {max_message_bytes: "+strconv.Itoa(message)+"}\n")
	srv := startServerEnv(t, []string{"GOMEMLIMIT=256MiB"}, "--config", cfg)
	logs := srv.logText()
	if !strings.Contains(logs, `"memory_budget":"256 MiB"`) || !strings.Contains(logs, "lowered from GOMEMLIMIT 256MiB") {
		t.Errorf("the start log does not say the budget follows GOMEMLIMIT and the Go limit is lowered from it:\n%s", logs)
	}
	goLimit, err := strconv.ParseFloat(metric(t, srv, "go_gc_gomemlimit_bytes"), 64)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(srv.cmd.Process.Pid)
	files, err := mappedFiles(pid)
	if err != nil {
		t.Fatal(err)
	}
	if rss := rssFile(t, pid); files == 0 || rss > files {
		t.Errorf("mapped files %d B, resident file pages %d B: want the first to bound the second", files, rss)
	}
	if got := int64(goLimit) + files + message; got > budget {
		t.Errorf("Go memory limit %.0f B + mapped files %d B + a message %d B = %d B, above the budget %d B", goLimit, files, message, got, budget)
	}

	small := writeConfig(t, string(config.Default())+"limits: {memory_budget: 64MiB}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "serve", "--config", small, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "limits.memory_budget 64 MiB leaves the Go runtime") {
		t.Errorf("serve with memory_budget 64MiB: %v\n%s\nwant exit 2 and an error saying what the budget leaves the Go runtime", err, out)
	}
}

// rssFile is the file pages resident in process pid, in bytes (RssFile
// in /proc/PID/status).
func rssFile(t *testing.T, pid string) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%s/status has no RssFile", pid)
	return 0
}
