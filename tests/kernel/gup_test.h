/*
 * Helpers shared by the gup and gup_race suites (tests/kernel/gup_test.c,
 * tests/kernel/gup_race_test.c), on top of the thp suite's (thp_test.h).
 */
#ifndef TESTS_KERNEL_GUP_TEST_H
#define TESTS_KERNEL_GUP_TEST_H

#include "thp_test.h"

/* The pins a folio holds: _pincount, or what the bias says for a small folio. */
int gupt_pins_of(struct folio *folio);
/* Map 2 MiB at addr and fault it in with folios of order (only that order enabled). */
int gupt_map_order(struct mm_struct *mm, unsigned long addr, unsigned int order);
/*
 * thpt_begin (thpt_begin_two_nodes with two_nodes: the case skips on one
 * node), then a new mm with 2 MiB at AREA in folios of order; NULL
 * (reported) on failure.
 */
struct mm_struct *gupt_begin_mapped(struct ktest *t, struct thp_ctx *c, unsigned int order,
				    bool two_nodes);

#endif
