/* The LLM budget: tokens (input + output) and money (in the currency of
 * the [llm] prices) per UTC day and per bug, from the usage every job
 * records per call (store_llm_usage_add).  When the day's budget is
 * spent, queued repair and iterate jobs wait for the next day; a bug
 * whose own budget is spent stops being worked on. */
#ifndef KFIX_DAEMON_BUDGET_H
#define KFIX_DAEMON_BUDGET_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct job_ctx;
struct store;

/* 0 means no limit. */
struct budget_limits {
	int64_t day_tokens, bug_tokens;
	double day_cost, bug_cost;
};

int budget_limits_get(const struct config *cfg, struct budget_limits *ret);
/* The start of the UTC day of a unix time. */
int64_t budget_day_start(int64_t t);

/* 1 with why set when spent, 0 when not. */
int budget_day_spent(struct store *s, const struct budget_limits *l, char *why, size_t n);
int budget_bug_spent(struct store *s, const struct budget_limits *l, int64_t bug, char *why,
		     size_t n);

/* The scheduler's part: defers queued repair and iterate jobs to the
 * next UTC day while the day's budget is spent (key
 * "budget.day-spent-until", event budget.day-spent), lets them go when
 * it no longer is, and ends the queued jobs of bugs whose budget is
 * spent (event budget.bug-spent). */
int budget_schedule(const struct config *cfg, struct store *s);

/* What a bug may still spend (UINT64_MAX tokens, cost -1: no limit). */
struct budget_left {
	uint64_t tokens;
	double cost;
};

/* A job's check before it calls the model, with the limits read and the
 * bug's usage summed once: -EAGAIN (retried) when the day's budget is
 * spent, -EDQUOT (permanent) when the bug's is, the reason in
 * ctx->error; otherwise what the bug may still spend. */
int budget_job_gate(struct job_ctx *ctx, struct budget_left *ret_left);

#endif
