/*
 * In-kernel tests, reported in KTAP version 1 (Linux's
 * Documentation/dev-tools/ktap.rst). A suite is a named list of cases; it
 * registers itself in the .ktest_suites linker section:
 *
 *	static void adds_up(struct ktest *t)
 *	{
 *		KEXPECT_EQ(t, 1 + 1, 2);
 *	}
 *	KTEST_SUITE(arith, KTEST_CASE(adds_up));
 *
 * "ktest=all" on the command line runs every suite (except the runner's own
 * self-tests, which only run when named); "ktest=a,b" runs suites a and b.
 * The machine then powers off with success only if nothing failed.
 *
 * KEXPECT_* record a failure and go on; KASSERT_* record it and end the
 * case. A case that crashes (an exception in kernel mode) is reported as
 * failed, with the exception report and backtrace, and the next case runs.
 */
#ifndef QUIRE_KTEST_H
#define QUIRE_KTEST_H

#include <quire/types.h>
#include <quire/compiler.h>

enum ktest_status {
	KTEST_PASS,
	KTEST_FAIL,
	KTEST_SKIP,
};

struct ktest {
	const char *name;		/* the case */
	enum ktest_status status;
	char skip_reason[96];
	void *abort_env;		/* jmp_buf of the runner, to end the case */
};

struct ktest_case {
	const char *name;
	void (*run)(struct ktest *t);
};

struct ktest_suite {
	const char *name;
	const struct ktest_case *cases;
	size_t ncases;
	bool explicit_only;	/* not part of "all": the runner's self-tests */
};

#define KTEST_CASE(fn) { #fn, fn }

#define __KTEST_SUITE(sname, explicit, ...)				\
	static const struct ktest_case __ktest_cases_##sname[] = { __VA_ARGS__ }; \
	static const struct ktest_suite __ktest_suite_##sname		\
	__section(".ktest_suites") __used __aligned(8) = {		\
		#sname, __ktest_cases_##sname,				\
		ARRAY_SIZE(__ktest_cases_##sname), explicit }

#define KTEST_SUITE(sname, ...) __KTEST_SUITE(sname, false, __VA_ARGS__)
/* A suite that runs only when named on the command line. */
#define KTEST_SUITE_EXPLICIT(sname, ...) __KTEST_SUITE(sname, true, __VA_ARGS__)

/* ---- checks ---- */

void ktest_fail_int(struct ktest *t, bool fatal, const char *file, int line,
		    const char *left, const char *op, const char *right,
		    long long lv, long long rv);
void ktest_fail_str(struct ktest *t, bool fatal, const char *file, int line,
		    const char *left, const char *op, const char *right,
		    const char *lv, const char *rv);
void ktest_fail_msg(struct ktest *t, bool fatal, const char *file, int line,
		    const char *fmt, ...) __printf(5, 6);
__noreturn void ktest_skip(struct ktest *t, const char *fmt, ...) __printf(2, 3);

/* Integers are compared as long long (pointers: use the _PTR_ forms). */
#define __KTEST_INT(t, fatal, a, op, b)					\
	do {								\
		long long __a = (long long)(a), __b = (long long)(b);	\
		if (!(__a op __b))					\
			ktest_fail_int(t, fatal, __FILE__, __LINE__,	\
				       #a, #op, #b, __a, __b);		\
	} while (0)

#define __KTEST_STR(t, fatal, a, op, b)					\
	do {								\
		const char *__a = (a), *__b = (b);			\
		if (!(__a && __b && strcmp(__a, __b) op 0))		\
			ktest_fail_str(t, fatal, __FILE__, __LINE__,	\
				       #a, #op, #b, __a, __b);		\
	} while (0)

#define __KTEST_TRUE(t, fatal, cond)					\
	do {								\
		if (!(cond))						\
			ktest_fail_msg(t, fatal, __FILE__, __LINE__,	\
				       "Expected %s to be true", #cond);\
	} while (0)

#define KEXPECT_TRUE(t, c)	__KTEST_TRUE(t, false, c)
#define KEXPECT_FALSE(t, c)	__KTEST_TRUE(t, false, !(c))
#define KEXPECT_EQ(t, a, b)	__KTEST_INT(t, false, a, ==, b)
#define KEXPECT_NE(t, a, b)	__KTEST_INT(t, false, a, !=, b)
#define KEXPECT_LT(t, a, b)	__KTEST_INT(t, false, a, <, b)
#define KEXPECT_LE(t, a, b)	__KTEST_INT(t, false, a, <=, b)
#define KEXPECT_GT(t, a, b)	__KTEST_INT(t, false, a, >, b)
#define KEXPECT_GE(t, a, b)	__KTEST_INT(t, false, a, >=, b)
#define KEXPECT_PTR_EQ(t, a, b)	__KTEST_INT(t, false, (uintptr_t)(a), ==, (uintptr_t)(b))
#define KEXPECT_PTR_NE(t, a, b)	__KTEST_INT(t, false, (uintptr_t)(a), !=, (uintptr_t)(b))
#define KEXPECT_STREQ(t, a, b)	__KTEST_STR(t, false, a, ==, b)
#define KEXPECT_STRNEQ(t, a, b)	__KTEST_STR(t, false, a, !=, b)

#define KASSERT_TRUE(t, c)	__KTEST_TRUE(t, true, c)
#define KASSERT_FALSE(t, c)	__KTEST_TRUE(t, true, !(c))
#define KASSERT_EQ(t, a, b)	__KTEST_INT(t, true, a, ==, b)
#define KASSERT_NE(t, a, b)	__KTEST_INT(t, true, a, !=, b)
#define KASSERT_LT(t, a, b)	__KTEST_INT(t, true, a, <, b)
#define KASSERT_LE(t, a, b)	__KTEST_INT(t, true, a, <=, b)
#define KASSERT_GT(t, a, b)	__KTEST_INT(t, true, a, >, b)
#define KASSERT_GE(t, a, b)	__KTEST_INT(t, true, a, >=, b)
#define KASSERT_PTR_EQ(t, a, b)	__KTEST_INT(t, true, (uintptr_t)(a), ==, (uintptr_t)(b))
#define KASSERT_STREQ(t, a, b)	__KTEST_STR(t, true, a, ==, b)

/* ---- running ---- */

/*
 * Run the suites named by spec ("all", or a comma-separated list) and print
 * KTAP. Returns the number of failed cases plus unknown suite names. Sets
 * the trap crash and timer tick hooks (quire/arch_hooks.h): a case that
 * crashes is reported and the next one runs; one that hangs is reported.
 */
int ktest_run(const char *spec);
/* The suites linked into the kernel. */
const struct ktest_suite *ktest_suites(size_t *count);

#endif
