/*
 * Command-line parsing. Generic code: it also builds on the host
 * (tests/host), where the options table comes from the test itself.
 */
#define pr_fmt(fmt) "cmdline: " fmt
#include <quire/cmdline.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/errno.h>

#define MAX_UNKNOWN 16	/* distinct unknown keys remembered per parse */

struct parse_state {
	const struct cmdline_opt *opts;
	size_t nopts;
	char unknown[MAX_UNKNOWN][CMDLINE_KEY_MAX];
	int nunknown;
	int problems;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Cut the next word off *p into key and value. A word is key, key=value or
 * key="quoted value". Returns false at the end of the line.
 * *value_len is -1 for a bare key. Over-long parts are reported by the caller.
 */
struct word {
	const char *key;
	size_t key_len;
	const char *value;
	long value_len;		/* -1: no '=' */
	bool unterminated;	/* a quote that never closed */
};

static bool next_word(const char **p, struct word *w)
{
	const char *s = *p;

	while (is_space(*s))
		s++;
	if (!*s)
		return false;
	w->key = s;
	while (*s && *s != '=' && !is_space(*s))
		s++;
	w->key_len = (size_t)(s - w->key);
	w->value = NULL;
	w->value_len = -1;
	w->unterminated = false;
	if (*s == '=') {
		s++;
		if (*s == '"') {
			w->value = ++s;
			while (*s && *s != '"')
				s++;
			w->value_len = s - w->value;
			if (*s == '"')
				s++;
			else
				w->unterminated = true;
		} else {
			w->value = s;
			while (*s && !is_space(*s))
				s++;
			w->value_len = s - w->value;
		}
	}
	*p = s;
	return true;
}

static const struct cmdline_opt *find_opt(struct parse_state *st, const char *key)
{
	for (size_t i = 0; i < st->nopts; i++)
		if (!strcmp(st->opts[i].name, key))
			return &st->opts[i];
	return NULL;
}

/* Edit distance, capped: enough to suggest the option a typo meant. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, CMDLINE_KEY_MAX - 1), lb = strnlen(b, CMDLINE_KEY_MAX - 1);
	size_t row[CMDLINE_KEY_MAX];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			best = min(best, up + 1);
			best = min(best, row[j - 1] + 1);
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *closest_option(struct parse_state *st, const char *key)
{
	const char *best = NULL;
	size_t best_d = 3;	/* suggest only within two edits */

	for (size_t i = 0; i < st->nopts; i++) {
		size_t d = edit_distance(key, st->opts[i].name);

		if (d < best_d) {
			best_d = d;
			best = st->opts[i].name;
		}
	}
	return best;
}

static void report_unknown(struct parse_state *st, const char *key)
{
	const char *guess;

	st->problems++;
	for (int i = 0; i < st->nunknown; i++)
		if (!strcmp(st->unknown[i], key))
			return;		/* said once already */
	if (st->nunknown < MAX_UNKNOWN)
		strscpy(st->unknown[st->nunknown++], key, CMDLINE_KEY_MAX);
	guess = closest_option(st, key);
	if (guess)
		pr_warn("unknown option '%s' ignored; did you mean '%s'?\n", key, guess);
	else
		pr_warn("unknown option '%s' ignored (boot with 'help' for the list)\n", key);
}

static void report_bad(struct parse_state *st, const struct cmdline_opt *o,
		       const char *value, const char *why)
{
	st->problems++;
	pr_warn("bad value '%s' for '%s' (%s); keeping the default\n",
		value ? value : "", o->name, why);
}

static void apply(struct parse_state *st, const struct cmdline_opt *o, const char *value)
{
	char why[80];

	switch (o->kind) {
	case CMDLINE_KIND_BOOL: {
		bool b = true;

		if (value && kstrtobool(value, &b)) {
			report_bad(st, o, value, "expected 0/1, y/n, on/off");
			return;
		}
		*(bool *)o->var = b;
		return;
	}
	case CMDLINE_KIND_UINT: {
		unsigned long long v;

		if (!value || kstrtoull(value, 0, &v) || v < o->min || v > o->max) {
			snprintf(why, sizeof(why), "expected a number from %lu to %lu",
				 o->min, o->max);
			report_bad(st, o, value, why);
			return;
		}
		*(unsigned long *)o->var = (unsigned long)v;
		return;
	}
	case CMDLINE_KIND_STRING:
		if (!value) {
			report_bad(st, o, value, "expected key=value");
			return;
		}
		if (strlen(value) >= o->size) {
			snprintf(why, sizeof(why), "longer than %zu characters", o->size - 1);
			report_bad(st, o, value, why);
			return;
		}
		strscpy(o->var, value, o->size);
		return;
	case CMDLINE_KIND_CALL:
		if (o->call(value))
			report_bad(st, o, value, o->help && o->help[0] ? o->help : "rejected");
		return;
	}
}

int cmdline_parse(const char *cmdline, const struct cmdline_opt *opts, size_t nopts)
{
	static struct parse_state st;	/* too big for an early boot stack */
	static char cut[CMDLINE_MAX];
	char key[CMDLINE_KEY_MAX];
	char value[CMDLINE_VAL_MAX];
	const char *p = cmdline;
	struct word w;

	memset(&st, 0, sizeof(st));
	st.opts = opts;
	st.nopts = nopts;
	if (!p)
		return 0;
	if (strnlen(p, CMDLINE_MAX) >= CMDLINE_MAX) {
		pr_warn("command line longer than %d characters; the rest is ignored\n",
			CMDLINE_MAX - 1);
		st.problems++;
		/* Parse what fits, as if cut at boot: a word may not run past it. */
		strscpy(cut, p, sizeof(cut));
		p = cut;
	}

	while (next_word(&p, &w)) {
		const struct cmdline_opt *o;

		if (w.key_len == 0) {
			pr_warn("option without a name ('=%.*s') ignored\n",
				(int)(w.value_len > 0 ? w.value_len : 0), w.value);
			st.problems++;
			continue;
		}
		if (w.key_len >= sizeof(key)) {
			pr_warn("option name '%.*s...' too long; ignored\n", 16, w.key);
			st.problems++;
			continue;
		}
		memcpy(key, w.key, w.key_len);
		key[w.key_len] = '\0';
		o = find_opt(&st, key);
		if (!o) {
			report_unknown(&st, key);
			continue;
		}
		if (w.unterminated) {
			report_bad(&st, o, NULL, "quote not closed");
			continue;
		}
		if (w.value_len >= (long)sizeof(value)) {
			report_bad(&st, o, NULL, "value too long");
			continue;
		}
		if (w.value_len >= 0) {
			memcpy(value, w.value, (size_t)w.value_len);
			value[w.value_len] = '\0';
		}
		apply(&st, o, w.value_len >= 0 ? value : NULL);
	}
	return st.problems;
}
