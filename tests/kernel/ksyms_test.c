/* The link-time symbol table. */
#include <quire/ktest.h>
#include <quire/ksyms.h>
#include <quire/init.h>
#include <quire/string.h>

extern const u64 ksyms_addrs[];

static void table_present_and_sorted(struct ktest *t)
{
	u64 n = ksym_count();

	KASSERT_GT(t, n, 50);
	for (u64 i = 1; i < n; i++)
		KASSERT_TRUE(t, ksyms_addrs[i - 1] < ksyms_addrs[i]);
}

static void lookup_exact_and_offset(struct ktest *t)
{
	u64 addr = (u64)(uintptr_t)start_kernel, off = 99, size = 0;
	const char *name = ksym_lookup(addr, &off, &size);

	KEXPECT_STREQ(t, name, "start_kernel");
	KEXPECT_EQ(t, off, 0);
	KEXPECT_GT(t, size, 0);
	name = ksym_lookup(addr + 3, &off, NULL);
	KEXPECT_STREQ(t, name, "start_kernel");
	KEXPECT_EQ(t, off, 3);
}

static void lookup_outside_text(struct ktest *t)
{
	static int some_data;

	KEXPECT_TRUE(t, ksym_lookup((u64)(uintptr_t)&some_data, NULL, NULL) == NULL);
	KEXPECT_TRUE(t, ksym_lookup(0x1000, NULL, NULL) == NULL);
}

static void address_by_name(struct ktest *t)
{
	char buf[64];

	KEXPECT_EQ(t, ksym_address("ksym_lookup"), (u64)(uintptr_t)ksym_lookup);
	KEXPECT_EQ(t, ksym_address("no_such_function_here"), 0);
	ksym_format(buf, sizeof(buf), (u64)(uintptr_t)ksym_format + 0x10);
	KEXPECT_EQ(t, strncmp(buf, "ksym_format+0x10/0x", 19), 0);
}

KTEST_SUITE(ksyms,
	    KTEST_CASE(table_present_and_sorted),
	    KTEST_CASE(lookup_exact_and_offset),
	    KTEST_CASE(lookup_outside_text),
	    KTEST_CASE(address_by_name));
