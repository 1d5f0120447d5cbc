/* Unit tests of the LLM budget: the limits read from the configuration,
 * when a day's or a bug's budget counts as spent, what a bug may still
 * spend, a job's gate and the scheduler's part. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "daemon/budget.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "tests/unit/store-fixture.h"

static struct config *cfg_with(const char *const *kv)
{
	struct config *c = NULL;

	assert_int_equal(config_new_empty(&c), 0);
	for (size_t i = 0; kv && kv[i]; i += 2)
		assert_int_equal(config_set(c, "kfix", NULL, kv[i], kv[i + 1]), 0);
	return c;
}

static int64_t add_bug(struct store *s, const char *extid)
{
	struct store_bug b = { .source = "syzbot", .source_id = (char *)extid, .title = "t" };
	int64_t id = 0;
	bool created;

	assert_int_equal(store_bug_add(s, &b, &id, &created), 0);
	return id;
}

static bool near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

static void test_limits_get(void **state)
{
	struct budget_limits l = { 1, 1, 1, 1 };
	struct config *c;

	(void)state;
	c = cfg_with(NULL);
	assert_int_equal(budget_limits_get(c, &l), 0);
	/* nothing configured: no limit at all */
	assert_int_equal(l.day_tokens, 0);
	assert_int_equal(l.bug_tokens, 0);
	assert_true(near(l.day_cost, 0));
	assert_true(near(l.bug_cost, 0));
	config_free(c);

	c = cfg_with((const char *const[]){ "llm-day-tokens", "1000", "llm-bug-tokens", "200",
					     "llm-day-cost", "2.5", "llm-bug-cost", "0.25", NULL });
	assert_int_equal(budget_limits_get(c, &l), 0);
	assert_int_equal(l.day_tokens, 1000);
	assert_int_equal(l.bug_tokens, 200);
	assert_true(near(l.day_cost, 2.5));
	assert_true(near(l.bug_cost, 0.25));
	config_free(c);
}

static void test_limits_bad_cost(void **state)
{
	static const char *const bad[][2] = {
		{ "llm-day-cost", "abc" }, { "llm-day-cost", "1.5x" }, { "llm-day-cost", "-1" },
		{ "llm-bug-cost", "-0.01" }, { "llm-bug-cost", "2 " },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct budget_limits l = { 7, 7, 7, 7 };
		struct config *c = cfg_with((const char *const[]){ bad[i][0], bad[i][1], NULL });

		if (budget_limits_get(c, &l) != -EINVAL)
			fail_msg("%s = \"%s\" accepted", bad[i][0], bad[i][1]);
		/* the limits are left alone */
		assert_int_equal(l.day_tokens, 7);
		assert_true(near(l.bug_cost, 7));
		config_free(c);
	}
}

static void test_day_start(void **state)
{
	(void)state;
	assert_int_equal(budget_day_start(0), 0);
	assert_int_equal(budget_day_start(86399), 0);
	assert_int_equal(budget_day_start(86400), 86400);
	assert_int_equal(budget_day_start(86401), 86400);
	/* 2024-03-01 12:34:56 UTC */
	assert_int_equal(budget_day_start(1709296496), 1709251200);
}

static void test_day_spent_boundaries(void **state)
{
	struct fixture *f = *state;
	struct budget_limits l = { .day_tokens = 100 };
	int64_t b = add_bug(f->s, "d1");
	char why[160] = "untouched";

	/* no limits: never spent, not even with usage */
	assert_int_equal(store_llm_usage_add(f->s, b, 0, "m", 60, 39, 0.5), 0);
	assert_int_equal(budget_day_spent(f->s, &(struct budget_limits){ 0 }, why, sizeof(why)), 0);
	assert_string_equal(why, "untouched");
	/* 99 of 100 tokens */
	assert_int_equal(budget_day_spent(f->s, &l, why, sizeof(why)), 0);
	assert_string_equal(why, "untouched");
	/* 100 of 100: spent */
	assert_int_equal(store_llm_usage_add(f->s, 0, 0, "m", 1, 0, 0), 0);
	assert_int_equal(budget_day_spent(f->s, &l, why, sizeof(why)), 1);
	assert_string_equal(why, "the day's LLM budget is spent: 100 tokens of 100");

	/* cost alone: 0.5 of 0.6 is not spent, 0.5 of 0.5 is */
	l = (struct budget_limits){ .day_cost = 0.6 };
	assert_int_equal(budget_day_spent(f->s, &l, why, sizeof(why)), 0);
	l.day_cost = 0.5;
	assert_int_equal(budget_day_spent(f->s, &l, why, sizeof(why)), 1);
	assert_string_equal(why, "the day's LLM budget is spent: cost 0.5000 of 0.5000");
	/* the bug limits do not limit the day */
	l = (struct budget_limits){ .bug_tokens = 1, .bug_cost = 0.01 };
	assert_int_equal(budget_day_spent(f->s, &l, why, sizeof(why)), 0);
}

