/* Doubly linked circular lists, with Linux's names and semantics. */
#ifndef QUIRE_LIST_H
#define QUIRE_LIST_H

#include <quire/types.h>
#include <quire/compiler.h>

/*
 * As in Linux, the stores to ->next are marked (WRITE_ONCE): a word of a
 * list head may be read without the list's lock, such as a slab page's
 * slab_list.next, which is also its compound_head (kfree reads it first).
 */

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *l)
{
	WRITE_ONCE(l->next, l);
	l->prev = l;
}

static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	WRITE_ONCE(n->next, next);
	n->prev = prev;
	WRITE_ONCE(prev->next, n);
}

/* Add after head (a stack). */
static inline void list_add(struct list_head *n, struct list_head *head)
{
	__list_add(n, head, head->next);
}

/* Add before head (a queue). */
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	__list_add(n, head->prev, head);
}

static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	WRITE_ONCE(e->prev->next, e->next);
	WRITE_ONCE(e->next, NULL);
	e->prev = NULL;
}

static inline void list_del_init(struct list_head *e)
{
	e->next->prev = e->prev;
	WRITE_ONCE(e->prev->next, e->next);
	INIT_LIST_HEAD(e);
}

/* Take e off its list and put it at the tail of head. */
static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	list_del(e);
	list_add_tail(e, head);
}

/* Move every entry of list, in order, to the end of head; list is left empty. */
static inline void list_splice_tail_init(struct list_head *list, struct list_head *head)
{
	struct list_head *first = list->next, *last = list->prev, *at = head->prev;

	if (list == first)
		return;
	first->prev = at;
	at->next = first;
	last->next = head;
	head->prev = last;
	INIT_LIST_HEAD(list);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_first_entry_or_null(head, type, member) \
	(list_empty(head) ? NULL : list_first_entry(head, type, member))

#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_entry((head)->next, __typeof__(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_entry((head)->next, __typeof__(*pos), member),	\
	     n = list_entry(pos->member.next, __typeof__(*pos), member);	\
	     &pos->member != (head);					\
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif
