/*
 * The kernel command line: "key=value" options, each registered by the code
 * that owns it with one of the CMDLINE_* macros below. The macros put a
 * struct cmdline_opt into the .cmdline_opts linker section; at boot
 * cmdline_parse_boot() walks the command line once and fills the variables.
 *
 * Rules (docs/cmdline.md): words are separated by spaces; a value may be
 * quoted ("a b"); a later option overrides an earlier one; an unknown key is
 * reported once and ignored; a malformed value is reported and the variable
 * keeps its default.
 */
#ifndef QUIRE_CMDLINE_H
#define QUIRE_CMDLINE_H

#include <quire/types.h>
#include <quire/compiler.h>

enum cmdline_kind {
	CMDLINE_KIND_BOOL,	/* bool; "key" alone means true */
	CMDLINE_KIND_UINT,	/* unsigned long within [min, max] */
	CMDLINE_KIND_STRING,	/* char buffer of 'size' bytes */
	CMDLINE_KIND_CALL,	/* call(value); value is NULL for a bare key */
};

struct cmdline_opt {
	const char *name;
	enum cmdline_kind kind;
	void *var;
	size_t size;
	unsigned long min, max;
	int (*call)(const char *value);	/* 0, or -EINVAL to reject the value */
	const char *help;
};

#define CMDLINE_MAX	2048	/* longer command lines are cut, with a warning */
#define CMDLINE_KEY_MAX	64
#define CMDLINE_VAL_MAX	512

#define __CMDLINE_OPT(id, ...)						\
	static const struct cmdline_opt __cmdline_opt_##id		\
	__section(".cmdline_opts") __used __aligned(8) = { __VA_ARGS__ }

#define CMDLINE_BOOL(key, variable, text)				\
	__CMDLINE_OPT(variable, .name = key, .kind = CMDLINE_KIND_BOOL,	\
		      .var = &(variable), .help = text)
#define CMDLINE_UINT(key, variable, lo, hi, text)			\
	__CMDLINE_OPT(variable, .name = key, .kind = CMDLINE_KIND_UINT,	\
		      .var = &(variable), .min = lo, .max = hi, .help = text)
#define CMDLINE_STRING(key, buf, text)					\
	__CMDLINE_OPT(buf, .name = key, .kind = CMDLINE_KIND_STRING, .var = buf, \
		      .size = sizeof(buf), .help = text)
#define CMDLINE_CALL(key, fn, text) \
	__CMDLINE_OPT(fn, .name = key, .kind = CMDLINE_KIND_CALL, .call = fn, .help = text)

/*
 * Parse cmdline against a table of options. Problems are reported with
 * pr_warn. Returns the number of problems (unknown keys, bad values).
 */
int cmdline_parse(const char *cmdline, const struct cmdline_opt *opts, size_t nopts);

/* The options registered in the kernel image (the .cmdline_opts section). */
const struct cmdline_opt *cmdline_registered(size_t *count);
/* Parse the boot command line against the registered options. */
int cmdline_parse_boot(const char *cmdline);

#endif
