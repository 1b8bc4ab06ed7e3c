/*
 * poll(2) and select(2)'s structures and bits, as Linux x86-64 has them:
 * struct pollfd and the POLL* event bits (asm-generic/poll.h). select's
 * fd_set is an array of unsigned long, a bit per descriptor (fs/select.c).
 */
#ifndef QUIRE_UAPI_POLL_H
#define QUIRE_UAPI_POLL_H

#include <quire/types.h>

#define POLLIN		0x0001
#define POLLPRI		0x0002
#define POLLOUT		0x0004
#define POLLERR		0x0008
#define POLLHUP		0x0010
#define POLLNVAL	0x0020
#define POLLRDNORM	0x0040
#define POLLRDBAND	0x0080
#define POLLWRNORM	0x0100
#define POLLWRBAND	0x0200
#define POLLMSG		0x0400
#define POLLRDHUP	0x2000

struct pollfd {
	int fd;
	short events;
	short revents;
};

_Static_assert(sizeof(struct pollfd) == 8, "Linux's struct pollfd");

#endif
