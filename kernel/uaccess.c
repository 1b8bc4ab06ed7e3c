/* User-memory copies on top of copy_user_generic (include/quire/uaccess.h). */
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/copy_mc.h>

extern const struct exception_table_entry __start___ex_table[], __stop___ex_table[];

const struct exception_table_entry *search_exception_tables(unsigned long rip)
{
	for (const struct exception_table_entry *e = __start___ex_table; e < __stop___ex_table; e++)
		if (e->insn == rip)
			return e;
	return NULL;
}

unsigned long copy_from_user(void *dst, const void *usrc, unsigned long len)
{
	if (!access_ok(usrc, len))
		return len;
	return copy_user_generic(dst, usrc, len);
}

unsigned long copy_to_user(void *udst, const void *src, unsigned long len)
{
	if (!access_ok(udst, len))
		return len;
	return copy_user_generic(udst, src, len);
}

unsigned long copy_mc_to_user(void *udst, const void *src, size_t len)
{
	if (!access_ok(udst, len))
		return len;
	return __copy_mc_to_user(udst, src, len);
}

int cmpxchg_user_u32(u32 *uaddr, u32 old, u32 new, u32 *found)
{
	if ((unsigned long)uaddr % sizeof(u32))
		return -EINVAL;
	if (!access_ok(uaddr, sizeof(u32)))
		return -EFAULT;
	return __cmpxchg_user_u32(uaddr, old, new, found);
}

long strncpy_from_user(char *dst, const char *usrc, long max)
{
	for (long i = 0; i < max; i++) {
		if (copy_from_user(&dst[i], usrc + i, 1))
			return -EFAULT;
		if (dst[i] == '\0')
			return i;
	}
	return -ENAMETOOLONG;
}
