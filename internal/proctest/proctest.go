// Package proctest reads what Linux says of a process's threads, for tests
// of what the server asks of the kernel.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ThreadNices returns the nice value of each thread of process pid ("self"
// for the calling one), by thread id: the 19th field of
// /proc/PID/task/TID/stat. A thread that ends while it is read is left out.
func ThreadNices(t testing.TB, pid string) map[string]int {
	entries, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		t.Error(err)
		return nil
	}
	nices := make(map[string]int)
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + pid + "/task/" + e.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		s := string(b)
		// The command, in parentheses, may hold spaces: count from after
		// it, where the state is the 3rd field.
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 17 {
			t.Errorf("thread %s of %s: no nice value in %q", e.Name(), pid, s)
			continue
		}
		n, err := strconv.Atoi(fields[16])
		if err != nil {
			t.Errorf("thread %s of %s: nice value %q: %v", e.Name(), pid, fields[16], err)
			continue
		}
		nices[e.Name()] = n
	}
	return nices
}

// AwaitAllAt waits, at most 10 s, until every thread of process pid runs at
// nice: a thread that was lowered is raised back or has ended.
func AwaitAllAt(t testing.TB, pid string, nice int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var others []string
		for tid, n := range ThreadNices(t, pid) {
			if n != nice {
				others = append(others, tid+" at "+strconv.Itoa(n))
			}
		}
		if len(others) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads of %s not back at nice %d after 10 s: %v", pid, nice, others)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
