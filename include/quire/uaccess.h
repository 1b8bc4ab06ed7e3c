/*
 * Copying to and from user memory. Every user pointer is checked to lie
 * below USER_TOP; a fault on the way (an unmapped or protected page) is
 * caught through the exception table and reported as a short copy, so bad
 * pointers become -EFAULT and never crash the kernel. Pages not faulted in
 * yet are faulted in on the way (the page-fault handler does it for the
 * current process).
 */
#ifndef QUIRE_UACCESS_H
#define QUIRE_UACCESS_H

#include <quire/types.h>
#include <quire/extable.h>
#include <asm/pgtable.h>

static inline bool access_ok(const void *uptr, size_t len)
{
	unsigned long a = (unsigned long)uptr;

	return a + len >= a && a + len <= USER_TOP;
}

/* Bytes NOT copied (0: all of it), like Linux. */
unsigned long copy_from_user(void *dst, const void *usrc, unsigned long len);
unsigned long copy_to_user(void *udst, const void *src, unsigned long len);
/* Copy a string of at most max-1 bytes; its length, -EFAULT, or -ENAMETOOLONG when no NUL fits. */
long strncpy_from_user(char *dst, const char *usrc, long max);

/*
 * An atomic compare-and-exchange on an aligned 32-bit user word (futexes):
 * *found gets what the word held; new was stored if that equals old.
 * 0, -EFAULT (not writable, not mapped) or -EINVAL (misaligned). A page
 * not present is faulted in (for writing) on the way, so this may sleep.
 */
int cmpxchg_user_u32(u32 *uaddr, u32 old, u32 new, u32 *found);

/* The raw copy with exception fixup (arch/x86_64/lib/uaccess.S). */
unsigned long copy_user_generic(void *dst, const void *src, unsigned long len);
/* The raw cmpxchg with exception fixup: 0 or -EFAULT (arch/x86_64/lib/uaccess.S). */
int __cmpxchg_user_u32(u32 *uaddr, u32 old, u32 new, u32 *found);

#endif
