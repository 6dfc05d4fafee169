/*
 * mainstack.c: pthread_getattr_np for the main thread, in a sandbox that
 * does not let programs read /proc.
 *
 * glibc finds the main thread's stack in /proc/self/maps; where it cannot
 * read it, pthread_getattr_np fails for the main thread. Runtimes that
 * need the stack's bounds then die: Mono aborts at start, and D's garbage
 * collector scans from address 0 at its first collection (SIGSEGV). The
 * pool preloads this library (LD_PRELOAD) into the compilers and programs
 * of those languages: it asks glibc first and, when that fails for the
 * main thread, answers as glibc would from the maps: the stack ends at the
 * page above __libc_stack_end and is RLIMIT_STACK long (8 MiB when that is
 * unlimited).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_stack_end;

int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr) {
	int (*real)(pthread_t, pthread_attr_t *) = (int (*)(pthread_t, pthread_attr_t *))dlsym(RTLD_NEXT, "pthread_getattr_np");
	int r = real ? real(thread, attr) : ENOSYS;
	/* Only the main thread asking about itself: its thread id is the
	 * process id. */
	if (r == 0 || !pthread_equal(thread, pthread_self()) || getpid() != (pid_t)syscall(SYS_gettid))
		return r;
	size_t size = 8 << 20;
	struct rlimit lim;
	if (getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
		size = lim.rlim_cur;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t end = ((uintptr_t)__libc_stack_end + page - 1) & ~(page - 1);
	if (pthread_attr_init(attr) != 0)
		return r;
	return pthread_attr_setstack(attr, (void *)(end - size), size);
}
