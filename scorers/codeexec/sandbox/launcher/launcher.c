/* rewardd sandbox launcher.
 *
 * The sandbox's executor starts this, as root inside the sandbox's
 * namespaces, Landlock and seccomp (all inherited), with stdin, stdout and
 * stderr on 0-2, a pipe on 3, the cgroup.procs of the cgroups the program
 * runs in on 4 (cgroup v2: its CPU) and 5 (cgroup v1: its memory) (its
 * first step: it joins them, so that the program is counted there from
 * its fork), and the test's limits before the command:
 *
 *   launcher CPU FSIZE NOFILE STACK NPROC AS UID PROGRAM [ARG...]
 *
 * CPU is whole seconds of CPU time, FSIZE, STACK and AS bytes, NOFILE and
 * NPROC counts; AS -1 sets no address space limit, UID -1 keeps the uid
 * (unsafe mode: no uid to drop to, NPROC then unset). It sets the limits,
 * drops to UID, forks; the child execs the command, and this process waits
 * for it and writes one record (struct record) to descriptor 3 saying how
 * it ended. A step that fails before the exec writes a record of its own.
 *
 * Why a process in between: the kernel's peak resident set of a process
 * (ru_maxrss) counts, from its fork until its exec, the pages of the
 * process it was forked from; forked from this static binary, a program
 * reports its own peak. And the record pipe is close-on-exec: the command
 * never holds it, so it cannot forge a record, and its end of file says
 * this process exited.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { EXITED = 1, EXEC_FAILED = 2, SETUP_FAILED = 3 };

/* The steps before the exec, named in a SETUP_FAILED record. */
enum { STEP_ARGS = 1, STEP_RLIMIT, STEP_GROUPS, STEP_GID, STEP_UID, STEP_FORK, STEP_SIGNALS, STEP_CGROUP };

/* 32 bytes, native byte order (x86-64: little-endian). */
struct record {
	int32_t kind;   /* EXITED, EXEC_FAILED or SETUP_FAILED */
	int32_t value;  /* the wait status, or the errno */
	int64_t cpu_us; /* user + system CPU of the command and its reaped descendants */
	int64_t maxrss_kb;
	int64_t step; /* SETUP_FAILED: the step */
};

static void put(const struct record *r)
{
	const char *p = (const char *)r;
	size_t left = sizeof *r;
	while (left > 0) {
		ssize_t n = write(3, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		left -= (size_t)n;
	}
}

static int fail(int step, int err)
{
	struct record r = {SETUP_FAILED, err, 0, 0, step};
	put(&r);
	return 125;
}

static int number(const char *s, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

static int limit(int resource, long long soft, long long hard)
{
	struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
	return setrlimit(resource, &rl);
}

int main(int argc, char **argv)
{
	long long v[7];
	if (argc < 9)
		return fail(STEP_ARGS, EINVAL);
	if (fcntl(3, F_SETFD, FD_CLOEXEC) != 0)
		return 121;
	for (int i = 0; i < 7; i++)
		if (!number(argv[i + 1], &v[i]))
			return fail(STEP_ARGS, EINVAL);
	long long cpu = v[0], fsize = v[1], nofile = v[2], stack = v[3], nproc = v[4], as = v[5], uid = v[6];

	/* "0" is the process that writes it. */
	for (int fd = 4; fd <= 5; fd++) {
		if (fcntl(fd, F_GETFD) >= 0) {
			if (write(fd, "0", 1) != 1)
				return fail(STEP_CGROUP, errno);
			close(fd);
		}
	}

	/* The signals a program starts with: default actions (past the output
	 * limit it is killed by SIGXFSZ, as it is when it writes to a closed
	 * pipe), none blocked. */
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
		return fail(STEP_SIGNALS, errno);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);

	if (limit(RLIMIT_CORE, 0, 0) != 0 || limit(RLIMIT_CPU, cpu, cpu + 1) != 0 ||
	    limit(RLIMIT_FSIZE, fsize, fsize) != 0 || limit(RLIMIT_NOFILE, nofile, nofile) != 0 ||
	    limit(RLIMIT_STACK, stack, stack) != 0)
		return fail(STEP_RLIMIT, errno);
	if (uid >= 0) {
		/* The launcher counts too. */
		if (limit(RLIMIT_NPROC, nproc + 1, nproc + 1) != 0)
			return fail(STEP_RLIMIT, errno);
		if (setgroups(0, NULL) != 0)
			return fail(STEP_GROUPS, errno);
		if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0)
			return fail(STEP_GID, errno);
		if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0)
			return fail(STEP_UID, errno);
	}
	umask(077);
	/* Last: a small static binary needs little address space. */
	if (as >= 0 && limit(RLIMIT_AS, as, as) != 0)
		return fail(STEP_RLIMIT, errno);

	pid_t pid = fork();
	if (pid < 0) {
		/* EAGAIN: the process limit (the program's own, which it
		 * shares with whatever it left running). */
		struct record r = {EXEC_FAILED, errno, 0, 0, STEP_FORK};
		put(&r);
		return 122;
	}
	if (pid == 0) {
		execve(argv[8], argv + 8, environ);
		struct record r = {EXEC_FAILED, errno, 0, 0, 0};
		put(&r);
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR)
			return 123;
	}
	struct record r = {EXITED, status, 0, ru.ru_maxrss, 0};
	r.cpu_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
		   (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	put(&r);
	return 0;
}
