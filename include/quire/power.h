/*
 * Power off with an exit status from 0 to 255, the guest's answer to
 * whoever started it (scripts/run-qemu.sh, the test runner, `make run`).
 *
 * Under QEMU it leaves by two devices that run-qemu.sh adds:
 *   isa-debug-exit (port 0xf4): QEMU exits with (v << 1) | 1. Only 7 bits
 *     of v survive that (QEMU's own exit status has 8), so v is the status
 *     when it is below 128 and QUIRE_EXIT_SEE_STATUS_PORT otherwise;
 *   isa-debugcon (port 0xe9, to a file): the whole status, in decimal, on a
 *     line "exit-status N", written first. run-qemu.sh reads it when v says
 *     so, and exits with N. A status of 128 or more (a program killed by a
 *     signal, as a shell reports it) thus never wraps to a success.
 */
#ifndef QUIRE_POWER_H
#define QUIRE_POWER_H

#include <quire/compiler.h>

enum quire_exit_status {
	QUIRE_EXIT_SUCCESS = 0,
	QUIRE_EXIT_FAILURE = 1,		/* tests failed */
	QUIRE_EXIT_PANIC = 2,		/* kernel panic */
	QUIRE_EXIT_SEE_STATUS_PORT = 127, /* debug-exit value for statuses >= 128 */
};

#define QUIRE_EXIT_STATUS_MAX 255

/* status: 0..QUIRE_EXIT_STATUS_MAX (a larger one is reported as 255). */
__noreturn void machine_power_off(int status);

#endif
