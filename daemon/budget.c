#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "iterate.h"
#include "jobs.h"
#include "store.h"

#define DAY_SECONDS 86400
#define WAIT_KEY "budget.day-spent-until"

/* An unset or empty cost is no limit. */
static int cost_parse(const char *v, double *ret)
{
	char *end;
	double d;

	if (!v || !*v) {
		*ret = 0;
		return 0;
	}
	d = strtod(v, &end);
	if (*end || d < 0)
		return -EINVAL;
	*ret = d;
	return 0;
}

int budget_limits_get(const struct config *cfg, struct budget_limits *ret)
{
	struct budget_limits l = { 0 };
	const char *day_cost = NULL, *bug_cost = NULL;
	int r;

	(void)config_get_int(cfg, "kfix", NULL, "llm-day-tokens", &l.day_tokens);
	(void)config_get_int(cfg, "kfix", NULL, "llm-bug-tokens", &l.bug_tokens);
	(void)config_get_string(cfg, "kfix", NULL, "llm-day-cost", &day_cost);
	(void)config_get_string(cfg, "kfix", NULL, "llm-bug-cost", &bug_cost);
	r = cost_parse(day_cost, &l.day_cost);
	if (r >= 0)
		r = cost_parse(bug_cost, &l.bug_cost);
	if (r < 0)
		return r;
	*ret = l;
	return 0;
}

int64_t budget_day_start(int64_t t)
{
	return t - t % DAY_SECONDS;
}

static int over(const char *what, int64_t tokens, double cost, int64_t max_tokens,
		double max_cost, char *why, size_t n)
{
	if (max_tokens > 0 && tokens >= max_tokens) {
		snprintf(why, n, "%s LLM budget is spent: %lld tokens of %lld", what,
			 (long long)tokens, (long long)max_tokens);
		return 1;
	}
	if (max_cost > 0 && cost >= max_cost) {
		snprintf(why, n, "%s LLM budget is spent: cost %.4f of %.4f", what, cost, max_cost);
		return 1;
	}
	return 0;
}

int budget_day_spent(struct store *s, const struct budget_limits *l, char *why, size_t n)
{
	int64_t tokens = 0;
	double cost = 0;
	int r;

	if (l->day_tokens <= 0 && l->day_cost <= 0)
		return 0;
	r = store_llm_usage_sum(s, budget_day_start(time(NULL)), 0, &tokens, &cost);
	return r < 0 ? r : over("the day's", tokens, cost, l->day_tokens, l->day_cost, why, n);
}

/* What the bug used, summed only when it has a budget. */
static int bug_usage(struct store *s, const struct budget_limits *l, int64_t bug,
		     int64_t *ret_tokens, double *ret_cost)
{
	*ret_tokens = 0;
	*ret_cost = 0;
	if (l->bug_tokens <= 0 && l->bug_cost <= 0)
		return 0;
	return store_llm_usage_sum(s, 0, bug, ret_tokens, ret_cost);
}

int budget_bug_spent(struct store *s, const struct budget_limits *l, int64_t bug, char *why,
		     size_t n)
{
	int64_t tokens;
	double cost;
	int r = bug_usage(s, l, bug, &tokens, &cost);

	return r < 0 ? r : over("the bug's", tokens, cost, l->bug_tokens, l->bug_cost, why, n);
}

static int event(struct store *s, int64_t bug, const char *kind, json_t *j)
{
	_cleanup_free_ char *d = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return d ? store_event_add(s, bug, 0, kind, d) : -ENOMEM;
}

/* The queued LLM jobs wait until `until` (0: they may go now). */
static int day_wait(struct store *s, int64_t until, const char *why)
{
	_cleanup_free_ char *cur = NULL;
	int64_t was = 0;
	char v[32];
	int r;

	if (store_kv_get(s, WAIT_KEY, &cur) >= 0)
		was = strtoll(cur, NULL, 10);
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_job_defer(s, "repair", until, was);
	if (r >= 0)
		r = store_job_defer(s, "iterate", until, was);
	if (r >= 0 && was != until) {
		snprintf(v, sizeof(v), "%lld", (long long)until);
		r = store_kv_set(s, WAIT_KEY, v);
		if (r >= 0 && until > 0)
			r = event(s, 0, "budget.day-spent",
				  json_pack("{s:s, s:I}", "why", why, "until", (json_int_t)until));
	}
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	if (was != until && until > 0)
		log_notice("%s: repairs wait for the next day", why);
	return store_commit(s);
}

/* A queued job of a bug whose budget is spent: cancelled, and the bug
 * stops (a first repair gives up; a new version leaves the published
 * patch as it was). */
static int bug_stop(struct store *s, const struct store_job *j, const char *why)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = store_job_cancel(s, j->id);
	if (r >= 0)
		r = store_bug_set_state(s, j->bug_id,
					streq(j->kind, "iterate") ? iterate_return_state(s, j->bug_id)
								  : "gave-up", why);
	if (r >= 0)
		r = event(s, j->bug_id, "budget.bug-spent",
			  json_pack("{s:s, s:I, s:s}", "why", why, "job", (json_int_t)j->id, "kind",
				    j->kind));
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

int budget_schedule(const struct config *cfg, struct store *s)
{
	struct budget_limits l;
	struct store_job **jobs = NULL;
	char why[160] = "";
	size_t n = 0;
	int r = budget_limits_get(cfg, &l), spent;

	if (r < 0)
		return r;
	spent = budget_day_spent(s, &l, why, sizeof(why));
	if (spent < 0)
		return spent;
	r = day_wait(s, spent ? budget_day_start(time(NULL)) + DAY_SECONDS : 0, why);
	if (r < 0 || (l.bug_tokens <= 0 && l.bug_cost <= 0))
		return r;
	r = store_job_list(s, "queued", 0, 0, &jobs, &n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!streq(jobs[i]->kind, "repair") && !streq(jobs[i]->kind, "iterate"))
			continue;
		r = budget_bug_spent(s, &l, jobs[i]->bug_id, why, sizeof(why));
		if (r > 0)
			r = bug_stop(s, jobs[i], why);
	}
	store_job_list_free(jobs, n);
	return r;
}

int budget_job_gate(struct job_ctx *ctx, struct budget_left *ret_left)
{
	struct budget_limits l;
	int64_t tokens;
	double cost;
	char why[160];
	int r = budget_limits_get(ctx->cfg, &l);

	if (r < 0) {
		ctx->permanent = true;
		return job_fail(ctx, r, "invalid kfix.llm-day-cost or kfix.llm-bug-cost");
	}
	r = bug_usage(ctx->store, &l, ctx->job->bug_id, &tokens, &cost);
	if (r >= 0 && over("the bug's", tokens, cost, l.bug_tokens, l.bug_cost, why, sizeof(why))) {
		ctx->permanent = true;
		return job_fail(ctx, -EDQUOT, "%s", why);
	}
	if (r >= 0)
		r = budget_day_spent(ctx->store, &l, why, sizeof(why));
	if (r > 0)
		return job_fail(ctx, -EAGAIN, "%s; the job waits for the next day", why);
	if (r < 0)
		return job_fail(ctx, r, "budget: %s", store_errmsg(ctx->store));
	ret_left->tokens = l.bug_tokens > 0 ? (uint64_t)MAX(l.bug_tokens - tokens, 0) : UINT64_MAX;
	ret_left->cost = l.bug_cost > 0 ? MAX(l.bug_cost - cost, 0.0) : -1;
	return 0;
}
