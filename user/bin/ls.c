/*
 * ls [-a] [-l] [PATH...]: list directories (sorted) or name files.
 * -a shows names starting with '.', -l the mode, links, size and symlink
 * targets.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static int all, longfmt;

static void mode_string(mode_t m, char *s)
{
	const char *types = "?pc?d?b?-?l?s";

	s[0] = S_ISREG(m) ? '-' : types[(m & S_IFMT) >> 12 < 13 ? (m & S_IFMT) >> 12 : 0];
	for (int i = 0; i < 9; i++)
		s[1 + i] = (m & (0400 >> i)) ? "rwxrwxrwx"[i] : '-';
	s[10] = '\0';
}

static void show(const char *path, const char *name)
{
	struct stat st;
	char mode[11], target[256];
	ssize_t n;

	if (!longfmt) {
		printf("%s\n", name);
		return;
	}
	if (lstat(path, &st) < 0) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
		return;
	}
	mode_string(st.st_mode, mode);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		printf("%s %2lu %4u, %4u %s", mode, (unsigned long)st.st_nlink,
		       major(st.st_rdev), minor(st.st_rdev), name);
	else
		printf("%s %2lu %10lld %s", mode, (unsigned long)st.st_nlink,
		       (long long)st.st_size, name);
	if (S_ISLNK(st.st_mode) && (n = readlink(path, target, sizeof(target) - 1)) >= 0) {
		target[n] = '\0';
		printf(" -> %s", target);
	}
	putchar('\n');
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(const char *path)
{
	struct stat st;
	struct dirent *d;
	char **names = NULL, full[4096];
	size_t n = 0;
	DIR *dir;

	if (lstat(path, &st) < 0) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		show(path, path);
		return 0;
	}
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' && !all)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(d->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++) {
		snprintf(full, sizeof(full), "%s/%s", path, names[i]);
		show(full, names[i]);
		free(names[i]);
	}
	free(names);
	return 0;
}

int main(int argc, char **argv)
{
	int opt, status = 0;

	while ((opt = getopt(argc, argv, "al")) != -1) {
		if (opt == 'a')
			all = 1;
		else if (opt == 'l')
			longfmt = 1;
		else
			return 2;
	}
	if (optind == argc)
		return list(".");
	for (int i = optind; i < argc; i++) {
		if (argc - optind > 1)
			printf("%s%s:\n", i > optind ? "\n" : "", argv[i]);
		status |= list(argv[i]);
	}
	return status;
}
