package sandbox

// What the pool and the slot's servers (the runner, runner.py, which hands
// python io jobs to its zygote, and the executor) say to each other: a
// request per job, a reply per request, as frames of a 4-byte big-endian
// length and a JSON body. The servers report facts; judge.go turns them
// into verdicts.

type request struct {
	ID      int64      `json:"id"`
	Style   Style      `json:"style"`
	Code    string     `json:"code"`
	Inputs  []string   `json:"inputs"`
	Test    string     `json:"test"`
	Entry   string     `json:"entry"`
	Prompt  string     `json:"prompt,omitempty"`
	Helpers string     `json:"helpers,omitempty"`
	UID     int        `json:"uid"`
	Limits  wireLimits `json:"limits"`
	// Each io test's CPU and wall time (python; 0: the submission's).
	TestCPU  float64 `json:"test_cpu,omitempty"`
	TestWall float64 `json:"test_wall,omitempty"`
	// Stop after the first test that did not run to its end; keep every
	// test's stdout and stderr.
	Stop bool `json:"stop,omitempty"`
	Keep bool `json:"keep,omitempty"`
	// An exec job: the launcher, the environment, the files written
	// first, the tests, the files to send back after the last test (when
	// it exited 0), and the texts whose presence on a test's stderr the
	// reply reports (fact.Marked).
	Launcher    string     `json:"launcher,omitempty"`
	Env         []string   `json:"env,omitempty"`
	Files       []wireFile `json:"files,omitempty"`
	Tests       []wireTest `json:"tests,omitempty"`
	Collect     []string   `json:"collect,omitempty"`
	Markers     []string   `json:"markers,omitempty"`
	TimeMarkers []string   `json:"time_markers,omitempty"`
	// Back, when above 0, bounds what of each test's stdout and stderr
	// comes back (else its output limit and a byte more).
	Back int64 `json:"back,omitempty"`
}

// maxVerdictBytes bounds what a reply says of one test besides its
// output: its end, detail (2,000 characters at most, each \u-escaped at
// worst) and measurements.
const maxVerdictBytes = 32 << 10

// maxReply bounds the size of the reply to r: every test's fact, the
// output its tests may print together (in base64: stdout and kept stderr),
// and for a compile, the files it sends back (from the work dir, at most
// the slot's tmpfs).
func (r *request) maxReply() int64 {
	tests := int64(max(1, len(r.Inputs), len(r.Tests)))
	size := 64<<10 + tests*maxVerdictBytes + base64Len(r.Limits.Total)
	if len(r.Collect) > 0 {
		size += base64Len(tmpfsMB << 20)
	}
	return size
}

func base64Len(n int64) int64 { return (n + 2) / 3 * 4 }

type wireLimits struct {
	CPU    float64 `json:"cpu"`
	Wall   float64 `json:"wall"`
	Memory int64   `json:"memory"`
	Output int64   `json:"output"`
	Procs  int     `json:"procs"`
	// Total is what the request's tests may print together, in bytes.
	Total int64 `json:"total"`
}

// wireFile is a file in the work dir (Data in base64 on the wire).
type wireFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
	Mode int    `json:"mode"`
}

// wireTest is one test of an exec job: a process running argv with stdin
// under its own limits (Memory 0: no address space limit).
type wireTest struct {
	Argv   []string   `json:"argv"`
	Stdin  []byte     `json:"stdin"`
	Files  []wireFile `json:"files,omitempty"`
	CPU    float64    `json:"cpu"`
	Wall   float64    `json:"wall"`
	Memory int64      `json:"memory"`
	Stack  int64      `json:"stack"`
	Output int64      `json:"output"`
	Procs  int        `json:"procs"`
	// FileSize, when set, bounds every file the test writes
	// (RLIMIT_FSIZE) in place of Output: a compile whose program is
	// bigger than its messages may be. Its streams still end it at Output.
	FileSize int64 `json:"file_size,omitempty"`
}

type reply struct {
	ID    int64      `json:"id"`
	Tests []fact     `json:"tests"`
	Files []wireFile `json:"files"`
	// Seconds is the job's wall time in the sandbox, Slot its slot time
	// (slottime.go).
	Seconds float64 `json:"seconds"`
	Slot    float64 `json:"slot"`
	// Output is what the tests printed, as counted against Limits.Total.
	Output int64 `json:"output"`
	// The hello a server sends when it starts.
	Ready bool `json:"ready"`
	Pid1  bool `json:"pid1"`
	UID   int  `json:"uid"`
}

// fact is what happened to one test, as the server that ran it saw it:
// how it ended (End, one of the end constants), with what it used and
// printed. It says nothing of what that means: judge does.
type fact struct {
	End string `json:"end"`
	// Status is the wait status of the program (exec: endExit) or of the
	// process that ended (endDied, endLost, endGone).
	Status int `json:"status,omitempty"`
	// Code is the SystemExit code a python program raised (endSysExit).
	Code *int `json:"code,omitempty"`
	// Errno is the error of an exec that failed (endNoExec), of a launcher
	// step (endSetup), or of the OSError a python program raised.
	Errno int `json:"errno,omitempty"`
	// Step is the launcher's step that failed (endSetup; -1: the
	// executor's own).
	Step int `json:"step,omitempty"`
	// Exc is the type of the exception a python program or an assert
	// test raised (endRaise), Detail its text or what else happened.
	Exc    string `json:"exc,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Alive says the program's process was alive without its connection
	// to the tests (endGone).
	Alive bool `json:"alive,omitempty"`
	// CPU is the CPU time of the test's program in seconds, Wall the time
	// it took (its slot time when that ran out), RSS its peak resident set
	// in KiB.
	CPU  float64 `json:"cpu"`
	Wall float64 `json:"wall"`
	RSS  int64   `json:"rss"`
	// Out and Err are the sizes of what the test wrote to stdout and
	// stderr, Stdout and Stderr what of it came back.
	Out    int64  `json:"out"`
	Err    int64  `json:"err"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	// Marked are the request's markers found on the test's stderr.
	Marked []string `json:"marked,omitempty"`
}

// How a test ended (fact.End).
const (
	// Any server.
	endSetup    = "setup"    // the sandbox could not set the test up (Detail)
	endFiles    = "files"    // the job's files do not fit in the work dir (Detail)
	endWall     = "wall"     // the test's slot time, or the slot's CPU time for it, ran out: it was killed
	endDeadline = "deadline" // the job's slot time ran out before or during it
	endSkipped  = "skipped"  // not run: an earlier test ended the job
	endTotal    = "total"    // its output took the job's tests past their total
	// The executor.
	endExit   = "exit"   // the launcher saw the program end: Status
	endNoExec = "noexec" // the program could not be started: Errno
	endLost   = "lost"   // the launcher ended without saying how the program did (Status: the launcher's)
	// Python io, in the program's process.
	endReturn  = "return"  // its code ran to the end
	endSysExit = "sysexit" // it raised SystemExit (Code)
	endRaise   = "raise"   // it raised Exc (and for an OSError, Errno)
	endDied    = "died"    // its process ended during the test: Status
	// Assert tests, in the runner.
	endPassed  = "passed"  // check(candidate) returned
	endRefused = "refused" // the program returned something that is not plain data (Detail)
	endExited  = "exited"  // the program called exit during the tests
	endProgram = "program" // the program did not get as far as the tests (Detail)
	endGone    = "gone"    // the program's process went away (Status, or Alive)
	endHarness = "harness" // the row's tests are broken (Detail)
)

// exitedZero says whether the test's program exited 0 on its own.
func (f *fact) exitedZero() bool {
	return f.End == endExit && f.Status == 0
}
