/*
 * The folio lock's unlock (the rest is inline in include/quire/mm.h): an
 * unlock of a folio nobody locked is a bug in the caller, reported with the
 * folio's state rather than silently letting a waiter in.
 */
#include <quire/mm.h>

void folio_unlock(struct folio *f)
{
	VM_BUG_ON_FOLIO(!folio_test_locked(f), f);
	clear_bit_unlock_wake(&f->flags, PG_locked);
}
