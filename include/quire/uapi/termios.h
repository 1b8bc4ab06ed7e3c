/*
 * Terminal ioctls with Linux x86-64's numbers and layouts
 * (include/uapi/asm-generic/{ioctls,termbits}.h). struct termios here is
 * the kernel's (what TCGETS copies: 36 bytes, 19 control characters); C
 * libraries keep a longer one and copy this prefix.
 */
#ifndef QUIRE_UAPI_TERMIOS_H
#define QUIRE_UAPI_TERMIOS_H

#include <quire/types.h>

#define TCGETS		0x5401
#define TCSETS		0x5402
#define TCSETSW		0x5403
#define TCSETSF		0x5404
#define TIOCSCTTY	0x540e
#define TIOCGPGRP	0x540f
#define TIOCSPGRP	0x5410
#define TIOCGWINSZ	0x5413
#define TIOCSWINSZ	0x5414
#define FIONREAD	0x541b
#define TIOCGSID	0x5429

#define NCCS 19
struct termios {
	u32 c_iflag;
	u32 c_oflag;
	u32 c_cflag;
	u32 c_lflag;
	u8 c_line;
	u8 c_cc[NCCS];
};
_Static_assert(sizeof(struct termios) == 36, "the kernel's struct termios is 36 bytes");

struct winsize {
	u16 ws_row;
	u16 ws_col;
	u16 ws_xpixel;
	u16 ws_ypixel;
};

/* c_cc indexes */
#define VINTR		0
#define VQUIT		1
#define VERASE		2
#define VKILL		3
#define VEOF		4
#define VTIME		5
#define VMIN		6
#define VSWTC		7
#define VSTART		8
#define VSTOP		9
#define VSUSP		10
#define VEOL		11
#define VREPRINT	12
#define VDISCARD	13
#define VWERASE		14
#define VLNEXT		15
#define VEOL2		16

/* c_iflag */
#define IGNCR		0000200
#define ICRNL		0000400
#define INLCR		0000100
#define IXON		0002000
#define IUTF8		0040000
/* c_oflag */
#define OPOST		0000001
#define ONLCR		0000004
/* c_cflag */
#define B38400		0000017
#define B115200		0010002
#define CSIZE		0000060
#define CS8		0000060
#define CREAD		0000200
#define HUPCL		0002000
#define CLOCAL		0004000
/* c_lflag */
#define ISIG		0000001
#define ICANON		0000002
#define ECHO		0000010
#define ECHOE		0000020
#define ECHOK		0000040
#define ECHONL		0000100
#define TOSTOP		0000400
#define ECHOCTL		0001000
#define ECHOKE		0004000
#define IEXTEN		0100000

#endif
