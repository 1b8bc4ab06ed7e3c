/*
 * Ask the kernel to check its memory (/proc/quire/mm_verify, Quire's own
 * file): the number of problems it found, or -1 when it cannot be read.
 */
#ifndef QUIRE_USER_MM_VERIFY_H
#define QUIRE_USER_MM_VERIFY_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static inline long read_mm_verify(void)
{
	char buf[32] = { 0 };
	int fd = open("/proc/quire/mm_verify", O_RDONLY);
	long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

#endif