static void test_bug_spent_per_bug(void **state)
{
	struct fixture *f = *state;
	struct budget_limits l = { .bug_tokens = 50, .bug_cost = 1.0 };
	int64_t a = add_bug(f->s, "a"), b = add_bug(f->s, "b");
	char why[160] = "";

	assert_int_equal(store_llm_usage_add(f->s, a, 0, "m", 30, 20, 0.1), 0);
	assert_int_equal(store_llm_usage_add(f->s, b, 0, "m", 10, 0, 0.1), 0);
	assert_int_equal(budget_bug_spent(f->s, &l, a, why, sizeof(why)), 1);
	assert_string_equal(why, "the bug's LLM budget is spent: 50 tokens of 50");
	/* another bug's usage does not count */
	assert_int_equal(budget_bug_spent(f->s, &l, b, why, sizeof(why)), 0);
	/* the cost limit on its own */
	assert_int_equal(store_llm_usage_add(f->s, b, 0, "m", 0, 0, 0.9), 0);
	assert_int_equal(budget_bug_spent(f->s, &l, b, why, sizeof(why)), 1);
	assert_string_equal(why, "the bug's LLM budget is spent: cost 1.0000 of 1.0000");
	/* the day's limits do not limit a bug */
	l = (struct budget_limits){ .day_tokens = 1, .day_cost = 0.01 };
	assert_int_equal(budget_bug_spent(f->s, &l, a, why, sizeof(why)), 0);
}

/* What the repair's engine is capped to (job-repair.c, cap_to_budget). */
/* ---- budget_job_gate ---- */

static int gate_left(struct fixture *f, struct config *c, int64_t bug, bool *permanent, char **error,
		     struct budget_left *left)
{
	struct store_job j = { .id = 1, .bug_id = bug, .kind = "repair" };
	struct job_ctx ctx = { .cfg = c, .store = f->s, .job = &j, .owner = "test:1" };
	int r = budget_job_gate(&ctx, left);

	*permanent = ctx.permanent;
	*error = ctx.error;
	return r;
}

static int gate(struct fixture *f, struct config *c, int64_t bug, bool *permanent, char **error)
{
	struct budget_left left;

	return gate_left(f, c, bug, permanent, error, &left);
}

/* What the gate lets the job spend. */
static void left_of(struct fixture *f, const char *const *keys, int64_t bug, struct budget_left *ret)
{
	struct config *c = cfg_with(keys);
	bool permanent;
	char *err = NULL;

	*ret = (struct budget_left){ 12345, 12345 };
	assert_int_equal(gate_left(f, c, bug, &permanent, &err, ret), 0);
	assert_null(err);
	config_free(c);
}

