/*
 * Completions (kernel/locking/completion.c): "wait until that is done",
 * with Linux's semantics. complete() lets one waiter through (or the next
 * one to come, if nobody waits yet); complete_all() lets everyone through
 * until reinit_completion(). complete() may be called from an interrupt
 * handler; the waits sleep. Timeouts are in nanoseconds.
 */
#ifndef QUIRE_COMPLETION_H
#define QUIRE_COMPLETION_H

#include <quire/types.h>
#include <quire/wait.h>

#define COMPLETION_ALL	(~0U)		/* done after complete_all */

struct completion {
	unsigned int done;		/* completions not yet consumed, or COMPLETION_ALL */
	wait_queue_head_t wait;
};

#define COMPLETION_INITIALIZER(name) \
	{ .done = 0, .wait = __WAIT_QUEUE_HEAD_INITIALIZER((name).wait) }
#define DECLARE_COMPLETION(name) struct completion name = COMPLETION_INITIALIZER(name)

void init_completion(struct completion *x);
/* Start over (done = 0); nobody may be waiting. */
void reinit_completion(struct completion *x);

void complete(struct completion *x);
void complete_all(struct completion *x);

void wait_for_completion(struct completion *x);
/* 0 on timeout, otherwise the nanoseconds that were left (at least 1). */
u64 wait_for_completion_timeout(struct completion *x, u64 timeout_ns);
/* Consume a completion if one is there, without sleeping. */
bool try_wait_for_completion(struct completion *x);
/* Whether a wait would return at once (nobody would sleep). */
bool completion_done(struct completion *x);

#endif
