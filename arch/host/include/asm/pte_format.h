/*
 * The host build keeps x86-64's page-table format, in simulated physical
 * memory (no MMU reads it): the same file, so the two cannot drift.
 */
#include "../../../x86_64/include/asm/pte_format.h"
