/*
 * start_kernel: what runs once the architecture has set up the console,
 * the clock, exceptions, memory, interrupts and every CPU. It reports what
 * the loader gave us, builds the root file system and unpacks the initrd,
 * then runs the tests (or benchmarks) asked for on the command line and
 * powers off, or starts the first process.
 */
#include <quire/init.h>
#include <quire/bootinfo.h>
#include <quire/cmdline.h>
#include <quire/ktest.h>
#include <quire/kbench.h>
#include <quire/power.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/memory-failure.h>
#include <quire/process.h>
#include <quire/futex.h>
#include <quire/fs.h>
#include <quire/numa.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/console.h>
#include <quire/fs.h>
#include <quire/initrd.h>
#include <quire/string.h>

static char ktest_spec[256];
CMDLINE_STRING("ktest", ktest_spec,
	       "run in-kernel tests: 'all' or a comma-separated list of suites, then power off");

static char bench_spec[256];
CMDLINE_STRING("bench", bench_spec,
	       "run benchmarks: 'all' or a comma-separated list, then power off (make bench)");

static const char *mem_type_name(u32 type)
{
	switch (type) {
	case BOOT_MEM_AVAILABLE: return "available";
	case BOOT_MEM_ACPI_RECLAIMABLE: return "ACPI data";
	case BOOT_MEM_ACPI_NVS: return "ACPI NVS";
	case BOOT_MEM_BAD: return "unusable";
	default: return "reserved";
	}
}

static void report_boot_info(void)
{
	pr_info("boot: %s from %s%s\n", boot_protocol_name(boot_info.protocol),
		boot_info.loader[0] ? boot_info.loader : "an unnamed loader",
		boot_info.efi ? " (UEFI)" : "");
	pr_info("boot: command line: '%s'\n", boot_info.cmdline);
	for (u32 i = 0; i < boot_info.nr_mmap; i++) {
		const struct boot_mem_region *r = &boot_info.mmap[i];

		pr_info("boot: [mem 0x%016llx-0x%016llx] %s\n", (unsigned long long)r->base,
			(unsigned long long)(r->base + r->len - 1), mem_type_name(r->type));
	}
	pr_info("boot: %llu MiB available in %u regions\n",
		(unsigned long long)(bootinfo_available_bytes() >> 20), boot_info.nr_mmap);
	for (u32 i = 0; i < boot_info.nr_modules; i++)
		pr_info("boot: module %u at %#llx-%#llx '%s'\n", i,
			(unsigned long long)boot_info.modules[i].start,
			(unsigned long long)boot_info.modules[i].end,
			boot_info.modules[i].cmdline);
	if (boot_info.rsdp_len)
		pr_info("boot: ACPI RSDP revision %u handed over (%u bytes)\n",
			boot_info.rsdp[15], boot_info.rsdp_len);
	else
		pr_warn("boot: the loader gave no ACPI RSDP\n");
}

extern bool memstat_at_boot;

static char init_cmd[256] = "/bin/init";
CMDLINE_STRING("init", init_cmd,
	       "the first program and its arguments, e.g. init=\"/bin/sh -x\" (default /bin/init)");

/* Split "prog arg1 arg2" at spaces into argv (in place). */
static int split_args(char *s, const char *argv[], int max)
{
	int n = 0;

	while (*s && n < max - 1) {
		while (*s == ' ')
			*s++ = '\0';
		if (!*s)
			break;
		argv[n++] = s;
		while (*s && *s != ' ')
			s++;
	}
	argv[n] = NULL;
	return n;
}

/*
 * Start the first process from the initrd and wait for it. When it ends
 * (an init that powers off never does), the machine powers off with its
 * exit status, or 128 + the signal that killed it (quire/power.h says how
 * a status of 128 or more reaches the host).
 */
static __noreturn void run_init(void)
{
	const char *argv[16];
	const char *envp[] = { "HOME=/", "PATH=/bin:/sbin:/usr/bin:/usr/sbin:/tests", "TERM=linux", NULL };
	void *image;
	size_t size;
	struct task *t;
	int err, status;

	if (!split_args(init_cmd, argv, ARRAY_SIZE(argv))) {
		pr_err("init: empty init= command line\n");
		machine_power_off(QUIRE_EXIT_FAILURE);
	}
	err = kernel_read_file(NULL, argv[0], 64UL << 20, &image, &size);
	if (err) {
		pr_err("init: cannot read %s (error %d); was the initrd loaded? (make run does it)\n",
		       argv[0], err);
		machine_power_off(QUIRE_EXIT_FAILURE);
	}
	/* Its name is the program's, as Linux's exec gives it ("Name:" in /proc/self/status). */
	t = process_spawn(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], image, size,
			  argv, envp);
	kfree(image);
	if (!t) {
		pr_err("init: out of memory starting %s\n", argv[0]);
		machine_power_off(QUIRE_EXIT_FAILURE);
	}
	status = kthread_join(t);
	if (status < 0) {
		pr_err("init: %s could not be started (error %d)\n", argv[0], status);
		machine_power_off(QUIRE_EXIT_FAILURE);
	}
	if (WIFSIGNALED(status)) {
		/* As a shell reports it: 128 + the signal. */
		pr_err("init: %s was killed by signal %d; powering off with status %d\n",
		       argv[0], WTERMSIG(status), 128 + WTERMSIG(status));
		machine_power_off(128 + WTERMSIG(status));
	}
	pr_info("init: %s exited with status %d; powering off\n", argv[0], WEXITSTATUS(status));
	machine_power_off(WEXITSTATUS(status));
}

void start_kernel(void)
{
	report_boot_info();
	numa_print_summary();
	if (memstat_at_boot) {
		memstat_print();
		slab_print_stats();
	}
	console_echo_run();		/* echo_console=1 only */
	timekeeping_init();		/* CLOCK_REALTIME from the RTC */
	memory_failure_worker_start();	/* before anything can queue a poisoned frame */
	futex_init();			/* before any process can wait */
	vfs_init();			/* the root file system and /dev */
	initrd_unpack();		/* the boot module's files into it */

	if (ktest_spec[0]) {
		int failed = ktest_run(ktest_spec);

		pr_info("ktest: %d failure(s); powering off\n", failed);
		machine_power_off(failed ? QUIRE_EXIT_FAILURE : QUIRE_EXIT_SUCCESS);
	}
	if (bench_spec[0]) {
		int failed = kbench_run(bench_spec);

		machine_power_off(failed ? QUIRE_EXIT_FAILURE : QUIRE_EXIT_SUCCESS);
	}
	run_init();
}
