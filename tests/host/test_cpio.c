/*
 * Host tests of the cpio newc parser (fs/cpio.c) and of unpacking into
 * ramfs (fs/initramfs.c and the VFS under it), under ASan and UBSan:
 * valid archives (concatenated, padded, 070702 checksums), each kind of
 * malformed input reported with its reason and offset, and a seeded fuzz
 * of byte flips, field rewrites and truncations that must never read
 * outside the buffer or leak (QUIRE_FUZZ_SEED, QUIRE_FUZZ_ITERS).
 * Every archive lives in a malloc'd buffer of exactly its length, so ASan
 * sees the smallest over-read.
 */
#include "ktap.h"
#include "../lib/random.h"
#include "host_setup.h"
#include <quire/fs.h>
#include <quire/initrd.h>
#include <quire/mm.h>
#include <quire/printk.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>

static void setup(void)
{
	host_setup(32, 0, HOST_ROOTFS);
}

/* ---- building archives ---- */

struct ar {
	u8 *buf;
	size_t len, cap;
};

static void put(struct ar *a, const void *p, size_t n)
{
	if (a->len + n > a->cap) {
		a->cap = (a->len + n) * 2 + 64;
		a->buf = realloc(a->buf, a->cap);
	}
	__builtin_memcpy(a->buf + a->len, p, n);
	a->len += n;
}

static void pad4(struct ar *a)
{
	static const u8 zero[4];

	put(a, zero, (4 - a->len % 4) % 4);
}

