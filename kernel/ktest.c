/*
 * The KTAP test runner. Output (KTAP version 1, 4 spaces per nesting level):
 *
 *	KTAP version 1
 *	1..2
 *	    KTAP version 1
 *	    # Subtest: boot
 *	    1..3
 *	    ok 1 cmdline_saved
 *	    # mmap_present: EXPECTATION FAILED at tests/kernel/boot_test.c:30
 *	    ...
 *	    not ok 2 mmap_present
 *	    ok 3 rsdp_checksum # SKIP no ACPI
 *	# boot: pass:1 fail:1 skip:1 total:3
 *	not ok 1 boot
 *	...
 *
 * Each case runs under setjmp so that a failed KASSERT, a skip or a crash
 * ends that case only.
 */
#define pr_fmt(fmt) "ktest: " fmt
#include <quire/ktest.h>
#include <quire/arch_hooks.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/cmdline.h>
#include <quire/percpu.h>
#include <quire/sched.h>
#include <asm/setjmp.h>
#include <asm/irqflags.h>
#include <asm/irq.h>
#include <quire/time.h>

extern const struct ktest_suite __start_ktest_suites[], __stop_ktest_suites[];

static struct ktest *current_test;
/* The case being run. Static: it must outlive a longjmp out of a crash. */
static struct ktest case_state;
static jmp_buf case_env;
static struct task *case_task;
static u64 case_started_ns;
static bool case_reported_hung;

/* A case running longer than this gets every CPU's backtrace printed, once. */
#define KTEST_HUNG_NS (20 * NSEC_PER_SEC)

/*
 * The timer tick hook, on every CPU: report a case that seems hung, with
 * every CPU's backtrace.
 */
static void ktest_watchdog_tick(void)
{
	u64 started = __atomic_load_n(&case_started_ns, __ATOMIC_RELAXED);

	if (!current_test || !started || ktime_get_ns() - started < KTEST_HUNG_NS)
		return;
	if (__atomic_exchange_n(&case_reported_hung, true, __ATOMIC_SEQ_CST))
		return;
	printk(KERN_RAW "    # %s: still running after %llu s; backtraces of every CPU follow\n",
	       case_state.name, (unsigned long long)(KTEST_HUNG_NS / NSEC_PER_SEC));
	trigger_all_cpu_backtrace();
}

/* KTAP lines go to the console without timestamps, whatever the loglevel. */
#define ktap(fmt, ...) printk(KERN_RAW fmt, ##__VA_ARGS__)

const struct ktest_suite *ktest_suites(size_t *count)
{
	*count = (size_t)(__stop_ktest_suites - __start_ktest_suites);
	return __start_ktest_suites;
}

static __noreturn void end_case(struct ktest *t)
{
	longjmp(*(jmp_buf *)t->abort_env, 1);
}

static void fail_header(struct ktest *t, const char *file, int line)
{
	t->status = KTEST_FAIL;
	ktap("    # %s: EXPECTATION FAILED at %s:%d\n", t->name, file, line);
}

void ktest_fail_int(struct ktest *t, bool fatal, const char *file, int line,
		    const char *left, const char *op, const char *right,
		    long long lv, long long rv)
{
	fail_header(t, file, line);
	ktap("    Expected %s %s %s, but\n", left, op, right);
	ktap("        %s == %lld (0x%llx)\n", left, lv, (unsigned long long)lv);
	ktap("        %s == %lld (0x%llx)\n", right, rv, (unsigned long long)rv);
	if (fatal)
		end_case(t);
}

void ktest_fail_str(struct ktest *t, bool fatal, const char *file, int line,
		    const char *left, const char *op, const char *right,
		    const char *lv, const char *rv)
{
	fail_header(t, file, line);
	ktap("    Expected %s %s %s, but\n", left, op, right);
	ktap("        %s == \"%s\"\n", left, lv ? lv : "(null)");
	ktap("        %s == \"%s\"\n", right, rv ? rv : "(null)");
	if (fatal)
		end_case(t);
}

void ktest_fail_msg(struct ktest *t, bool fatal, const char *file, int line,
		    const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail_header(t, file, line);
	ktap("    %s\n", msg);
	if (fatal)
		end_case(t);
}

void ktest_skip(struct ktest *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->skip_reason, sizeof(t->skip_reason), fmt, ap);
	va_end(ap);
	if (t->status == KTEST_PASS)	/* a failure before the skip stands */
		t->status = KTEST_SKIP;
	end_case(t);
}

/*
 * The trap crash hook, called after the exception report: when a test case
 * is running, mark it crashed and continue with the next case (does not
 * return). Otherwise returns and the caller panics.
 */
static void ktest_recover_from_crash(const char *what)
{
	struct ktest *t = current_test;

	/* Only the task running the case can go back to the runner. */
	if (!t || this_cpu_read(current_task) != case_task)
		return;
	/*
	 * ... and only from the case's own context: a crash inside an interrupt
	 * handler, or with a spinlock held, leaves state the runner cannot
	 * repair (an unacknowledged interrupt, a held lock): the caller panics.
	 */
	if (this_cpu()->irq_depth || this_cpu()->preempt_count || this_cpu()->spinlocks_held) {
		ktap("    # %s: crashed in a context the runner cannot recover from "
		     "(irq_depth %d, preempt_count %d, spinlocks held %d)\n", t->name,
		     this_cpu()->irq_depth, this_cpu()->preempt_count, this_cpu()->spinlocks_held);
		return;
	}
	case_task->fault_catch = NULL;	/* any catch the case armed is gone with its frame */
	t->status = KTEST_FAIL;
	ktap("    # %s: crashed: %s (report and backtrace above)\n", t->name, what);
	end_case(t);
}

