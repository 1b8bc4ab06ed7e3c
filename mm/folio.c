/*
 * struct folio overlays the head page and the page after it; these checks
 * keep the overlay honest when either structure changes (docs/mm/folio.md).
 */
#include <quire/mm.h>

#define FOLIO_MATCH(pg, fl) \
	_Static_assert(offsetof(struct page, pg) == offsetof(struct folio, fl), \
		       "struct folio field " #fl " must overlay struct page " #pg)
FOLIO_MATCH(flags, flags);
FOLIO_MATCH(lru, lru);
FOLIO_MATCH(mapping, mapping);
FOLIO_MATCH(index, index);
FOLIO_MATCH(private, private);
FOLIO_MATCH(_mapcount, _mapcount);
FOLIO_MATCH(_refcount, _refcount);

#define FOLIO_MATCH_1(pg, fl) \
	_Static_assert(offsetof(struct page, pg) + sizeof(struct page) == \
		       offsetof(struct folio, fl), \
		       "struct folio field " #fl " must overlay page 1's " #pg)
FOLIO_MATCH_1(flags, _flags_1);
FOLIO_MATCH_1(compound_head, _head_1);
FOLIO_MATCH_1(_mapcount, _mapcount_1);
FOLIO_MATCH_1(_refcount, _refcount_1);

_Static_assert(sizeof(struct page) == 64, "struct page must stay 64 bytes");
_Static_assert(sizeof(struct folio) == 2 * sizeof(struct page),
	       "struct folio covers exactly two pages");
/* Page 1's folio fields must sit in the tail words a tail page leaves free. */
_Static_assert(offsetof(struct folio, _large_mapcount) >=
	       sizeof(struct page) + offsetof(struct page, _tail_fields), "folio fields overlap compound_head");
_Static_assert(offsetof(struct folio, _mm_owner) + sizeof(unsigned long) <=
	       sizeof(struct page) + offsetof(struct page, _mapcount), "folio fields overlap _mapcount");