static void test_bug_left(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_bug(f->s, "a");
	struct budget_left l;

	assert_int_equal(store_llm_usage_add(f->s, a, 0, "m", 300, 0, 0.25), 0);
	/* no limit */
	left_of(f, (const char *const[]){ NULL }, a, &l);
	assert_true(l.tokens == UINT64_MAX);
	assert_true(near(l.cost, -1));
	/* tokens only */
	left_of(f, (const char *const[]){ "llm-bug-tokens", "1000", NULL }, a, &l);
	assert_int_equal(l.tokens, 700);
	assert_true(near(l.cost, -1));
	/* cost only */
	left_of(f, (const char *const[]){ "llm-bug-cost", "1.0", NULL }, a, &l);
	assert_true(l.tokens == UINT64_MAX);
	assert_true(near(l.cost, 0.75));
	/* a day budget does not limit the bug */
	left_of(f, (const char *const[]){ "llm-day-tokens", "1000", NULL }, a, &l);
	assert_true(l.tokens == UINT64_MAX);
	/* one token short of spent */
	left_of(f, (const char *const[]){ "llm-bug-tokens", "301", NULL }, a, &l);
	assert_int_equal(l.tokens, 1);
	/* a bug that used nothing has it all */
	left_of(f, (const char *const[]){ "llm-bug-tokens", "300", NULL }, add_bug(f->s, "b"), &l);
	assert_int_equal(l.tokens, 300);
}



static void test_gate(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_bug(f->s, "a"), b = add_bug(f->s, "b");
	struct config *c;
	bool permanent;
	char *err;

	assert_int_equal(store_llm_usage_add(f->s, a, 0, "m", 100, 0, 0), 0);

	/* within both budgets */
	c = cfg_with((const char *const[]){ "llm-day-tokens", "1000", "llm-bug-tokens", "101",
					     NULL });
	assert_int_equal(gate(f, c, a, &permanent, &err), 0);
	assert_false(permanent);
	assert_null(err);
	config_free(c);

	/* the bug's budget: a permanent failure */
	c = cfg_with((const char *const[]){ "llm-day-tokens", "1000", "llm-bug-tokens", "100",
					     NULL });
	assert_int_equal(gate(f, c, a, &permanent, &err), -EDQUOT);
	assert_true(permanent);
	assert_string_equal(err, "the bug's LLM budget is spent: 100 tokens of 100");
	free(err);
	/* ... of that bug only */
	assert_int_equal(gate(f, c, b, &permanent, &err), 0);
	config_free(c);

	/* the day's budget: retried later */
	c = cfg_with((const char *const[]){ "llm-day-tokens", "100", NULL });
	assert_int_equal(gate(f, c, b, &permanent, &err), -EAGAIN);
	assert_false(permanent);
	assert_string_equal(err, "the day's LLM budget is spent: 100 tokens of 100; "
				 "the job waits for the next day");
	free(err);
	config_free(c);

	/* both spent: the bug's decides, the job does not wait in vain */
	c = cfg_with((const char *const[]){ "llm-day-tokens", "100", "llm-bug-tokens", "100",
					     NULL });
	assert_int_equal(gate(f, c, a, &permanent, &err), -EDQUOT);
	assert_true(permanent);
	free(err);
	config_free(c);

	/* a cost that is no number: permanent */
	c = cfg_with((const char *const[]){ "llm-bug-cost", "lots", NULL });
	assert_int_equal(gate(f, c, b, &permanent, &err), -EINVAL);
	assert_true(permanent);
	assert_string_equal(err, "invalid kfix.llm-day-cost or kfix.llm-bug-cost");
	free(err);
	config_free(c);
}

/* ---- budget_schedule ---- */

static int64_t job_not_before(struct store *s, int64_t id, char **ret_state)
{
	struct store_job *j = NULL;
	int64_t nb;

	assert_int_equal(store_job_get(s, id, &j), 0);
	nb = j->not_before;
	if (ret_state)
		*ret_state = strdup(j->state);
	store_job_free(j);
	return nb;
}

static size_t events(struct store *s, const char *kind)
{
	struct store_event **ev = NULL;
	struct store_query q = { .state = kind };
	size_t n = 0;

	assert_int_equal(store_event_query(s, &q, &ev, &n), 0);
	store_event_list_free(ev, n);
	return n;
}

