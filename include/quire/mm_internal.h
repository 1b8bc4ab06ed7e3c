/* Interfaces between the files of mm/ that nothing else should call. */
#ifndef QUIRE_MM_INTERNAL_H
#define QUIRE_MM_INTERNAL_H

#include <quire/types.h>

/* page_alloc.c: hand free frames [start, end) of a node to the buddy lists at boot. */
void free_boot_range(int nid, unsigned long start_pfn, unsigned long end_pfn);
/* page_alloc.c: "bad page" and use-after-free reports so far. */
extern unsigned long page_alloc_errors;
/* slab.c */
void kmem_cache_init(void);

#endif
