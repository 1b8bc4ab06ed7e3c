/*
 * The system's names (Linux's kernel/sys.c, one UTS namespace): uname(2)
 * gives them, sethostname(2) and setdomainname(2) change the node and
 * domain names (every process is root: no EPERM). A name is at most 64
 * bytes (__NEW_UTS_LEN): a longer or negative length is EINVAL, a bad
 * pointer EFAULT, and a failed call changes nothing. glibc's gethostname
 * and getdomainname read uname's.
 */
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/spinlock.h>
#include <quire/string.h>
#include <quire/errno.h>

#define NEW_UTS_LEN	64

struct new_utsname {
	char sysname[NEW_UTS_LEN + 1], nodename[NEW_UTS_LEN + 1], release[NEW_UTS_LEN + 1],
	     version[NEW_UTS_LEN + 1], machine[NEW_UTS_LEN + 1], domainname[NEW_UTS_LEN + 1];
};

_Static_assert(sizeof(struct new_utsname) == 390, "Linux's struct new_utsname");

static DEFINE_SPINLOCK(uts_lock);
static struct new_utsname uts = {
	"Quire", "quire", "0.1", "#1 SMP", "x86_64", "(none)"
};

long sys_uname(u64 ubuf, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct new_utsname u;

	spin_lock(&uts_lock);
	u = uts;
	spin_unlock(&uts_lock);
	return copy_to_user((void *)ubuf, &u, sizeof(u)) ? -EFAULT : 0;
}

static long set_name(char *field, u64 uname, u64 ulen)
{
	char tmp[NEW_UTS_LEN];
	int len = (int)ulen;		/* Linux's argument is an int */

	if (len < 0 || len > NEW_UTS_LEN)
		return -EINVAL;
	if (copy_from_user(tmp, (void *)uname, (size_t)len))
		return -EFAULT;
	spin_lock(&uts_lock);
	memcpy(field, tmp, (size_t)len);
	memset(field + len, 0, (size_t)(NEW_UTS_LEN + 1 - len));
	spin_unlock(&uts_lock);
	return 0;
}

long sys_sethostname(u64 uname, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return set_name(uts.nodename, uname, len);
}

long sys_setdomainname(u64 uname, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return set_name(uts.domainname, uname, len);
}
