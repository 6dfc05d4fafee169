package server

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// heavyWork is the worker time a request uses at the server's own CPU
// priority. Past it, each of its pool goroutines goes on at a lower one
// (Options.WorkerNice): the goroutines that read requests and write answers,
// and the spans of light requests, then take the CPU from it whenever both
// want it, as the kernel's scheduler decides between threads and the pool's
// fair gate cannot (it decides only between spans, and not for the network
// at all). A request this light never pays for a thread of its own.
const heavyWork = 20 * time.Millisecond

// spareProc gives the Go runtime a P more than base for each pool
// goroutine that runs at the lower priority, up to base more (as many as
// the heavy requests' slots, engine.back), and base again after. The
// lowered goroutines run on the spare Ps, so that the goroutines the
// network wakes (reading requests, writing answers) and the light
// requests' spans keep base Ps at the server's priority, which the kernel
// prefers to the heavy requests' threads; without them they would wait
// for a lowered goroutine's P, or for the runtime's poll of the network
// every 10ms, and the lower priority would change nothing. They are not kept for good:
// a P more than the CPUs costs a light load that keeps them busy the
// switching between threads (bench/README.md, "Heavy requests behind the
// network").
//
// GOMAXPROCS is the process's, so servers in one process (tests) share it:
// one may take the spare P back while another's heavy request runs, which
// costs that request's neighbours latency, never a result.
type spareProc struct {
	mu    sync.Mutex
	base  int
	users int
}

func (p *spareProc) take() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users++
	if p.users <= p.base {
		runtime.GOMAXPROCS(p.base + p.users)
	}
}

func (p *spareProc) give() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users--
	if p.users < p.base {
		runtime.GOMAXPROCS(p.base + p.users)
	}
}

// maxNice is the lowest CPU priority on Linux.
const maxNice = 19

// errCannotRaise is lowerPriority's answer where the thread's priority could
// not be raised back.
var errCannotRaise = errors.New("the priority could not be raised back after: that needs CAP_SYS_NICE, or RLIMIT_NICE of 20 - the server's nice value")

// lowerPriority locks the calling goroutine to its thread and lowers the
// thread's CPU priority by nice (Linux keeps a nice value per thread), to at
// most maxNice. The returned restore, called by the same goroutine, undoes
// both. It lowers nothing (errCannotRaise) where restore could not raise
// the priority back: a thread is never given back to the runtime at the
// lower priority, and the runtime is never left to end a thread (which
// would kill the children started on it with Pdeathsig, the sandbox's). On
// an error nothing is changed. Should raising fail all the same (the
// capability dropped meanwhile), restore leaves the goroutine locked, so
// that the runtime ends the thread with it rather than run others on it.
func lowerPriority(nice int) (restore func(), err error) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	was, err := lowerThread(tid, nice)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if unix.Setpriority(unix.PRIO_PROCESS, tid, was) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}

// lowerThread lowers thread tid's nice value by nice, where it could be
// raised back, and returns the value it had.
func lowerThread(tid, nice int) (was int, err error) {
	if was, err = niceOf(tid); err != nil {
		return 0, err
	}
	if !canRaiseTo(was) {
		return 0, errCannotRaise
	}
	return was, unix.Setpriority(unix.PRIO_PROCESS, tid, min(was+nice, maxNice))
}

// niceOf is the nice value of thread tid (0: the calling one).
func niceOf(tid int) (int, error) {
	// The system call answers 20 - nice, so that it is never negative.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	return 20 - prio, err
}

// canRaiseTo says whether the calling thread may set its nice value to
// nice, whatever it is now: with CAP_SYS_NICE, or within RLIMIT_NICE (which
// allows down to 20 - its value).
func canRaiseTo(nice int) bool {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NICE, &rl) == nil && (rl.Cur == unix.RLIM_INFINITY || 20-int64(rl.Cur) <= int64(nice)) {
		return true
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capget(&hdr, &data[0]) == nil && data[0].Effective&(1<<unix.CAP_SYS_NICE) != 0
}
