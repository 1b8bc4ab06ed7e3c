/*
 * The benchmark runner: runs what "bench=" names and prints each result as
 * a "bench-csv:" line (see include/quire/kbench.h and docs/bench.md). The
 * file builds into the kernel and into the host benchmark programs.
 */
#include <quire/kbench.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/time.h>

#define MAX_SELECTED 32

/* Results go to the console without timestamps, whatever the loglevel. */
#define raw(fmt, ...) printk(KERN_RAW fmt, ##__VA_ARGS__)

extern const struct kbench __start_kbench[], __stop_kbench[];

const struct kbench *kbench_registered(size_t *count)
{
	*count = (size_t)(__stop_kbench - __start_kbench);
	return __start_kbench;
}

u64 kbench_div_milli(u64 num, u64 den)
{
	if (!den)
		return 0;
	/* Quotient and remainder apart: num * 1000 could overflow. */
	return num / den * 1000 + num % den * 1000 / den;
}

u64 kbench_median(u64 *v, unsigned int n)
{
	if (!n)
		return 0;
	for (unsigned int i = 1; i < n; i++) {
		u64 x = v[i];
		unsigned int j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	/* An even count takes the lower middle: a value that was measured. */
	return v[(n - 1) / 2];
}

/* 4096 -> "4K", 2 MiB -> "2M", the units of the reference tables. */
static void size_label(char *buf, size_t len, unsigned long bytes)
{
	static const char units[] = "KMGT";
	unsigned long v = bytes;
	int u = -1;

	if (!bytes) {
		snprintf(buf, len, "-");
		return;
	}
	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%luB", v);
	else
		snprintf(buf, len, "%lu%c", v, units[u]);
}

void kbench_report(const char *benchmark, const char *bcase, unsigned long folio_bytes,
		   const char *mode, const char *metric, u64 value_milli, const char *unit)
{
	char size[16];
	char value[32];

	size_label(size, sizeof(size), folio_bytes);
	if (value_milli % 1000)
		snprintf(value, sizeof(value), "%llu.%03llu",
			 (unsigned long long)(value_milli / 1000),
			 (unsigned long long)(value_milli % 1000));
	else
		snprintf(value, sizeof(value), "%llu", (unsigned long long)(value_milli / 1000));
	raw("bench-csv: %s,%s,%s,%s,%s,%s,%s\n", benchmark, bcase, size, mode, metric,
	    value, unit);
}

static const struct kbench *find_bench(const char *name, size_t len)
{
	size_t n;
	const struct kbench *b = kbench_registered(&n);

	for (size_t i = 0; i < n; i++)
		if (strlen(b[i].name) == len && !strncmp(b[i].name, name, len))
			return &b[i];
	return NULL;
}

static int run_one(const struct kbench *b)
{
	u64 start = ktime_get_ns();
	int err;

	raw("bench: %s: %s\n", b->name, b->help);
	err = b->run();
	if (err)
		raw("bench: %s: FAILED (error %d)\n", b->name, err);
	else
		raw("bench: %s: done in %llu ms\n", b->name,
		    (unsigned long long)((ktime_get_ns() - start) / 1000000));
	return err ? 1 : 0;
}

/* Is all[i] named "-name" in the rest of an "all,-a,-b" spec? */
static bool excluded(const struct kbench *b, const char *rest)
{
	for (const char *p = rest; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len > 1 && *p == '-' && strlen(b->name) == len - 1 &&
		    !strncmp(b->name, p + 1, len - 1))
			return true;
		p += len + (comma ? 1 : 0);
	}
	return false;
}

int kbench_run(const char *spec)
{
	size_t n;
	const struct kbench *all = kbench_registered(&n);
	int failed = 0, ran = 0;

	if (!strcmp(spec, "all") || !strncmp(spec, "all,", 4)) {
		/* "all,-a,-b": all but a and b (scripts/bench.py boots some apart). */
		for (const char *p = spec + 3; *p;) {
			const char *comma = strchr(p + 1, ',');
			size_t len = comma ? (size_t)(comma - p - 1) : strlen(p + 1);

			if (len < 2 || p[1] != '-' || !find_bench(p + 2, len - 1)) {
				raw("bench: '%.*s' after all: only -NAME of a benchmark\n", (int)len, p + 1);
				failed++;
			}
			p += len + 1;
		}
		for (size_t i = 0; i < n; i++) {
			if (excluded(&all[i], spec + 3))
				continue;
			failed += run_one(&all[i]);
			ran++;
		}
	} else {
		for (const char *p = spec; *p && ran < MAX_SELECTED;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			const struct kbench *b = find_bench(p, len);

			if (b) {
				failed += run_one(b);
			} else if (len) {
				raw("bench: no benchmark named '%.*s'\n", (int)len, p);
				failed++;
			}
			ran += len ? 1 : 0;
			p += len + (comma ? 1 : 0);
		}
	}
	raw("bench: %d run, %d failed\n", ran, failed);
	return failed;
}
