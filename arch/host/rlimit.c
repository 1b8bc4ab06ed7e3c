/*
 * Resource limits on the host: fs/ asks for RLIMIT_FSIZE (kernel/rlimit.c's
 * fsize_check) on every write and truncate. There are no processes here,
 * so no limit: every size is allowed.
 */
#include <quire/fs.h>

int fsize_check(loff_t pos, size_t *count)
{
	return 0;
}
