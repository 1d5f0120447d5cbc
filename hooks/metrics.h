/* A small metrics registry rendered in the Prometheus text format.
 *
 * Families are created on first use; a series is a family plus a label
 * string such as `code="200"` written by kfix itself (never raw request
 * text, so the number of series stays bounded).  The registry has fixed
 * maxima: series beyond them are dropped and counted in
 * kfix_metrics_dropped_total. */
#ifndef KFIX_HOOKS_METRICS_H
#define KFIX_HOOKS_METRICS_H

#include <stddef.h>

#include "common/buf.h"
#include "common/macro.h"

struct metrics;

int metrics_new(struct metrics **ret);
void metrics_free(struct metrics *m);
DEFINE_CLEANUP(struct metrics, metrics_free)

/* labels may be NULL or "" for a series without labels. */
void metrics_counter_add(struct metrics *m, const char *family,
			 const char *help, const char *labels, double v);
void metrics_gauge_set(struct metrics *m, const char *family,
		       const char *help, const char *labels, double v);
/* Buckets in seconds from 1 ms to 60 s. */
void metrics_observe(struct metrics *m, const char *family, const char *help,
		     const char *labels, double seconds);

int metrics_render(struct metrics *m, struct buf *out);

#endif
