/* Counting semaphores across processes, for bounded use of shared
 * resources (build slots, VM slots, LLM calls) by job processes.
 *
 * A slot is an flock() on one of N files in a folder, so a job process
 * that dies releases its slot with it: no count to repair after a crash. */
#ifndef KFIX_SLOT_H
#define KFIX_SLOT_H

#include <stdint.h>

struct slot;

/* Takes one of max slots named name under dir, waiting up to timeout_usec
 * (0: do not wait; -EAGAIN when all are busy).  *ret_index says which. */
int slot_acquire(const char *dir, const char *name, int max,
		 uint64_t timeout_usec, struct slot **ret);
int slot_index(const struct slot *s);
void slot_release(struct slot *s);
/* How many of max slots are taken right now (for status and metrics). */
int slot_busy(const char *dir, const char *name, int max, int *ret_busy);

#endif
