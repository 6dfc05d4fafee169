package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// HelperArg is the first argument that makes a rewardd binary (or a test
// binary) act as the sandbox helper instead of itself. main calls
// IsHelper/HelperMain before anything else; see Config.Helper.
const HelperArg = "__rewardd_sandbox_helper"

// IsHelper says whether args (os.Args) ask for the sandbox helper.
func IsHelper(args []string) bool { return len(args) >= 2 && args[1] == HelperArg }

// HelperMain is the helper: started by the pool as PID 1 of fresh mount, pid,
// net, ipc and uts namespaces, it makes the mounts private, mounts a new
// /proc and a private tmpfs on /tmp, confines itself with Landlock and
// seccomp (both inherited across exec by everything the sandbox ever runs),
// and execs the Python fork server in the role its arguments name (runner
// or zygote, each slot has one of each). Arguments after the role are more
// paths to let the sandbox read (and execute) besides the system's own:
// the pool's cache directory, a toolchain's configuration. It returns only
// on failure, with the reason on stderr, which the pool reports.
func HelperMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "sandbox helper: usage: rewardd", HelperArg, "PYTHON [SLOT [runner|zygote [READ_PATH...]]]")
		return 2
	}
	var readPaths []string
	if len(args) > 5 {
		readPaths = args[5:]
	}
	python := args[2]
	slot, role := "0", "zygote"
	if len(args) > 3 {
		slot = args[3]
	}
	if len(args) > 4 {
		role = args[4]
	}
	if role == unsafeExecutorRole {
		return executorMain()
	}
	// Landlock applies to the calling thread, and seccomp to every thread:
	// exec (or, the executor, start every program) from this thread, so
	// that everything the sandbox runs inherits both.
	runtime.LockOSThread()
	if err := confine(readPaths); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox helper: %v\n", err)
		return 1
	}
	if role == "executor" {
		pin(slot)
		return executorMain()
	}
	argv := []string{python, "-I", "-S", "-B", "-X", "utf8", "-c", harnessProgram(role), role}
	// LD_BIND_NOW: the dynamic linker resolves every symbol once, in the
	// fork server, rather than in each child the first time it calls one
	// (a lookup through every library's symbol tables, each page of them a
	// first touch in a fresh fork).
	env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + workDir, "REWARDD_WORK=" + workDir, "REWARDD_SLOT=" + slot, "LD_BIND_NOW=1"}
	err := unix.Exec(python, argv, env)
	fmt.Fprintf(os.Stderr, "sandbox helper: exec %s: %v\n", python, err)
	return 1
}

const workDir = "/tmp/work"

// tmpfsMB is the size of each slot's private /tmp, which holds the work dir.
const tmpfsMB = 64

// WorkDirMB is the room a job has in its work dir, in MiB: its files, its
// program's source and build, and what the program writes share it.
const WorkDirMB = tmpfsMB

func confine(readPaths []string) error {
	if os.Getpid() != 1 {
		return errors.New("not PID 1 of a new pid namespace")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// A /proc of this pid namespace only (the host's would list host
	// processes), and a private tmpfs on /tmp that hides the host's and
	// vanishes with the namespace.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%dm,mode=0755", tmpfsMB)); err != nil {
		return fmt.Errorf("mount tmpfs on /tmp: %w", err)
	}
	if err := os.Mkdir(workDir, 0o700); err != nil {
		return fmt.Errorf("make work dir: %w", err)
	}
	if err := unix.Sethostname([]byte("sandbox")); err != nil {
		return fmt.Errorf("set hostname: %w", err)
	}
	if err := landlock(readPaths); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := filterSyscalls(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// landlock allows reading and executing the system's programs and
// libraries (/usr: the Python runtime, the compilers) and readPaths,
// reading and writing a few devices, everything under the private /tmp,
// and nothing else of the file system; with ABI 4 no TCP, with ABI 6 no
// abstract unix sockets or signals outside the sandbox.
func landlock(readPaths []string) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("not available: %w", err)
	}
	var fs uint64 = (1 << 13) - 1 // ABI 1: execute … make_sym
	if abi >= 2 {
		fs |= ll.AccessFSRefer
	}
	if abi >= 3 {
		fs |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		fs |= ll.AccessFSIoctlDev
	}
	attr := ll.RulesetAttr{HandledAccessFS: fs}
	if abi >= 4 {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("create ruleset: %w", err)
	}
	defer unix.Close(fd)

	const (
		read    = ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSExecute
		file    = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
		devRead = ll.AccessFSReadFile
	)
	rules := []struct {
		path   string
		access uint64
	}{
		{"/usr", read}, {"/lib", read}, {"/lib64", read}, {"/bin", read}, {"/sbin", read},
		{"/etc/ld.so.cache", ll.AccessFSReadFile},
		{"/dev/null", file}, {"/dev/zero", file}, {"/dev/urandom", devRead}, {"/dev/random", devRead},
		{"/tmp", fs},
	}
	for _, p := range readPaths {
		rules = append(rules, struct {
			path   string
			access uint64
		}{p, read})
	}
	for _, r := range rules {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", r.path, err)
		}
		access := r.access & fs
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A file (a toolchain's configuration file among readPaths)
			// takes only the rights that apply to files.
			access &= ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
		}
		err = ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			return fmt.Errorf("allow %s: %w", r.path, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("restrict self: %w", err)
	}
	return nil
}

// namespaceFlags are the clone flags that would make a new namespace.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// deniedSyscalls fail with EPERM in the sandbox: no way out of the
// namespaces, no kernel attack surface a test program has no use for.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
	"swapon", "swapoff", "acct", "syslog", "quotactl", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
	"open_by_handle_at", "name_to_handle_at", "fanotify_init", "lookup_dcookie",
	// Every socket: the network namespace has no interfaces and the
	// sandbox has no use for a unix socket either (socketpair still works).
	"socket",
}

// filterSyscalls installs two seccomp filters on this thread: one that kills
// any syscall made through a foreign ABI (i386 int 0x80, x32), which the
// deny list would otherwise not see, and the deny list itself.
func filterSyscalls() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := nativeOnly(); err != nil {
		return err
	}
	eperm := seccomp.ActionErrno | seccomp.Action(unix.EPERM)
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: eperm, Names: deniedSyscalls},
			{Action: eperm, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "clone",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}},
			}}},
			// clone3 passes its flags in memory, where seccomp cannot look:
			// ENOSYS makes libc fall back to clone, which is checked above.
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: policy})
}

// pin keeps the calling thread, and every process it starts, on one CPU:
// slot k takes the k-th CPU this process may run on, round robin, as the
// Python servers do. Best effort.
func pin(slot string) {
	k, err := strconv.Atoi(slot)
	if err != nil {
		return
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return
	}
	set.Zero()
	set.Set(cpus[k%len(cpus)])
	unix.SchedSetaffinity(0, &set)
}

// nativeOnly loads a filter that kills the process on any syscall whose
// architecture is not x86-64 (or on an x32 syscall number).
func nativeOnly() error {
	const (
		auditArchX8664 = 0xc000003e
		x32Bit         = 0x40000000
		archOffset     = 4
	)
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArchX8664, SkipFalse: 3},
		bpf.LoadAbsolute{Off: 0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32Bit, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	})
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("load arch filter: %w", err)
	}
	return nil
}
