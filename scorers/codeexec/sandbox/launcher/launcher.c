/* rewardd sandbox launcher.
 *
 * The fork server's child confines itself (uid, rlimits, descriptors) and
 * execs this with the command to run: launcher PROGRAM [ARG...]. It forks;
 * the child execs the command, and this process waits for it and writes
 * one record (struct record) to descriptor 3 saying how it ended. An exec
 * that fails writes a record of its own first.
 *
 * Why a process in between: the kernel's peak resident set of a process
 * (ru_maxrss) counts, from its fork until its exec, the pages of the
 * process it was forked from. Forked from the fork server, every program
 * would report the interpreter's ~15 MB; forked from this static binary,
 * it reports its own peak.
 *
 * Descriptor 3 is close-on-exec: the command never holds it, so it cannot
 * forge a record, and its end of file says this process exited.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { EXITED = 1, EXEC_FAILED = 2 };

/* 32 bytes, native byte order (x86-64: little-endian). */
struct record {
	int32_t kind;   /* EXITED or EXEC_FAILED */
	int32_t value;  /* the wait status, or the exec's errno */
	int64_t cpu_us; /* user + system CPU of the command and its reaped descendants */
	int64_t maxrss_kb;
	int64_t reserved;
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

int main(int argc, char **argv)
{
	if (argc < 2)
		return 120;
	if (fcntl(3, F_SETFD, FD_CLOEXEC) != 0)
		return 121;
	pid_t pid = fork();
	if (pid < 0) {
		struct record r = {EXEC_FAILED, errno, 0, 0, 0};
		put(&r);
		return 122;
	}
	if (pid == 0) {
		execve(argv[1], argv + 1, environ);
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
