/* Cause bisection around the bisect job (job-bisect.c): asking for one
 * (kfixctl bisect, a request the scheduler turns into a job) and reading
 * what the last one found, for the patch's Fixes: and the mail's Cc. */
#ifndef KFIX_BISECT_H
#define KFIX_BISECT_H

#include <stdint.h>

#include <jansson.h>

struct store;

/* Records a request.bisect event (good: a revision known not to crash,
 * NULL for the configured one or the releases below the base). */
int bisect_ask(struct store *s, int64_t bug, const char *by, const char *good);
/* The scheduler's side: one bisect job per bug at a time. */
int bisect_request(struct store *s, int64_t bug, const json_t *detail);

/* The newest bisect.done of the bug that found its culprit: the event's
 * detail (culprit, subject, author, cc, tests, builds, range, ...).
 * -ENOENT when none did. */
int bisect_found(struct store *s, int64_t bug, json_t **ret);

#endif