/* Not inlined: backtraces from a crashed case should name it. */
static __noinline enum ktest_status run_case(const struct ktest_case *c)
{
	struct ktest *t = &case_state;
	unsigned long flags = arch_local_irq_save();

	arch_local_irq_restore(flags);	/* just to know whether interrupts were on */
	memset(t, 0, sizeof(*t));
	t->name = c->name;
	t->status = KTEST_PASS;
	t->abort_env = &case_env;
	case_task = this_cpu_read(current_task);
	case_reported_hung = false;
	case_started_ns = ktime_get_ns();
	current_test = t;
	if (setjmp(case_env) != 0) {
		/* Ended early (assertion, skip, crash): interrupts as they were. */
		arch_local_irq_restore(flags);
	} else {
		c->run(t);
	}
	current_test = NULL;
	case_started_ns = 0;
	return t->status;
}

/* Run one suite; returns its failed-case count. */
static int run_suite(const struct ktest_suite *s, int number)
{
	int pass = 0, fail = 0, skip = 0;

	ktap("    KTAP version 1\n");
	ktap("    # Subtest: %s\n", s->name);
	ktap("    1..%zu\n", s->ncases);
	for (size_t i = 0; i < s->ncases; i++) {
		const struct ktest_case *c = &s->cases[i];
		enum ktest_status st = run_case(c);

		if (st == KTEST_PASS) {
			pass++;
			ktap("    ok %zu %s\n", i + 1, c->name);
		} else if (st == KTEST_SKIP) {
			skip++;
			ktap("    ok %zu %s # SKIP %s\n", i + 1, c->name,
			     case_state.skip_reason);
		} else {
			fail++;
			ktap("    not ok %zu %s\n", i + 1, c->name);
		}
	}
	ktap("# %s: pass:%d fail:%d skip:%d total:%zu\n", s->name, pass, fail, skip, s->ncases);
	if (fail)
		ktap("not ok %d %s\n", number, s->name);
	else if (skip == (int)s->ncases && skip)
		ktap("ok %d %s # SKIP\n", number, s->name);
	else
		ktap("ok %d %s\n", number, s->name);
	return fail;
}

static const struct ktest_suite *find_suite(const char *name, size_t len)
{
	size_t n;
	const struct ktest_suite *s = ktest_suites(&n);

	for (size_t i = 0; i < n; i++)
		if (strlen(s[i].name) == len && !strncmp(s[i].name, name, len))
			return &s[i];
	return NULL;
}

/*
 * ktest.exclude=a,b: suites not to run, even when named. The runner knows
 * which suites a job should produce (from ktest= and tests/kernel/), so an
 * excluded suite is reported there as one that vanished: its self-test
 * uses this to prove that a suite that stops running is a failure.
 */
static char ktest_exclude[256];
CMDLINE_STRING("ktest.exclude", ktest_exclude,
	       "suites not to run (the runner then reports them as missing)");

/* The next name of a comma-separated list: *p advances past it. */
static bool next_name(const char **p, const char **name, size_t *len)
{
	while (**p == ',')
		(*p)++;
	if (!**p)
		return false;
	*name = *p;
	while (**p && **p != ',')
		(*p)++;
	*len = (size_t)(*p - *name);
	return true;
}

static bool in_list(const char *list, const char *name)
{
	const char *w;
	size_t len;

	while (next_name(&list, &w, &len))
		if (strlen(name) == len && !strncmp(name, w, len))
			return true;
	return false;
}

/*
 * Calls fn for each suite the spec selects, in order, numbering them from
 * 1; a name that matches no suite is passed with s == NULL. Returns the sum
 * of fn's results, or the count of selected suites when fn is NULL.
 */
static int for_each_selected(const char *spec,
			     int (*fn)(const struct ktest_suite *s, const char *name,
				       size_t len, int number))
{
	size_t n, len;
	const struct ktest_suite *all = ktest_suites(&n), *s;
	const char *p = spec, *name;
	int number = 0, sum = 0;

	if (!strcmp(spec, "all")) {
		for (size_t i = 0; i < n; i++) {
			s = &all[i];
			if (s->explicit_only || in_list(ktest_exclude, s->name))
				continue;
			number++;
			sum += fn ? fn(s, s->name, strlen(s->name), number) : 1;
		}
		return sum;
	}
	while (next_name(&p, &name, &len)) {
		s = find_suite(name, len);
		if (s && in_list(ktest_exclude, s->name))
			continue;
		number++;
		sum += fn ? fn(s, name, len, number) : 1;
	}
	return sum;
}

/* Runs one selected suite; returns its failed-case count. */
static int run_selected(const struct ktest_suite *s, const char *name, size_t len, int number)
{
	if (s)
		return run_suite(s, number);
	ktap("# ktest: no suite named '%.*s'\n", (int)len, name);
	ktap("not ok %d %.*s # no such suite\n", number, (int)len, name);
	return 1;
}

int ktest_run(const char *spec)
{
	int nsel = for_each_selected(spec, NULL);

	set_trap_crash_hook(ktest_recover_from_crash);
	set_timer_tick_hook(ktest_watchdog_tick);
	ktap("KTAP version 1\n");
	ktap("1..%d\n", nsel);
	if (!nsel) {
		/* Running nothing is not a pass: the runner fails an empty plan too. */
		ktap("# ktest: no suite selected by ktest=%s\n", spec);
		return 1;
	}
	return for_each_selected(spec, run_selected);
}
