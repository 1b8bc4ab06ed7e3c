/*
 * The layout of Linux's stack_t (sigaltstack), alone so that struct task
 * can hold one without the rest of quire/uapi/signal.h (whose names clash
 * with the C library's on the host build).
 */
#ifndef QUIRE_SIGALTSTACK_H
#define QUIRE_SIGALTSTACK_H

#include <quire/types.h>

struct k_sigaltstack {
	u64 ss_sp;
	int ss_flags;
	int __pad;
	u64 ss_size;
};

#endif
