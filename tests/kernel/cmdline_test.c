/* The command-line parser in the kernel, and the options the image registers. */
#include <quire/ktest.h>
#include <quire/cmdline.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>

static const struct cmdline_opt *find(const char *name)
{
	size_t n;
	const struct cmdline_opt *o = cmdline_registered(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(o[i].name, name))
			return &o[i];
	return NULL;
}

static void core_options_registered(struct ktest *t)
{
	size_t n;
	const struct cmdline_opt *o = cmdline_registered(&n);

	KEXPECT_TRUE(t, find("ktest") != NULL);
	KEXPECT_TRUE(t, find("loglevel") != NULL);
	KEXPECT_TRUE(t, find("no_such_option") == NULL);
	/* Names are unique, and each has help text. */
	for (size_t i = 0; i < n; i++) {
		KEXPECT_TRUE(t, o[i].help != NULL);
		for (size_t j = i + 1; j < n; j++)
			KEXPECT_NE(t, strcmp(o[i].name, o[j].name), 0);
	}
}

static bool flag;
static unsigned long number;
static char word[8];
static int calls;
static int call_fn(const char *v)
{
	calls++;
	return v && !strcmp(v, "good") ? 0 : -EINVAL;
}

static const struct cmdline_opt table[] = {
	{ .name = "flag", .kind = CMDLINE_KIND_BOOL, .var = &flag, .help = "" },
	{ .name = "number", .kind = CMDLINE_KIND_UINT, .var = &number, .min = 1, .max = 100, .help = "" },
	{ .name = "word", .kind = CMDLINE_KIND_STRING, .var = word, .size = sizeof(word), .help = "" },
	{ .name = "call", .kind = CMDLINE_KIND_CALL, .call = call_fn, .help = "" },
};

static void reset(void)
{
	flag = false;
	number = 42;
	strscpy(word, "dflt", sizeof(word));
	calls = 0;
}

static void good_values_applied(struct ktest *t)
{
	reset();
	KEXPECT_EQ(t, cmdline_parse("flag number=0x10 word=\"a b\" call=good", table, 4), 0);
	KEXPECT_TRUE(t, flag);
	KEXPECT_EQ(t, number, 16);
	KEXPECT_STREQ(t, word, "a b");
	KEXPECT_EQ(t, calls, 1);
}

static void bad_values_keep_defaults(struct ktest *t)
{
	u64 pos = printk_log_pos();

	reset();
	KEXPECT_EQ(t, cmdline_parse("number=abc number=101 word=toolongvalue flag=maybe call=bad",
				    table, 4), 5);
	KEXPECT_EQ(t, number, 42);
	KEXPECT_STREQ(t, word, "dflt");
	KEXPECT_FALSE(t, flag);
	KEXPECT_TRUE(t, printk_log_contains(pos, "bad value 'abc' for 'number'"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "bad value '101' for 'number'"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "bad value 'maybe' for 'flag'"));
}

static void unknown_reported_once(struct ktest *t)
{
	u64 pos = printk_log_pos();

	reset();
	KEXPECT_EQ(t, cmdline_parse("nosuch=1 nosuch=2 nosuch number=7 other", table, 4), 4);
	KEXPECT_EQ(t, printk_log_count(pos, "unknown option 'nosuch'"), 1);
	KEXPECT_EQ(t, printk_log_count(pos, "unknown option 'other'"), 1);
	KEXPECT_EQ(t, number, 7);	/* good options around bad ones still apply */
}

static void typo_gets_suggestion(struct ktest *t)
{
	u64 pos = printk_log_pos();

	reset();
	KEXPECT_EQ(t, cmdline_parse("numbr=3", table, 4), 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "did you mean 'number'?"));
	KEXPECT_EQ(t, number, 42);
}

KTEST_SUITE(cmdline,
	    KTEST_CASE(typo_gets_suggestion),
	    KTEST_CASE(core_options_registered),
	    KTEST_CASE(good_values_applied),
	    KTEST_CASE(bad_values_keep_defaults),
	    KTEST_CASE(unknown_reported_once));
