// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-test: the in-VM kernel test suite runner.
 *
 *	kdbus-test [--list] [--timeout SEC] [NAME-or-GROUP ...]
 *
 * Runs every registered test (or those named: "group/name" or "group"),
 * each in a forked child in its own process group with its own freshly
 * made bus, and prints TAP 13 on stdout. A test that outlives its timeout
 * is killed (with its whole process group) and fails. Exit status 0 iff
 * no test failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define DEFAULT_TIMEOUT 60

extern const struct kdbus_test *__start_kdbus_tests[];
extern const struct kdbus_test *__stop_kdbus_tests[];

/* one page shared between the runner and a test child */
static char *shared_skip_reason;
#define SKIP_REASON_LEN 256

void kdbus_diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* one write per line so that forked helpers do not interleave */
	printf("# %s\n", buf);
	fflush(stdout);
}

void kdbus_test_skip_reason(const char *fmt, ...)
{
	va_list ap;

	if (!shared_skip_reason)
		return;
	va_start(ap, fmt);
	vsnprintf(shared_skip_reason, SKIP_REASON_LEN, fmt, ap);
	va_end(ap);
}

const char *kdbus_errname(long err)
{
	static const struct { int e; const char *n; } names[] = {
#define E(x) { x, #x }
		E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO),
		E(E2BIG), E(EBADF), E(EAGAIN), E(ENOMEM), E(EACCES),
		E(EFAULT), E(EBUSY), E(EEXIST), E(ENODEV), E(ENOTDIR),
		E(EISDIR), E(EINVAL), E(EMFILE), E(ENOTTY), E(ETXTBSY),
		E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE),
		E(EDOM), E(ENAMETOOLONG), E(ENOSYS), E(ENOTEMPTY),
		E(EBADSLT), E(ECOMM), E(EPROTO), E(EBADMSG), E(ENOTUNIQ),
		E(EBADFD), E(EREMCHG), E(EDESTADDRREQ), E(EMSGSIZE),
		E(EOPNOTSUPP), E(EADDRINUSE), E(EADDRNOTAVAIL),
		E(ECONNRESET), E(ENOBUFS), E(ESHUTDOWN), E(ETIMEDOUT),
		E(EXFULL), E(EMEDIUMTYPE), E(ECANCELED), E(EREMOTEIO),
		E(EOVERFLOW), E(ERANGE),
#undef E
	};
	static char buf[32];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(buf, sizeof(buf), "errno %ld", err);
	return buf;
}

static int setup_env(struct kdbus_test_env *env, const struct kdbus_test *t)
{
	int fd;

	env->group = t->group;
	env->name = t->name;
	env->control_fd = -1;
	env->bus_owner_fd = -1;
	if (t->flags & KDBUS_TEST_NO_BUS)
		return TEST_OK;

	fd = kdbus_bus_new(KDBUS_MAKE_ACCESS_WORLD, env->bus_name,
			   sizeof(env->bus_name));
	if (fd == -ENOTTY)
		SKIP("BUS_MAKE: ENOTTY (not implemented)");
	if (fd < 0) {
		DIAG("cannot make the test bus: %s", kdbus_errname(-fd));
		return TEST_FAIL;
	}
	env->bus_owner_fd = fd;
	snprintf(env->bus_dir, sizeof(env->bus_dir), "%s/%s", KDBUS_MOUNT,
		 env->bus_name);
	snprintf(env->bus_path, sizeof(env->bus_path), "%s/bus", env->bus_dir);
	env->control_fd = kdbus_open_control();
	if (env->control_fd < 0) {
		DIAG("cannot open %s: %s", KDBUS_CONTROL,
		     kdbus_errname(-env->control_fd));
		return TEST_FAIL;
	}
	return TEST_OK;
}

/*
 * KDBUS_TEST_FAULT_INJECT=1 (scripts/fault-inject.sh): the test child, and
 * only it and what it forks, is subject to the task-filtered failslab and
 * fail_page_alloc of the debug kernel, from the moment its test bus exists;
 * the runner's own fork, exec and bookkeeping are not.
 */
static void fault_inject_self(void)
{
	const char *s = getenv("KDBUS_TEST_FAULT_INJECT");
	int fd;

	if (!s || strcmp(s, "1"))
		return;
	fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		DIAG("cannot enable fault injection: %m");
		_exit(TEST_FAIL);
	}
	close(fd);
}

