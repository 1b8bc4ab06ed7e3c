/*
 * A parser for cpio "newc" archives (the format of Linux's initramfs,
 * Documentation/driver-api/early-userspace/buffer-format.rst): each entry
 * is a 110-byte header of ASCII hex fields, the name (with its NUL) padded
 * to 4 bytes, then the data padded to 4 bytes; "TRAILER!!!" ends an
 * archive, zero bytes may pad it, and another archive may follow.
 *
 * Everything is checked before it is used: the magic, each hex digit, the
 * name's size and terminating NUL, and that name and data lie inside the
 * buffer. The first problem stops the parse with a reason and an offset.
 */
#include <quire/initrd.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/uapi/fcntl.h>

enum { F_INO, F_MODE, F_UID, F_GID, F_NLINK, F_MTIME, F_FILESIZE, F_DEVMAJOR,
       F_DEVMINOR, F_RDEVMAJOR, F_RDEVMINOR, F_NAMESIZE, F_CHECK, NR_FIELDS };

void cpio_init(struct cpio_reader *r, const void *buf, size_t len)
{
	*r = (struct cpio_reader){ .buf = buf, .len = len };
}

static int fail(struct cpio_reader *r, size_t offset, const char *why)
{
	r->error = why;
	r->err_offset = offset;
	r->pos = r->len;	/* nothing more comes out */
	return -EINVAL;
}

static bool parse_hex8(const u8 *s, u32 *out)
{
	u32 v = 0;

	for (int i = 0; i < 8; i++) {
		u8 c = s[i];

		if (c >= '0' && c <= '9')
			v = v << 4 | (u32)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (u32)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v << 4 | (u32)(c - 'A' + 10);
		else
			return false;
	}
	*out = v;
	return true;
}

/* Between archives: skip zero padding. 1: a header follows, 0: the end. */
static int skip_padding(struct cpio_reader *r)
{
	while (r->pos < r->len && r->buf[r->pos] == 0)
		r->pos++;
	if (r->pos == r->len)
		return 0;
	if (r->pos & 3)
		return fail(r, r->pos, "data after the trailer that is not a 4-byte aligned header");
	return 1;
}

int cpio_next(struct cpio_reader *r, struct cpio_entry *e)
{
	size_t off, name_off, data_off, left;
	u32 f[NR_FIELDS];
	bool crc;
	int ret;

	if (r->error)
		return -EINVAL;
again:
	if (!r->in_archive) {
		ret = skip_padding(r);
		if (ret <= 0)
			return ret;
	}
	off = r->pos;
	left = r->len - off;
	if (left < CPIO_HEADER_SIZE)
		return fail(r, off, r->in_archive ? "archive ends without TRAILER!!! (truncated header)"
						  : "truncated header");
	if (memcmp(r->buf + off, "07070", 5) || (r->buf[off + 5] != '1' && r->buf[off + 5] != '2'))
		return fail(r, off, "bad magic (not a newc archive: 070701 or 070702)");
	crc = r->buf[off + 5] == '2';
	for (int i = 0; i < NR_FIELDS; i++)
		if (!parse_hex8(r->buf + off + 6 + 8 * i, &f[i]))
			return fail(r, off + 6 + 8 * i, "bad hex digit in a header field");
	if (f[F_NAMESIZE] == 0)
		return fail(r, off, "empty name (namesize 0)");
	if (f[F_NAMESIZE] > PATH_MAX)
		return fail(r, off, "name longer than PATH_MAX");
	name_off = off + CPIO_HEADER_SIZE;
	if (f[F_NAMESIZE] > r->len - name_off)
		return fail(r, name_off, "truncated name");
	if (r->buf[name_off + f[F_NAMESIZE] - 1] != '\0')
		return fail(r, name_off, "name without a terminating NUL");
	if (strlen((const char *)r->buf + name_off) != f[F_NAMESIZE] - 1)
		return fail(r, name_off, "NUL inside the name");
	/* Padding may be cut off at the very end of the buffer, data may not. */
	data_off = min(ALIGN_UP(name_off + f[F_NAMESIZE], 4), r->len);
	if (f[F_FILESIZE] > r->len - data_off)
		return fail(r, name_off + f[F_NAMESIZE], "truncated data (filesize past the end)");
	if (crc) {
		u32 sum = 0;

		for (u32 i = 0; i < f[F_FILESIZE]; i++)
			sum += r->buf[data_off + i];
		if (sum != f[F_CHECK])
			return fail(r, off, "checksum mismatch (070702)");
	}

	*e = (struct cpio_entry){
		.offset = off, .name = (const char *)r->buf + name_off,
		.ino = f[F_INO], .mode = f[F_MODE], .uid = f[F_UID], .gid = f[F_GID],
		.nlink = f[F_NLINK], .mtime = f[F_MTIME],
		.devmajor = f[F_DEVMAJOR], .devminor = f[F_DEVMINOR],
		.rdevmajor = f[F_RDEVMAJOR], .rdevminor = f[F_RDEVMINOR],
		.data = r->buf + data_off, .filesize = f[F_FILESIZE],
	};
	r->pos = min(ALIGN_UP(data_off + f[F_FILESIZE], 4), r->len);
	r->in_archive = strcmp(e->name, "TRAILER!!!") != 0;
	if (!r->in_archive)
		goto again;	/* padding, then the end or another archive */
	return 1;
}