static void entry(struct ar *a, const char *magic, const char *name, u32 mode,
		  const void *data, u32 size, u32 check)
{
	char hdr[111];
	u32 namesize = (u32)__builtin_strlen(name) + 1;

	__builtin_snprintf(hdr, sizeof(hdr),
			   "%s%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			   magic, 7u, mode, 0u, 0u, 1u, 99u, size, 0u, 0u, 0u, 0u, namesize, check);
	put(a, hdr, 110);
	put(a, name, namesize);
	pad4(a);
	put(a, data, size);
	pad4(a);
}

static void add(struct ar *a, const char *name, u32 mode, const char *data)
{
	entry(a, "070701", name, mode, data, (u32)__builtin_strlen(data), 0);
}

static void trailer(struct ar *a)
{
	add(a, "TRAILER!!!", 0, "");
}

/* The archive in a buffer of exactly len bytes (ASan catches any over-read). */
static u8 *exact(const struct ar *a, size_t len)
{
	u8 *p = malloc(len ? len : 1);

	__builtin_memcpy(p, a->buf, len);
	return p;
}

static void sample(struct ar *a)
{
	*a = (struct ar){ 0 };
	add(a, ".", S_IFDIR | 0755, "");
	add(a, "bin", S_IFDIR | 0755, "");
	add(a, "bin/prog", S_IFREG | 0755, "\177ELF and the rest of it");
	add(a, "etc/motd", S_IFREG | 0644, "welcome\n");
	add(a, "etc/link", S_IFLNK | 0777, "motd");
	add(a, "empty", S_IFREG | 0600, "");
	trailer(a);
}

/* Parse all of it; the number of entries, or -EINVAL with r->error set. */
static int parse_all(const u8 *buf, size_t len, struct cpio_reader *r)
{
	struct cpio_entry e;
	int n = 0, ret;

	cpio_init(r, buf, len);
	while ((ret = cpio_next(r, &e)) > 0) {
		/* Whatever came out lies inside the buffer. */
		if ((const u8 *)e.name < buf || (const u8 *)e.data < buf ||
		    (const u8 *)e.data + e.filesize > buf + len)
			return -1000;
		n++;
	}
	return ret < 0 ? ret : n;
}

/* ---- valid archives ---- */

HOST_TEST(parses_valid)
{
	struct cpio_reader r;
	struct cpio_entry e;
	struct ar a;
	u8 *buf;

	sample(&a);
	buf = exact(&a, a.len);
	cpio_init(&r, buf, a.len);
	EXPECT_EQ(cpio_next(&r, &e), 1);
	EXPECT_STREQ(e.name, ".");
	EXPECT_EQ(cpio_next(&r, &e), 1);
	EXPECT_EQ(cpio_next(&r, &e), 1);
	EXPECT_STREQ(e.name, "bin/prog");
	EXPECT_EQ(e.mode, S_IFREG | 0755);
	EXPECT_EQ(e.filesize, 23);
	EXPECT_EQ(__builtin_memcmp(e.data, "\177ELF", 4), 0);
	EXPECT_EQ(e.mtime, 99);
	EXPECT_EQ(e.offset, 228);	/* 2 headers of 110 + ".\0" and "bin\0", each padded */
	EXPECT_EQ(parse_all(buf, a.len, &r), 6);
	free(buf);
	/* Zero padding after the trailer, a second archive, more padding. */
	put(&a, "\0\0\0\0\0\0\0\0", 8);
	add(&a, "second", S_IFREG | 0600, "2");
	trailer(&a);
	put(&a, "\0\0\0\0", 4);
	buf = exact(&a, a.len);
	EXPECT_EQ(parse_all(buf, a.len, &r), 7);
	free(buf);
	/* The last padding may be missing at the very end of the buffer. */
	buf = exact(&a, a.len - 4 - 2);
	EXPECT_EQ(parse_all(buf, a.len - 4 - 2, &r), 7);
	free(buf);
	free(a.buf);
	/* 070702: a checksum of the data bytes. */
	a = (struct ar){ 0 };
	entry(&a, "070702", "sum", S_IFREG | 0600, "\x01\x02\xff", 3, 0x102);
	trailer(&a);
	buf = exact(&a, a.len);
	EXPECT_EQ(parse_all(buf, a.len, &r), 1);
	buf[116] ^= 1;	/* a data byte of "sum": 110 + "sum\0" */
	EXPECT_EQ(parse_all(buf, a.len, &r), -EINVAL);
	EXPECT_STREQ(r.error, "checksum mismatch (070702)");
	free(buf);
	free(a.buf);
	/* Nothing at all, or only zeroes: an empty initrd. */
	EXPECT_EQ(parse_all((const u8 *)"", 0, &r), 0);
	EXPECT_EQ(parse_all((const u8 *)"\0\0\0\0\0\0\0", 8, &r), 0);
}

/* ---- malformed archives: each reported with its reason and offset ---- */

static void expect_bad(struct ar *a, size_t len, const char *why, size_t offset, int entries)
{
	struct cpio_reader r;
	struct cpio_entry e;
	u8 *buf = exact(a, len);
	int n = 0, ret;

	cpio_init(&r, buf, len);
	while ((ret = cpio_next(&r, &e)) > 0)
		n++;
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(n, entries);
	EXPECT_STREQ(r.error, why);
	EXPECT_EQ(r.err_offset, offset);
	EXPECT_EQ(cpio_next(&r, &e), -EINVAL);	/* it stays stopped */
	free(buf);
}

HOST_TEST(reports_malformed)
{
	struct ar a;

	sample(&a);
	expect_bad(&a, 50, "truncated header", 0, 0);
	expect_bad(&a, 111, "truncated name", 110, 0);
	/* bin/prog: header at 228, name to 347, data from 348 (23 bytes). */
	expect_bad(&a, 357, "truncated data (filesize past the end)", 347, 2);
	expect_bad(&a, 228 + 100, "archive ends without TRAILER!!! (truncated header)", 228, 2);
	a.buf[1] = '8';
	expect_bad(&a, a.len, "bad magic (not a newc archive: 070701 or 070702)", 0, 0);
	a.buf[1] = '7';
	a.buf[6 + 8 + 3] = 'g';		/* the mode field */
	expect_bad(&a, a.len, "bad hex digit in a header field", 14, 0);
	a.buf[6 + 8 + 3] = '0';
	__builtin_memcpy(a.buf + 6 + 11 * 8, "00000000", 8);	/* namesize */
	expect_bad(&a, a.len, "empty name (namesize 0)", 0, 0);
	__builtin_memcpy(a.buf + 6 + 11 * 8, "00001001", 8);
	expect_bad(&a, a.len, "name longer than PATH_MAX", 0, 0);
	__builtin_memcpy(a.buf + 6 + 11 * 8, "00000001", 8);	/* "." without its NUL */
	a.buf[110] = 'x';
	expect_bad(&a, a.len, "name without a terminating NUL", 110, 0);
	a.buf[110] = '.';
	__builtin_memcpy(a.buf + 6 + 11 * 8, "00000002", 8);
	__builtin_memcpy(a.buf + 6 + 6 * 8, "FFFFFFFF", 8);	/* filesize */
	expect_bad(&a, a.len, "truncated data (filesize past the end)", 112, 0);
	free(a.buf);
	/* A NUL before the name's end. */
	a = (struct ar){ 0 };
	add(&a, "ab", S_IFREG | 0600, "");
	a.buf[110] = '\0';
	expect_bad(&a, a.len, "NUL inside the name", 110, 0);
	free(a.buf);
	/* Junk after the trailer. */
	a = (struct ar){ 0 };
	trailer(&a);
	put(&a, "\0\0x", 3);
	expect_bad(&a, a.len, "data after the trailer that is not a 4-byte aligned header",
		   a.len - 1, 0);
	free(a.buf);
}

/* ---- into ramfs ---- */

static void rm_rf(const char *path)
{
	struct file *f;
	char buf[256], *sub = malloc(PATH_MAX + 8);
	ssize_t n;

	if (!vfs_unlink(NULL, path) ||
	    vfs_open(NULL, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &f)) {
		free(sub);
		return;
	}
	while ((n = vfs_getdents64(f, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (__builtin_strcmp(d->d_name, ".") && __builtin_strcmp(d->d_name, "..")) {
				__builtin_snprintf(sub, PATH_MAX + 8, "%s/%s", path, d->d_name);
				rm_rf(sub);
			}
		}
	fput(f);
	free(sub);
	vfs_rmdir(NULL, path);
}

static struct inode *fresh_dir(const char *path)
{
	struct inode *dir;

	rm_rf(path);
	if (vfs_mkdir(NULL, path, 0755) || vfs_lookup(NULL, path, &dir))
		abort();
	return dir;
}

HOST_TEST(unpacks_into_ramfs)
{
	struct initramfs_stats st;
	struct inode *dir;
	struct file *f;
	struct stat s;
	char buf[64] = { 0 };
	long inodes;
	struct ar a;
	u8 *img;

	setup();
	inodes = nr_inodes;
	dir = fresh_dir("/unpack");
	sample(&a);
	img = exact(&a, a.len);
	EXPECT_EQ(unpack_to_rootfs(dir, img, a.len, &st), 0);
	EXPECT_EQ(st.files, 3);
	EXPECT_EQ(st.dirs, 1);
	EXPECT_EQ(st.symlinks, 1);
	EXPECT_EQ(st.skipped, 0);
	EXPECT_EQ(vfs_open(dir, "etc/link", O_RDONLY, 0, &f), 0);
	EXPECT_EQ(vfs_read(f, buf, sizeof(buf), NULL), 8);
	EXPECT_STREQ(buf, "welcome\n");
	fput(f);
	EXPECT_EQ(vfs_stat(dir, "bin/prog", 0, &s), 0);
	EXPECT_EQ(s.st_mode, S_IFREG | 0755);
	EXPECT_EQ(s.st_size, 23);
	EXPECT_EQ(s.st_mtime, 99);
	EXPECT_EQ(vfs_stat(dir, "etc", 0, &s), 0);	/* made for etc/motd */
	EXPECT_EQ(s.st_mode, S_IFDIR | 0755);
	free(img);
	free(a.buf);
	iput(dir);
	rm_rf("/unpack");
	EXPECT_EQ(nr_inodes, inodes);
	EXPECT_EQ(radix_tree_nodes, 0);
}

/* ---- fuzz ---- */

static void mutate(struct ar *a)
{
	static const char hex[] = "0123456789abcdefABCDEFxz\0/";
	int kind = (int)(rng() % 5);
	size_t at = a->len ? rng() % a->len : 0;

	switch (kind) {
	case 0:		/* a random byte */
		a->buf[at] = (u8)rng();
		break;
	case 1:		/* a plausible character in a header field */
		a->buf[at] = (u8)hex[rng() % (sizeof(hex) - 1)];
		break;
	case 2: {	/* rewrite a whole field of some header with a random value */
		size_t hdr = (rng() % (a->len / 4 + 1)) * 4;
		size_t field = 6 + 8 * (rng() % 13);

		if (hdr + field + 8 <= a->len) {
			char v[9];

			__builtin_snprintf(v, sizeof(v), "%08X",
					   (unsigned int)(rng() % 3 ? rng() % 0x2000 : rng()));
			__builtin_memcpy(a->buf + hdr + field, v, 8);
		}
		break;
	}
	case 3:		/* cut it short */
		a->len = at;
		break;
	default:	/* zero a run */
		__builtin_memset(a->buf + at, 0, min(a->len - at, (size_t)(rng() % 16)));
		break;
	}
}

HOST_TEST(fuzz_archives)
{
	const char *e = getenv("QUIRE_FUZZ_SEED");
	const char *it = getenv("QUIRE_FUZZ_ITERS");
	u64 seed = e ? strtoull(e, NULL, 0) : 0xc910f022ULL;
	long iters = it ? strtol(it, NULL, 0) : 20000;
	long parsed = 0, malformed = 0, inodes;
	struct inode *dir;

	setup();
	printf("    # fuzz_archives: seed %#llx, %ld iterations (QUIRE_FUZZ_SEED, QUIRE_FUZZ_ITERS)\n",
	       (unsigned long long)seed, iters);
	rng_state = seed ? seed : 1;
	inodes = nr_inodes;
	for (long i = 0; i < iters && !host_case_state.failures; i++) {
		struct initramfs_stats st;
		struct cpio_reader r;
		struct ar a;
		u8 *img;
		int ret;

		sample(&a);
		for (int k = 0, n = 1 + (int)(rng() % 4); k < n; k++)
			mutate(&a);
		img = exact(&a, a.len);
		ret = parse_all(img, a.len, &r);
		EXPECT_NE(ret, -1000);
		if (ret < 0) {
			malformed++;
			EXPECT_TRUE(r.error != NULL && r.err_offset <= a.len);
		} else {
			parsed++;
		}
		dir = fresh_dir("/fuzz");
		EXPECT_EQ(unpack_to_rootfs(dir, img, a.len, &st), ret < 0 ? -EINVAL : 0);
		iput(dir);
		free(img);
		free(a.buf);
	}
	rm_rf("/fuzz");
	printf("    # fuzz_archives: %ld parsed, %ld malformed\n", parsed, malformed);
	EXPECT_GE(malformed, iters / 4);
	EXPECT_EQ(nr_inodes, inodes);
	EXPECT_EQ(radix_tree_nodes, 0);
	EXPECT_EQ(mm_verify(), 0);
}

HOST_TEST_MAIN(cpio,
	       HOST_CASE(parses_valid),
	       HOST_CASE(reports_malformed),
	       HOST_CASE(unpacks_into_ramfs),
	       HOST_CASE(fuzz_archives));