static int run_child(const struct kdbus_test *t)
{
	struct kdbus_test_env env;
	int r;

	memset(&env, 0, sizeof(env));
	r = setup_env(&env, t);
	if (r != TEST_OK)
		return r;
	/* after the test bus exists: at 2% failslab, BUS_MAKE alone would
	 * fail more than half of the tests before they start */
	fault_inject_self();
	r = t->fn(&env);
	fflush(stdout);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* returns TEST_OK, TEST_FAIL or TEST_SKIP */
static int run_test(const struct kdbus_test *t, unsigned int def_timeout)
{
	unsigned int timeout = t->timeout ? t->timeout : def_timeout;
	double deadline;
	int status, r;
	pid_t pid;

	memset(shared_skip_reason, 0, SKIP_REASON_LEN);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		DIAG("fork: %m");
		return TEST_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		_exit(run_child(t));
	}
	setpgid(pid, pid);

	deadline = now_s() + timeout;
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			DIAG("waitpid: %m");
			return TEST_FAIL;
		}
		if (now_s() > deadline) {
			DIAG("timeout after %u s, killing the test", timeout);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			return TEST_FAIL;
		}
		kdbus_msleep(5);
	}
	/* reap helpers the test left behind */
	kill(-pid, SIGKILL);

	if (WIFSIGNALED(status)) {
		DIAG("test killed by signal %d (%s)", WTERMSIG(status),
		     strsignal(WTERMSIG(status)));
		return TEST_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case TEST_OK:
		return TEST_OK;
	case TEST_SKIP:
		return TEST_SKIP;
	default:
		return TEST_FAIL;
	}
}

static int cmp_tests(const void *a, const void *b)
{
	const struct kdbus_test *x = *(const struct kdbus_test * const *)a;
	const struct kdbus_test *y = *(const struct kdbus_test * const *)b;

	int c = strcmp(x->file, y->file);

	/* file order, then definition order */
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int selected(const struct kdbus_test *t, int argc, char **argv)
{
	char full[256];
	int i;

	if (argc == 0)
		return 1;
	snprintf(full, sizeof(full), "%s/%s", t->group, t->name);
	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], full) || !strcmp(argv[i], t->group))
			return 1;
	return 0;
}

/*
 * Tests drop to other uids; they must be able to reach /sys/fs/kdbus.
 * A busybox initramfs may unpack "/" as 0700: open it up (as root).
 */
static void ensure_root_searchable(void)
{
	struct stat st;

	if (stat("/", &st) || (st.st_mode & 0001))
		return;
	if (getuid() == 0 && chmod("/", st.st_mode | 0555) == 0)
		printf("# note: \"/\" was mode %04o, made it searchable for the setuid tests\n",
		       st.st_mode & 07777);
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--list] [--timeout SEC] [NAME-or-GROUP ...]\n"
		"  NAME is group/name, GROUP is the part before '/'\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const struct kdbus_test **p, **tests, **tests_end;
	size_t ntests;
	unsigned int timeout = DEFAULT_TIMEOUT;
	int list = 0, n = 0, i = 0, failed = 0, passed = 0, skipped = 0;
	int c, a;

	while ((c = getopt_long(argc, argv, "lt:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = 1;
			break;
		case 't':
			timeout = strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;

	ntests = __stop_kdbus_tests - __start_kdbus_tests;
	tests = calloc(ntests + 1, sizeof(*tests));
	if (!tests)
		return 1;
	memcpy(tests, __start_kdbus_tests, ntests * sizeof(*tests));
	qsort(tests, ntests, sizeof(*tests), cmp_tests);
	tests_end = tests + ntests;

	/* every argument must name at least one test */
	for (a = 0; a < argc; a++) {
		int found = 0;

		for (p = tests; p < tests_end; p++)
			if (selected(*p, 1, &argv[a]))
				found = 1;
		if (!found) {
			fprintf(stderr, "%s: no test or group named '%s'\n",
				"kdbus-test", argv[a]);
			return 2;
		}
	}

	for (p = tests; p < tests_end; p++)
		if (selected(*p, argc, argv))
			n++;

	if (list) {
		for (p = tests; p < tests_end; p++)
			if (selected(*p, argc, argv))
				printf("%s/%s\n", (*p)->group, (*p)->name);
		return 0;
	}

	shared_skip_reason = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_skip_reason == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("TAP version 13\n1..%d\n", n);
	ensure_root_searchable();
	fflush(stdout);
	for (p = tests; p < tests_end; p++) {
		const struct kdbus_test *t = *p;
		int r;

		if (!selected(t, argc, argv))
			continue;
		i++;
		r = run_test(t, timeout);
		switch (r) {
		case TEST_OK:
			passed++;
			printf("ok %d - %s/%s\n", i, t->group, t->name);
			break;
		case TEST_SKIP:
			skipped++;
			printf("ok %d - %s/%s # SKIP %s\n", i, t->group, t->name,
			       shared_skip_reason[0] ? shared_skip_reason :
						       "skipped");
			break;
		default:
			failed++;
			printf("not ok %d - %s/%s\n", i, t->group, t->name);
			break;
		}
		fflush(stdout);
	}
	printf("# %d passed, %d skipped, %d failed\n", passed, skipped, failed);
	return failed ? 1 : 0;
}
