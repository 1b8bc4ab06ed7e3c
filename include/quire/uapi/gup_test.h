/*
 * /sys/kernel/debug/gup_test (mm/gup_test.c, docs/mm/gup.md): the ioctl
 * interface Linux 6.12's CONFIG_GUP_TEST gives to its selftests (gup_test,
 * gup_longterm, cow), with Linux's command numbers and structure layouts
 * so that those programs run on Quire unmodified. Written from the
 * interface's description; the layout is checked by _Static_assert below.
 */
#ifndef QUIRE_UAPI_GUP_TEST_H
#define QUIRE_UAPI_GUP_TEST_H

#include <quire/types.h>

/*
 * Linux's ioctl number encoding (asm-generic/ioctl.h's layout): bits 0-7
 * the number, 8-15 the type letter, 16-29 the argument's size, 30-31 the
 * direction (1: user writes it, the kernel reads; 2: the kernel writes it).
 */
#define GUP_IOC(dir, type, nr, size) \
	(((unsigned int)(dir) << 30) | ((unsigned int)(size) << 16) | \
	 ((unsigned int)(type) << 8) | (unsigned int)(nr))
#define GUP_IOC_NONE	0U
#define GUP_IOC_WRITE	1U
#define GUP_IOC_READ	2U

/* The range to get or pin, and what it cost (the benchmarks). */
struct gup_test {
	u64 get_delta_usec;	/* out: time of the get/pin loop, microseconds */
	u64 put_delta_usec;	/* out: time of the put/unpin, microseconds */
	u64 addr;		/* in: start of the range */
	u64 size;		/* in: bytes; out: how far the loop went */
	u32 nr_pages_per_call;	/* in: pages asked of each get/pin call */
	u32 gup_flags;		/* in: FOLL_* bits (FOLL_WRITE, FOLL_FORCE, ...) */
	u32 test_flags;		/* in: GUP_TEST_FLAG_* */
	/*
	 * DUMP_USER_PAGES_TEST: pages to describe in the kernel log, 1-based
	 * from addr (0: none); out: those past what was taken become 0.
	 */
	u32 which_pages[8];
};
#define GUP_TEST_MAX_PAGES_TO_DUMP	8
#define GUP_TEST_FLAG_DUMP_PAGES_USE_PIN	0x1	/* dump: pin instead of get */

/* PIN_LONGTERM_TEST_START's argument. */
struct pin_longterm_test {
	u64 addr;		/* page aligned */
	u64 size;		/* page aligned, not 0 */
	u32 flags;		/* PIN_LONGTERM_TEST_FLAG_* */
};
#define PIN_LONGTERM_TEST_FLAG_USE_WRITE	1	/* FOLL_WRITE */
#define PIN_LONGTERM_TEST_FLAG_USE_FAST		2	/* pin_user_pages_fast */

#define GUP_TEST_RW(nr, type)	GUP_IOC(GUP_IOC_READ | GUP_IOC_WRITE, 'g', nr, sizeof(type))

#define GUP_FAST_BENCHMARK	GUP_TEST_RW(1, struct gup_test)	/* get_user_pages_fast, put_page */
#define PIN_FAST_BENCHMARK	GUP_TEST_RW(2, struct gup_test)	/* pin_user_pages_fast, unpin */
#define PIN_LONGTERM_BENCHMARK	GUP_TEST_RW(3, struct gup_test)	/* pin_user_pages + FOLL_LONGTERM */
#define GUP_BASIC_TEST		GUP_TEST_RW(4, struct gup_test)	/* get_user_pages */
#define PIN_BASIC_TEST		GUP_TEST_RW(5, struct gup_test)	/* pin_user_pages */
#define DUMP_USER_PAGES_TEST	GUP_TEST_RW(6, struct gup_test)	/* get (or pin), log which_pages */
/* Pin a range long-term and hold it until STOP or the file's release. */
#define PIN_LONGTERM_TEST_START	GUP_IOC(GUP_IOC_WRITE, 'g', 7, sizeof(struct pin_longterm_test))
#define PIN_LONGTERM_TEST_STOP	GUP_IOC(GUP_IOC_NONE, 'g', 8, 0)
/* Copy the held pages' content to the user buffer whose address (a u64) is the argument. */
#define PIN_LONGTERM_TEST_READ	GUP_IOC(GUP_IOC_WRITE, 'g', 9, sizeof(u64))

_Static_assert(sizeof(struct gup_test) == 80, "Linux's struct gup_test is 80 bytes");
_Static_assert(sizeof(struct pin_longterm_test) == 24, "Linux's struct pin_longterm_test");
_Static_assert(GUP_FAST_BENCHMARK == 0xc0506701U, "Linux's GUP_FAST_BENCHMARK");
_Static_assert(PIN_LONGTERM_TEST_START == 0x40186707U, "Linux's PIN_LONGTERM_TEST_START");
_Static_assert(PIN_LONGTERM_TEST_READ == 0x40086709U, "Linux's PIN_LONGTERM_TEST_READ");

#endif
