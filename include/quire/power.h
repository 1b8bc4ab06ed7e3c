/*
 * Power off with a status. Under QEMU the isa-debug-exit device (port 0xf4)
 * turns status s into QEMU's exit status (s << 1) | 1, which
 * scripts/run-qemu.sh turns back into s.
 */
#ifndef QUIRE_POWER_H
#define QUIRE_POWER_H

#include <quire/compiler.h>

enum quire_exit_status {
	QUIRE_EXIT_SUCCESS = 0,
	QUIRE_EXIT_FAILURE = 1,		/* tests failed */
	QUIRE_EXIT_PANIC = 2,		/* kernel panic */
};

__noreturn void machine_power_off(enum quire_exit_status status);

#endif
