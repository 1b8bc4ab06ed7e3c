/*
 * Whole outputs for kselftest_run's differential (-d) and recording (-o)
 * modes (docs/difftest.md): printing one so that it can be taken off a
 * serial console and checked, and comparing one with a recorded file,
 * printing the lines that differ the way diff(1) finds them.
 */
#ifndef QUIRE_USER_OUTPUT_DIFF_H
#define QUIRE_USER_OUTPUT_DIFF_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits text (each line ending in '\n', the last maybe not) in place; returns the count. */
static size_t split_lines(char *text, size_t len, char ***lines)
{
	size_t n = 0, i;
	int unended = len && text[len - 1] != '\n';
	char **v;

	for (i = 0; i < len; i++)
		n += text[i] == '\n';
	v = calloc(n + unended + 1, sizeof(*v));
	if (!v)
		return 0;
	for (i = 0, n = 0; i < len; n++) {
		char *end = memchr(text + i, '\n', len - i);

		v[n] = text + i;
		if (!end)
			break;
		*end = '\0';
		i = end - text + 1;
	}
	*lines = v;
	return n + unended;
}

/*
 * The whole output (text, len bytes, '\0'-terminated) as "#| LINE" KTAP
 * diagnostics, then its count of lines and their hash, for whoever reads
 * it off a serial console to tell it arrived whole.
 */
static void print_whole(const char *text, size_t len, const char *name)
{
	uint32_t hash = 2166136261u;	/* 32-bit FNV-1a */
	size_t lines = 0;

	for (size_t i = 0; i < len; i++) {
		size_t n = strcspn(text + i, "\n");

		printf("    #| %.*s\n", (int)n, text + i);
		for (size_t k = 0; k <= n; k++)
			hash = (hash ^ (unsigned char)(k < n ? text[i + k] : '\n')) * 16777619u;
		lines++;
		i += n;
	}
	printf("    # %s: %zu lines, fnv1a 0x%08x\n", name, lines, hash);
}

#define DIFF_SHOWN	80		/* lines of a diff printed */
#define DIFF_LCS_MAX	(4u << 20)	/* table entries: past that, line by line */

static void diff_line(int sign, size_t number, const char *text, size_t *shown)
{
	if ((*shown)++ < DIFF_SHOWN)
		printf("    # %c%5zu| %s\n", sign, number, text);
}

/*
 * The lines that differ between a (recorded) and b (this run), the way
 * diff(1) finds them: a longest common subsequence (lcs[i][j]: of a from
 * i and b from j), then every line outside it. Returns the count of lines
 * that differ; prints the first DIFF_SHOWN.
 */
static size_t print_diff(char **a, size_t n, char **b, size_t m)
{
	unsigned short *lcs = NULL;
	size_t i, j, shown = 0, w = m + 1;

	if (n < 65535 && m < 65535 && (n + 1) * (m + 1) <= DIFF_LCS_MAX)
		lcs = calloc((n + 1) * (m + 1), sizeof(*lcs));
	for (i = n + 1; lcs && i-- > 0; )
		for (j = m + 1; j-- > 0; ) {
			if (i == n || j == m)
				lcs[i * w + j] = 0;
			else if (!strcmp(a[i], b[j]))
				lcs[i * w + j] = lcs[(i + 1) * w + j + 1] + 1;
			else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
				lcs[i * w + j] = lcs[(i + 1) * w + j];
			else
				lcs[i * w + j] = lcs[i * w + j + 1];
		}
	for (i = 0, j = 0; i < n || j < m; ) {
		if (i < n && j < m && !strcmp(a[i], b[j])) {
			i++;
			j++;
		} else if (i < n && (j == m || !lcs || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) {
			diff_line('-', i + 1, a[i], &shown);
			i++;
			if (!lcs && j < m) {	/* no table: line against line */
				diff_line('+', j + 1, b[j], &shown);
				j++;
			}
		} else {
			diff_line('+', j + 1, b[j], &shown);
			j++;
		}
	}
	if (shown > DIFF_SHOWN)
		printf("    # (%zu more lines differ)\n", shown - DIFF_SHOWN);
	free(lcs);
	return shown;
}

/* The whole of a file, '\0'-terminated, or NULL (errno says why). */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = (n + 4096 + 1) * 2);

			if (!p) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The whole output (text, len bytes, '\0'-terminated; split in place)
 * against DIR/NAME.out (NAME: name, spaces as '_'). Returns 1 when they
 * differ (why says how), after printing the lines that differ, or the
 * whole output when there is no DIR/NAME.out.
 */
static int compare_whole(char *text, size_t len, const char *dir, const char *name,
			 char *why, size_t size)
{
	char path[512], file[256], *expected, **a = NULL, **b = NULL;
	size_t elen = 0, n, m, differ;

	snprintf(file, sizeof(file), "%s", name);
	for (char *p = file; *p; p++)
		if (*p == ' ' || *p == '/')
			*p = '_';
	snprintf(path, sizeof(path), "%s/%s.out", dir, file);
	expected = read_file(path, &elen);
	if (!expected) {
		snprintf(why, size, "no recorded output: %.160s: %s (make difftest-record)", path,
			 strerror(errno));
		print_whole(text, len, name);
		return 1;
	}
	if (elen == len && !memcmp(expected, text, len)) {
		free(expected);
		return 0;
	}
	n = split_lines(expected, elen, &a);
	m = split_lines(text, len, &b);
	printf("    # the output differs from %s (-: recorded, +: this run; line numbers of each)\n",
	       path);
	differ = (a || !n) && (b || !m) ? print_diff(a, n, b, m) : 0;
	snprintf(why, size, "output differs from %.160s: %zu lines", path, differ);
	free(a);
	free(b);
	free(expected);
	return 1;
}

#endif
