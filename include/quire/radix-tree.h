/*
 * A radix tree mapping an unsigned long index to a pointer (lib/radix-tree.c),
 * with the names of Linux's older radix-tree API. The page cache keeps each
 * file's folios in one, by page index (docs/vfs.md).
 *
 * Each node has 64 slots (6 bits of the index per level) and is exactly
 * 512 bytes, one kmalloc-512 object; a tree of height h holds indexes below
 * 2^(6h). Empty nodes are freed at once and the tree shrinks when it can,
 * so an empty tree holds no memory. No locking inside: callers serialise
 * changes and keep lookups away from them (the page cache uses its
 * mapping's i_pages_lock). Items must not be NULL.
 */
#ifndef QUIRE_RADIX_TREE_H
#define QUIRE_RADIX_TREE_H

#include <quire/types.h>
#include <quire/gfp.h>

#define RADIX_TREE_MAP_SHIFT	6
#define RADIX_TREE_MAP_SIZE	(1UL << RADIX_TREE_MAP_SHIFT)
#define RADIX_TREE_MAP_MASK	(RADIX_TREE_MAP_SIZE - 1)

struct radix_tree_node {
	void *slots[RADIX_TREE_MAP_SIZE];	/* child nodes, or items at height 1 */
};

struct radix_tree_root {
	unsigned int height;		/* 0: empty */
	struct radix_tree_node *rnode;
};

#define RADIX_TREE_INIT	{ 0, NULL }

static inline void INIT_RADIX_TREE(struct radix_tree_root *root)
{
	root->height = 0;
	root->rnode = NULL;
}

static inline bool radix_tree_empty(const struct radix_tree_root *root)
{
	return root->rnode == NULL;
}

/* Store item at index: 0, -EEXIST when the slot is taken, -ENOMEM. */
int radix_tree_insert(struct radix_tree_root *root, unsigned long index, void *item, gfp_t gfp);
/* The item at index, or NULL. */
void *radix_tree_lookup(const struct radix_tree_root *root, unsigned long index);
/* Put item (not NULL) where an item is at index: the old item, or NULL (nothing there: nothing changed). No allocation. */
void *radix_tree_replace(struct radix_tree_root *root, unsigned long index, void *item);
/* Remove and return the item at index (NULL if none); frees emptied nodes. */
void *radix_tree_delete(struct radix_tree_root *root, unsigned long index);
/*
 * The first item at an index >= *index, with *index set to its index; NULL
 * when there is none. Walk a tree with: for (i = 0; (p = next(root, &i)); i++).
 * (Careful at ULONG_MAX: i++ wraps.)
 */
void *radix_tree_next(const struct radix_tree_root *root, unsigned long *index);
/* Nodes allocated in all trees, for leak checks in tests. */
extern long radix_tree_nodes;

#endif
