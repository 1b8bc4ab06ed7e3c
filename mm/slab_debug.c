/*
 * Slab debug checks (slab_debug=1, or SLAB_RED_ZONE/SLAB_POISON on a
 * cache): red zones around every object, poison in free objects, a state
 * byte per object, and the report printed when one of them is found
 * damaged. The slot layout is described in mm/slab.h.
 *
 * When each check runs:
 *   kfree            state (double free), both red zones and the kmalloc
 *                    slack past the requested size;
 *   allocation       state, red zones and poison of the object handed out
 *                    (a write after free shows as damaged poison);
 *   slab discarded   the same, for every free object of the slab.
 */
#define pr_fmt(fmt) "slab: " fmt
#include "slab.h"
#include <quire/kernel.h>
#include <quire/ksyms.h>
#include <quire/printk.h>
#include <quire/stacktrace.h>
#include <quire/string.h>

/* The first byte in [p, p + n) that is not c, or NULL. */
static const u8 *first_not(const void *p, u8 c, size_t n)
{
	const u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != c)
			return b + i;
	return NULL;
}

static unsigned int right_red_end(const struct kmem_cache *s)
{
	return s->track_offset - s->red_left;	/* object-relative end of the right red zone */
}

void slab_debug_init_slot(struct kmem_cache *s, void *obj)
{
	u8 *slot = slot_of(s, obj);
	struct slab_track *t = track_of(s, obj);
	unsigned int track_end = s->track_offset + (unsigned int)sizeof(*t);

	memset(slot, SLAB_RED_BYTE, s->red_left);
	memset(obj, SLAB_POISON_FREE, s->object_size);
	memset((u8 *)obj + s->object_size, SLAB_RED_BYTE, right_red_end(s) - s->object_size);
	memset(t, 0, sizeof(*t));
	t->state = SLAB_OBJ_FREE;
	memset(slot + track_end, SLAB_RED_BYTE, s->size - track_end);
}

/* Red zones left and right (from req_size on) and the pad after the track. */
static const char *check_red_zones(struct kmem_cache *s, void *obj, size_t req_size,
				   const u8 **bad)
{
	const u8 *slot = slot_of(s, obj);
	unsigned int track_end = s->track_offset + (unsigned int)sizeof(struct slab_track);

	*bad = first_not(slot, SLAB_RED_BYTE, s->red_left);
	if (!*bad)
		*bad = first_not((u8 *)obj + req_size, SLAB_RED_BYTE, right_red_end(s) - req_size);
	if (!*bad)
		*bad = first_not(slot + track_end, SLAB_RED_BYTE, s->size - track_end);
	return *bad ? "red zone overwritten" : NULL;
}

const char *slab_debug_check_alloc(struct kmem_cache *s, void *obj, const u8 **bad)
{
	const char *what;

	*bad = NULL;
	if (track_of(s, obj)->state != SLAB_OBJ_FREE)
		return "allocated object on the freelist";
	what = check_red_zones(s, obj, s->object_size, bad);
	if (what)
		return what;
	*bad = first_not(obj, SLAB_POISON_FREE, s->object_size);
	return *bad ? "use-after-free write" : NULL;
}

const char *slab_debug_check_free(struct kmem_cache *s, void *obj, const u8 **bad)
{
	size_t req = track_of(s, obj)->req_size;

	if (req > s->object_size)	/* the track itself is damaged */
		req = s->object_size;
	return check_red_zones(s, obj, req, bad);
}

void slab_debug_mark_alloc(struct kmem_cache *s, void *obj, size_t req_size,
			   unsigned long ip)
{
	struct slab_track *t = track_of(s, obj);

	t->state = SLAB_OBJ_ALLOCATED;
	t->alloc_ip = ip;
	t->req_size = (u32)req_size;
	/* kmalloc(100) from kmalloc-128: bytes 100..127 are red zone too. */
	memset((u8 *)obj + req_size, SLAB_RED_BYTE, s->object_size - req_size);
}

void slab_debug_mark_free(struct kmem_cache *s, void *obj, unsigned long ip)
{
	struct slab_track *t = track_of(s, obj);

	memset(obj, SLAB_POISON_FREE, s->object_size);
	t->state = SLAB_OBJ_FREE;
	t->free_ip = ip;
}

