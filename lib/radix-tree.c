/*
 * Radix tree: index -> pointer, 64 slots a node (include/quire/radix-tree.h).
 *
 * A tree of height h has h levels of nodes; the root node's slot i covers
 * indexes [i << 6(h-1), (i + 1) << 6(h-1)). Growing adds a root above the
 * old one (which becomes slot 0); shrinking removes a root whose only child
 * is slot 0. A node does not count its children: deleting scans the node's
 * 64 slots to see whether it became empty, which keeps a node at exactly 512
 * bytes.
 */
#include <quire/radix-tree.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>

#define MAX_HEIGHT	((64 + RADIX_TREE_MAP_SHIFT - 1) / RADIX_TREE_MAP_SHIFT)

long radix_tree_nodes;

static unsigned long max_index(unsigned int height)
{
	if (height * RADIX_TREE_MAP_SHIFT >= 64)
		return ~0UL;
	return (1UL << (height * RADIX_TREE_MAP_SHIFT)) - 1;
}

static unsigned int slot_of(unsigned long index, unsigned int height)
{
	return (index >> ((height - 1) * RADIX_TREE_MAP_SHIFT)) & RADIX_TREE_MAP_MASK;
}

static struct radix_tree_node *node_alloc(gfp_t gfp)
{
	struct radix_tree_node *n = kzalloc(sizeof(*n), gfp);

	if (n)
		__atomic_add_fetch(&radix_tree_nodes, 1, __ATOMIC_RELAXED);
	return n;
}

static void node_free(struct radix_tree_node *n)
{
	__atomic_sub_fetch(&radix_tree_nodes, 1, __ATOMIC_RELAXED);
	kfree(n);
}

static bool node_empty(const struct radix_tree_node *n)
{
	for (unsigned int i = 0; i < RADIX_TREE_MAP_SIZE; i++)
		if (n->slots[i])
			return false;
	return true;
}

static bool only_slot0(const struct radix_tree_node *n)
{
	for (unsigned int i = 1; i < RADIX_TREE_MAP_SIZE; i++)
		if (n->slots[i])
			return false;
	return n->slots[0] != NULL;
}

/* Drop root nodes that only have slot 0, and an empty root. */
static void shrink(struct radix_tree_root *root)
{
	while (root->height > 1 && only_slot0(root->rnode)) {
		struct radix_tree_node *old = root->rnode;

		root->rnode = old->slots[0];
		root->height--;
		node_free(old);
	}
	if (root->rnode && node_empty(root->rnode)) {
		node_free(root->rnode);
		root->rnode = NULL;
		root->height = 0;
	}
}

/*
 * Remove the item at index (if any), then free the nodes on its path that
 * are left empty, bottom up. Also cleans up after a failed insert.
 */
static void *delete_and_prune(struct radix_tree_root *root, unsigned long index)
{
	struct radix_tree_node *path[MAX_HEIGHT];
	unsigned int offs[MAX_HEIGHT];
	struct radix_tree_node *node = root->rnode;
	unsigned int h = root->height, depth = 0;
	void *item;

	if (!node || index > max_index(h))
		return NULL;
	for (; h > 0; h--) {
		path[depth] = node;
		offs[depth] = slot_of(index, h);
		depth++;
		if (h == 1)
			break;
		node = node->slots[offs[depth - 1]];
		if (!node)
			break;
	}
	item = h == 1 ? path[depth - 1]->slots[offs[depth - 1]] : NULL;
	if (item)
		path[depth - 1]->slots[offs[depth - 1]] = NULL;
	/* path[0] is the root: shrink() decides about it. */
	while (depth > 1 && node_empty(path[depth - 1])) {
		depth--;
		node_free(path[depth]);
		path[depth - 1]->slots[offs[depth - 1]] = NULL;
	}
	shrink(root);
	return item;
}

int radix_tree_insert(struct radix_tree_root *root, unsigned long index, void *item, gfp_t gfp)
{
	struct radix_tree_node *node;
	unsigned int h;

	if (!item)
		return -EINVAL;
	if (!root->rnode) {
		root->height = 1;
		while (index > max_index(root->height))
			root->height++;
		root->rnode = node_alloc(gfp);
		if (!root->rnode) {
			root->height = 0;
			return -ENOMEM;
		}
	}
	while (index > max_index(root->height)) {
		struct radix_tree_node *top = node_alloc(gfp);

		if (!top) {
			shrink(root);
			return -ENOMEM;
		}
		top->slots[0] = root->rnode;
		root->rnode = top;
		root->height++;
	}
	node = root->rnode;
	for (h = root->height; h > 1; h--) {
		struct radix_tree_node **slot = (struct radix_tree_node **)
			&node->slots[slot_of(index, h)];

		if (!*slot) {
			*slot = node_alloc(gfp);
			if (!*slot) {
				delete_and_prune(root, index);
				return -ENOMEM;
			}
		}
		node = *slot;
	}
	if (node->slots[slot_of(index, 1)])
		return -EEXIST;
	node->slots[slot_of(index, 1)] = item;
	return 0;
}

void *radix_tree_lookup(const struct radix_tree_root *root, unsigned long index)
{
	const struct radix_tree_node *node = root->rnode;

	if (!node || index > max_index(root->height))
		return NULL;
	for (unsigned int h = root->height; h > 1; h--) {
		node = node->slots[slot_of(index, h)];
		if (!node)
			return NULL;
	}
	return node->slots[slot_of(index, 1)];
}

void *radix_tree_replace(struct radix_tree_root *root, unsigned long index, void *item)
{
	struct radix_tree_node *node = root->rnode;
	void *old;

	if (!node || !item || index > max_index(root->height))
		return NULL;
	for (unsigned int h = root->height; h > 1; h--) {
		node = node->slots[slot_of(index, h)];
		if (!node)
			return NULL;
	}
	old = node->slots[slot_of(index, 1)];
	if (old)
		node->slots[slot_of(index, 1)] = item;
	return old;
}

void *radix_tree_delete(struct radix_tree_root *root, unsigned long index)
{
	return delete_and_prune(root, index);
}

/* The first item at or after start under node (which covers from base). */
static void *node_next(const struct radix_tree_node *node, unsigned int h,
		       unsigned long base, unsigned long start, unsigned long *found)
{
	unsigned int shift = (h - 1) * RADIX_TREE_MAP_SHIFT;
	unsigned int i = start > base ? slot_of(start, h) : 0;

	for (; i < RADIX_TREE_MAP_SIZE; i++) {
		unsigned long child_base = base + ((unsigned long)i << shift);
		void *slot = node->slots[i];

		if (!slot)
			continue;
		if (h == 1) {
			*found = child_base;
			return slot;
		}
		slot = node_next(slot, h - 1, child_base,
				 start > child_base ? start : child_base, found);
		if (slot)
			return slot;
	}
	return NULL;
}

void *radix_tree_next(const struct radix_tree_root *root, unsigned long *index)
{
	if (!root->rnode || *index > max_index(root->height))
		return NULL;
	return node_next(root->rnode, root->height, 0, *index, index);
}
