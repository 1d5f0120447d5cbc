/* What jobs measure (builds, VM runs, LLM calls, tokens and cost), for
 * kfixd's /metrics.
 *
 * Jobs run in child processes, so the numbers go through the store
 * (store_metric_add/observe) and kfixd renders them on each scrape.
 * Label values are reduced to a known set or a safe spelling, so the
 * number of series stays bounded whatever a job passes.  A job should
 * not fail because a number could not be recorded: callers may ignore
 * the result (it is -errno, and store_errmsg() says more). */
#ifndef KFIX_DAEMON_STATS_H
#define KFIX_DAEMON_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"

struct store;

/* One kernel build.  result: build_status_to_string() of repro/build.h
 * ("ok", "build-error", "patch-error", "config-error", "infra-error");
 * anything else counts as "other". */
int stats_build(struct store *s, const char *result, double seconds);
/* One reproducer run in a VM.  outcome: run_outcome_to_string() of
 * repro/run.h ("crashed", "no-crash", "build-error", "boot-error",
 * "infra-error"); anything else counts as "other". */
int stats_vm_run(struct store *s, const char *outcome, double seconds);
/* One LLM call (retries included in its time), its tokens and cost (in
 * the currency of the [llm] prices).  model: the configured model name. */
int stats_llm_call(struct store *s, const char *model, bool ok, double seconds,
		   uint64_t tokens_in, uint64_t tokens_out, double cost);

/* Appends every recorded series to out in the Prometheus text format. */
int stats_render(struct store *s, struct buf *out);

#endif