void slab_debug_grant_full(struct kmem_cache *s, void *obj)
{
	struct slab_track *t = track_of(s, obj);

	if (t->state == SLAB_OBJ_ALLOCATED)
		t->req_size = s->object_size;
}

void slab_debug_check_slab(struct kmem_cache *s, struct page *slab)
{
	char *base = slab_base(slab);

	for (unsigned int i = 0; i < slab->objects; i++) {
		void *obj = base + (size_t)i * s->size + s->red_left;
		const char *what;
		const u8 *bad;

		if (track_of(s, obj)->state != SLAB_OBJ_FREE)
			continue;
		what = slab_debug_check_alloc(s, obj, &bad);
		if (what)
			slab_report(s, obj, what, bad);
	}
}

/* ---- reports ---- */

static void format_ip(char *buf, size_t len, unsigned long ip)
{
	if (!ip) {
		strscpy(buf, "(nobody yet)", len);
		return;
	}
	ksym_format(buf, len, ip);
}

static const char *state_name(u8 state)
{
	switch (state) {
	case SLAB_OBJ_FREE: return "free";
	case SLAB_OBJ_ALLOCATED: return "allocated";
	case SLAB_OBJ_QUARANTINED: return "quarantined";
	default: return "corrupted";
	}
}

/* Which part of the slot the byte at object offset off is in. */
static const char *region_name(const struct kmem_cache *s, long off, size_t req)
{
	if (off < 0)
		return "left red zone";
	if (off < (long)req)
		return "object";
	if (off < (long)s->object_size)
		return "kmalloc slack past the requested size";
	if (off < (long)right_red_end(s))
		return "right red zone";
	if (off < (long)(right_red_end(s) + sizeof(struct slab_track)))
		return "debug track";
	return "padding";
}

/* 16 bytes a line, at most 4 lines around the damaged byte, within the slot. */
static void dump_bytes(const struct kmem_cache *s, const void *obj, const u8 *bad)
{
	const u8 *slot = slot_of(s, obj), *end = slot + s->size;
	const u8 *from = (const u8 *)ALIGN_DOWN((uintptr_t)bad, 16) - 16;

	if (from < slot)
		from = slot;
	for (int line = 0; line < 4 && from < end; line++, from += 16) {
		char buf[16 * 3 + 1];
		int len = 0;

		for (int i = 0; i < 16 && from + i < end; i++)
			len += scnprintf(buf + len, sizeof(buf) - (size_t)len, " %02x", from[i]);
		pr_err("  object%+-6ld:%s\n", (long)(from - (const u8 *)obj), buf);
	}
}

void slab_report(struct kmem_cache *s, const void *obj, const char *what, const u8 *bad)
{
	atomic_long_inc(&slab_errors);
	pr_err("%s in %s object %#lx\n", what, s->name, (unsigned long)obj);
	if (s->debug) {
		const struct slab_track *t = track_of(s, obj);
		char alloc_by[96], free_by[96];
		size_t req = t->req_size <= s->object_size ? t->req_size : s->object_size;

		if (bad) {
			long off = (long)(bad - (const u8 *)obj);
			bool poison = off >= 0 && off < (long)s->object_size &&
				      t->state != SLAB_OBJ_ALLOCATED && !strstr(what, "red zone");

			pr_err("  first bad byte at object%+ld (%s): %#04x, expected %#04x\n",
			       off, poison ? "poisoned object" : region_name(s, off, req), *bad,
			       poison ? SLAB_POISON_FREE : SLAB_RED_BYTE);
			dump_bytes(s, obj, bad);
		}
		format_ip(alloc_by, sizeof(alloc_by), t->alloc_ip);
		format_ip(free_by, sizeof(free_by), t->free_ip);
		pr_err("  object size %u (asked for %u), state %s\n", s->object_size,
		       t->req_size, state_name(t->state));
		pr_err("  last allocated by %s\n", alloc_by);
		pr_err("  last freed by %s\n", free_by);
	}
	dump_stack();
}

void slab_report_invalid_free(struct kmem_cache *s, const void *p, const char *why)
{
	atomic_long_inc(&slab_errors);
	pr_err("invalid free in %s object %#lx: %s\n", s ? s->name : "no cache",
	       (unsigned long)p, why);
	dump_stack();
}