static void test_schedule_day(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_bug(f->s, "a"), repair, iter, repro;
	int64_t tomorrow = budget_day_start(time(NULL)) + 86400;
	struct config *spent, *open;
	char *v = NULL;

	assert_int_equal(store_job_add(f->s, a, "repair", NULL, 0, 3, &repair), 0);
	assert_int_equal(store_job_add(f->s, a, "iterate", NULL, 0, 3, &iter), 0);
	assert_int_equal(store_job_add(f->s, a, "reproduce", NULL, 0, 3, &repro), 0);
	assert_int_equal(store_llm_usage_add(f->s, a, 0, "m", 10, 0, 0), 0);
	open = cfg_with((const char *const[]){ "llm-day-tokens", "11", NULL });
	spent = cfg_with((const char *const[]){ "llm-day-tokens", "10", NULL });

	/* within the budget: nothing waits, nothing is recorded */
	assert_int_equal(budget_schedule(open, f->s), 0);
	assert_int_equal(job_not_before(f->s, repair, NULL), 0);
	assert_int_equal(events(f->s, "budget.day-spent"), 0);

	/* spent: the LLM jobs wait for the next UTC day, the others do not */
	assert_int_equal(budget_schedule(spent, f->s), 0);
	assert_int_equal(job_not_before(f->s, repair, NULL), tomorrow * 1000000);
	assert_int_equal(job_not_before(f->s, iter, NULL), tomorrow * 1000000);
	assert_int_equal(job_not_before(f->s, repro, NULL), 0);
	assert_int_equal(store_kv_get(f->s, "budget.day-spent-until", &v), 0);
	assert_int_equal(strtoll(v, NULL, 10), tomorrow);
	free(v);
	assert_int_equal(events(f->s, "budget.day-spent"), 1);
	/* once: a second pass records nothing new */
	assert_int_equal(budget_schedule(spent, f->s), 0);
	assert_int_equal(events(f->s, "budget.day-spent"), 1);

	/* a raised limit lets them go at once */
	assert_int_equal(budget_schedule(open, f->s), 0);
	assert_int_equal(job_not_before(f->s, repair, NULL), 0);
	assert_int_equal(job_not_before(f->s, iter, NULL), 0);
	assert_int_equal(store_kv_get(f->s, "budget.day-spent-until", &v), 0);
	assert_string_equal(v, "0");
	free(v);
	config_free(open);
	config_free(spent);
}

static void test_schedule_bug(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_bug(f->s, "a"), b = add_bug(f->s, "b"), ra, rb, repro;
	struct config *c = cfg_with((const char *const[]){ "llm-bug-cost", "0.5", NULL });
	struct store_bug *got = NULL;
	char *st = NULL;

	assert_int_equal(store_bug_set_state(f->s, a, "reproducing", NULL), 0);
	assert_int_equal(store_bug_set_state(f->s, a, "repairing", NULL), 0);
	assert_int_equal(store_job_add(f->s, a, "repair", NULL, 0, 3, &ra), 0);
	assert_int_equal(store_job_add(f->s, a, "reproduce", NULL, 0, 3, &repro), 0);
	assert_int_equal(store_job_add(f->s, b, "repair", NULL, 0, 3, &rb), 0);
	assert_int_equal(store_llm_usage_add(f->s, a, 0, "m", 0, 0, 0.5), 0);
	assert_int_equal(store_llm_usage_add(f->s, b, 0, "m", 0, 0, 0.49), 0);

	assert_int_equal(budget_schedule(c, f->s), 0);
	/* bug a: its repair ends and the bug gives up */
	job_not_before(f->s, ra, &st);
	assert_string_equal(st, "cancelled");
	free(st);
	assert_int_equal(store_bug_get(f->s, a, &got), 0);
	assert_string_equal(got->state, "gave-up");
	store_bug_free(got);
	assert_int_equal(events(f->s, "budget.bug-spent"), 1);
	/* its other jobs and the other bug go on */
	job_not_before(f->s, repro, &st);
	assert_string_equal(st, "queued");
	free(st);
	job_not_before(f->s, rb, &st);
	assert_string_equal(st, "queued");
	free(st);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_get),
		cmocka_unit_test(test_limits_bad_cost),
		cmocka_unit_test(test_day_start),
		cmocka_unit_test_setup_teardown(test_day_spent_boundaries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bug_spent_per_bug, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bug_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schedule_day, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schedule_bug, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
