/*
 * ioctl: the generic commands the VFS answers itself (FIONREAD on a
 * regular file), then the file's own ioctl, else ENOTTY as Linux answers a
 * command nobody knows. Drivers receive a kernel pointer for commands that
 * take a structure; ioctl_arg_size tells the syscall layer how much to copy
 * in or out around the call.
 */
#include <quire/fs.h>
#include <quire/errno.h>
#include <quire/uapi/termios.h>
#include <quire/uapi/gup_test.h>
#include <quire/uapi/hmm_dmirror.h>

long vfs_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct inode *inode = file_inode(f);

	if (cmd == FIONREAD && S_ISREG(inode->i_mode)) {
		loff_t left = READ_ONCE(inode->i_size) - READ_ONCE(f->f_pos);

		*(int *)arg = left < 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
		return 0;
	}
	if (!f->f_op || !f->f_op->ioctl)
		return -ENOTTY;
	return f->f_op->ioctl(f, cmd, arg);
}

size_t ioctl_arg_size(unsigned int cmd, bool *in, bool *out)
{
	*in = *out = false;
	switch (cmd) {
	case TCGETS:
		*out = true;
		return sizeof(struct termios);
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
		*in = true;
		return sizeof(struct termios);
	case TIOCGWINSZ:
		*out = true;
		return sizeof(struct winsize);
	case TIOCSWINSZ:
		*in = true;
		return sizeof(struct winsize);
	case FIONREAD:
	case TIOCGPGRP:
	case TIOCGSID:
		*out = true;
		return sizeof(int);
	case TIOCSPGRP:
		*in = true;
		return sizeof(int);
	case GUP_FAST_BENCHMARK:	/* /sys/kernel/debug/gup_test (mm/gup_test.c) */
	case PIN_FAST_BENCHMARK:
	case PIN_LONGTERM_BENCHMARK:
	case GUP_BASIC_TEST:
	case PIN_BASIC_TEST:
	case DUMP_USER_PAGES_TEST:
		*in = *out = true;
		return sizeof(struct gup_test);
	case HMM_DMIRROR_READ:		/* /dev/hmm_dmirror* (drivers/hmm_dmirror.c) */
	case HMM_DMIRROR_WRITE:
	case HMM_DMIRROR_MIGRATE_TO_DEV:
	case HMM_DMIRROR_MIGRATE_TO_SYS:
	case HMM_DMIRROR_SNAPSHOT:
	case HMM_DMIRROR_EXCLUSIVE:
	case HMM_DMIRROR_CHECK_EXCLUSIVE:
	case HMM_DMIRROR_RELEASE:
		*in = *out = true;
		return sizeof(struct hmm_dmirror_cmd);
	case PIN_LONGTERM_TEST_START:
		*in = true;
		return sizeof(struct pin_longterm_test);
	case PIN_LONGTERM_TEST_READ:
		*in = true;
		return sizeof(u64);
	default:
		return 0;
	}
}
