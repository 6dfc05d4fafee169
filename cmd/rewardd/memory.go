package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/rewardd/rewardd/internal/cli"
	"github.com/rewardd/rewardd/server/config"
)

// outsideShare: a 64th of the memory budget is kept for the memory
// outside the Go runtime's limit besides mapped files: cgo's allocations
// (RE2) and the threads' C stacks.
const outsideShare = 64

// limitMemory sets the Go runtime's soft memory limit to what the memory
// budget leaves for Go's own memory, so that the collector works harder
// as the process nears its budget and the process's resident memory stays
// under it. That is the budget less:
//   - the files the process maps (its executable and shared libraries,
//     resident as they run), which the Go limit does not count;
//   - one message of limits.max_message_bytes, because the limit is soft:
//     an allocation that size may land while the collector is in a cycle
//     (with 36 MiB messages the heap passed a 230 MiB limit by up to
//     16 MiB under the memory load of bench/overload.sh);
//   - a 64th of the budget (outsideShare).
//
// A GOMEMLIMIT, which the budget may not exceed, is lowered to it. It
// returns the limit in force and why, for the start-up log; an error when
// that limit leaves the collector no room above what requests may reserve.
func limitMemory(lim config.Limits) (string, error) {
	files, err := mappedFiles("self")
	if err != nil {
		return "", fmt.Errorf("the Go memory limit: %w", err)
	}
	budget := int64(lim.MemoryBudget)
	goLimit := budget - files - int64(lim.MaxMessageBytes) - budget/outsideShare
	why := fmt.Sprintf("limits.memory_budget %s less %s of mapped files, a message (limits.max_message_bytes) and a 64th",
		lim.MemoryBudget, config.ByteSize(files))
	if env, set := os.LookupEnv("GOMEMLIMIT"); set {
		// The budget is at most GOMEMLIMIT (config.Load), so this is less.
		why += "; lowered from GOMEMLIMIT " + env
	}
	if goLimit <= lim.RequestMemory() {
		return "", cli.Usagef("limits.memory_budget %s leaves the Go runtime %s (%s), no more than the %s requests may reserve: the collector would run back to back; raise limits.memory_budget or lower limits.max_message_bytes",
			lim.MemoryBudget, config.ByteSize(goLimit), why, config.ByteSize(lim.RequestMemory()))
	}
	debug.SetMemoryLimit(goLimit)
	return fmt.Sprintf("%s (%s)", config.ByteSize(goLimit), why), nil
}

// mappedFiles is the size of the files process pid ("self": this one)
// maps (a mapping with an inode in /proc/PID/maps): its executable and
// shared libraries. It bounds the file pages in its resident memory.
func mappedFiles(pid string) (int64, error) {
	maps, err := os.ReadFile("/proc/" + pid + "/maps")
	if err != nil {
		return 0, err
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode [path]
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || string(f[4]) == "0" {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if !ok || err1 != nil || err2 != nil || end < start {
			return 0, fmt.Errorf("/proc/%s/maps: a line we cannot read: %q", pid, sc.Text())
		}
		total += int64(end - start)
	}
	return total, sc.Err()
}
