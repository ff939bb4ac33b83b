/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test registration and assertions of the in-VM kdbus test suite.
 *
 * A test file registers a test with
 *
 *	KDBUS_TEST(hello, pool_size_zero, 0)
 *	{
 *		... return TEST_OK;
 *	}
 *
 * which defines the function and drops a pointer to its descriptor into
 * the "kdbus_tests" linker section; the runner walks that section, so no
 * central list has to be edited. Tests run in a forked child each, with a
 * freshly made bus (env->bus_path) unless KDBUS_TEST_NO_BUS is given.
 *
 * Results: TEST_OK, TEST_FAIL, TEST_SKIP (with kdbus_test_skip_reason()).
 * The ASSERT_* macros return TEST_FAIL with a diagnostic, or TEST_SKIP when
 * an ioctl failed with ENOTTY (the module does not implement it yet) and
 * ENOTTY was not the expected result.
 */
#ifndef KDBUS_TEST_H
#define KDBUS_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
	TEST_OK = 0,
	TEST_FAIL = 1,
	TEST_SKIP = 77,
};

/* test flags */
#define KDBUS_TEST_NO_BUS	(1u << 0)	/* do not make a bus for the test */

struct kdbus_test_env {
	const char *group;
	const char *name;
	int control_fd;		/* open on /sys/fs/kdbus/control (fresh) */
	int bus_owner_fd;	/* the BUS_OWNER handle of the test's bus */
	char bus_name[64];	/* "<uid>-<...>" */
	char bus_dir[128];	/* /sys/fs/kdbus/<bus_name> */
	char bus_path[256];	/* /sys/fs/kdbus/<bus_name>/bus */
};

struct kdbus_test {
	const char *group;
	const char *name;
	int (*fn)(struct kdbus_test_env *env);
	unsigned int flags;
	unsigned int timeout;	/* seconds, 0 = default */
	const char *file;
	unsigned int line;
};

#define KDBUS_TEST_FULL(_group, _name, _flags, _timeout)			\
	static int kdbus_test_fn_##_group##_##_name(struct kdbus_test_env *env); \
	static const struct kdbus_test kdbus_test_##_group##_##_name = {	\
		.group = #_group,						\
		.name = #_name,							\
		.fn = kdbus_test_fn_##_group##_##_name,				\
		.flags = (_flags),						\
		.timeout = (_timeout),						\
		.file = __FILE__,						\
		.line = __LINE__,						\
	};								\
	static const struct kdbus_test *kdbus_test_ptr_##_group##_##_name	\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&kdbus_test_##_group##_##_name;				\
	static int kdbus_test_fn_##_group##_##_name(				\
		struct kdbus_test_env *env __attribute__((unused)))

#define KDBUS_TEST(_group, _name, _flags) KDBUS_TEST_FULL(_group, _name, _flags, 0)

/* diagnostics: "# ..." lines on stdout, flushed at once */
void kdbus_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* remember why the test is skipped (shared with the runner) */
void kdbus_test_skip_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define DIAG(...) kdbus_diag(__VA_ARGS__)

#define FAIL(...) do {							\
		kdbus_diag("%s:%d: ", __FILE__, __LINE__);		\
		kdbus_diag(__VA_ARGS__);				\
		return TEST_FAIL;					\
	} while (0)

#define SKIP(...) do {							\
		kdbus_test_skip_reason(__VA_ARGS__);			\
		return TEST_SKIP;					\
	} while (0)

/* a condition that must hold */
#define ASSERT(cond) do {						\
		if (!(cond)) {						\
			kdbus_diag("%s:%d: assertion failed: %s",	\
				   __FILE__, __LINE__, #cond);		\
			return TEST_FAIL;				\
		}							\
	} while (0)

/* equality of two integers, printed on failure */
#define ASSERT_EQ(a, b) do {						\
		unsigned long long _a = (unsigned long long)(a);	\
		unsigned long long _b = (unsigned long long)(b);	\
		if (_a != _b) {						\
			kdbus_diag("%s:%d: %s == %s failed: 0x%llx != 0x%llx (%lld != %lld)", \
				   __FILE__, __LINE__, #a, #b, _a, _b,	\
				   (long long)_a, (long long)_b);	\
			return TEST_FAIL;				\
		}							\
	} while (0)

/*
 * Expressions returning 0 (or >= 0) on success and a negative errno on
 * failure (all kdbus_* helpers of kdbus-util.h).
 */
#define ASSERT_OK(expr) do {						\
		long _r = (long)(expr);					\
		if (_r == -ENOTTY) {					\
			kdbus_test_skip_reason("%s: ENOTTY (not implemented)", #expr); \
			return TEST_SKIP;				\
		}							\
		if (_r < 0) {						\
			kdbus_diag("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, \
				   #expr, kdbus_errname(-_r), strerror(-_r)); \
			return TEST_FAIL;				\
		}							\
	} while (0)

#define ASSERT_ERR(expr, err) do {					\
		long _r = (long)(expr);					\
		long _e = (err);					\
		if (_r == -ENOTTY && _e != ENOTTY) {			\
			kdbus_test_skip_reason("%s: ENOTTY (not implemented)", #expr); \
			return TEST_SKIP;				\
		}							\
		if (_r != -_e) {					\
			kdbus_diag("%s:%d: %s: expected %s, got %s",	\
				   __FILE__, __LINE__, #expr,		\
				   kdbus_errname(_e),			\
				   _r >= 0 ? "success" : kdbus_errname(-_r)); \
			return TEST_FAIL;				\
		}							\
	} while (0)

/* Propagate a sub-result (helpers written as int f(...) returning TEST_*) */
#define RUN(expr) do {							\
		int _t = (expr);					\
		if (_t != TEST_OK)					\
			return _t;					\
	} while (0)

const char *kdbus_errname(long err);

#endif /* KDBUS_TEST_H */
