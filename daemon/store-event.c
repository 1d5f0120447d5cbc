/* The event log, the key-value table, the counts of /metrics and kfixctl
 * status, the scheduler mode, and the LLM usage the budgets count. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

int store_event_add(struct store *s, int64_t bug_id, int64_t job_id,
		    const char *kind, const char *detail)
{
	return db_exec(s, NULL,
		    "INSERT INTO events (ts, bug_id, job_id, kind, detail)"
		    " VALUES (?, NULLIF(?, 0), NULLIF(?, 0), ?, ?)",
		    "iiitt", db_now_usec(), bug_id, job_id, kind, detail);
}

static struct store_event *event_from_row(struct db_stmt *st)
{
	struct store_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->id = db_col_int64(st, 0);
	e->ts = db_col_int64(st, 1);
	e->bug_id = db_col_int64(st, 2);
	e->job_id = db_col_int64(st, 3);
	e->kind = db_col_text(st, 4);
	e->detail = db_col_text(st, 5);
	return e;
}

void store_event_free(struct store_event *e)
{
	if (!e)
		return;
	free(e->kind);
	free(e->detail);
	free(e);
}

DEFINE_ROW_LIST(event)

int store_event_list(struct store *s, int64_t bug_id, int64_t job_id,
		     int64_t limit, struct store_event ***ret, size_t *ret_n)
{
	struct store_query q = { .bug_id = bug_id, .job_id = job_id, .limit = limit };

	return store_event_query(s, &q, ret, ret_n);
}

/* One text column of one row, or -ENOENT. */
static int get_text(struct store *s, const char *sql, const char *arg, char **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st, sql, "t", arg);

	if (r < 0)
		return r;
	rc = db_step(s, st);
	if (rc == DB_DONE)
		return -ENOENT;
	if (rc < 0)
		return rc;
	*ret = db_col_text(st, 0);
	return *ret ? 0 : -ENOMEM;
}

int store_kv_get(struct store *s, const char *key, char **ret)
{
	return get_text(s, "SELECT value FROM kv WHERE key = ?", key, ret);
}

int store_outbox_state(struct store *s, const char *idem_key, char **ret)
{
	return get_text(s, "SELECT state FROM outbox WHERE idem_key = ?", idem_key, ret);
}

int store_kv_set(struct store *s, const char *key, const char *value)
{
	return db_exec(s, NULL,
		    "INSERT INTO kv (key, value) VALUES (?, ?)"
		    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		    "tt", key, value);
}

/* an upstream comparison's detail is a small JSON object */
#define EVENT_DETAIL_MAX (64 * 1024)

/* Bugs whose newest upstream comparison matched.  The comparison is a
 * JSON detail; it is read here, not by SQL, whose JSON functions differ
 * between engines. */
static int count_upstream_matched(struct store *s, int64_t *ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int64_t n = 0;
	int r = db_prepare(s, &st,
			   "SELECT e.detail FROM events e WHERE e.kind = ?1 AND e.id ="
			   " (SELECT max(id) FROM events WHERE kind = ?1 AND bug_id = e.bug_id)",
			   "t", "upstream.fix");

	while (r >= 0 && (r = db_step(s, st)) == DB_ROW) {
		const char *d = db_col_str(st, 0);
		json_t *j = NULL;

		if (d && json_parse_bounded(d, strlen(d), EVENT_DETAIL_MAX, &j, NULL) >= 0 &&
		    json_is_true(json_object_get(j, "matches")))
			n++;
		json_decref(j);
	}
	if (r < 0)
		return r;
	*ret = n;
	return 0;
}

int store_stats(struct store *s, struct store_stats *ret)
{
	struct store_stats st = { 0 };
	/* in the order of store_job_states and store_outbox_states */
	int64_t *jdst[] = { &st.jobs_queued, &st.jobs_running, &st.jobs_done,
			    &st.jobs_failed, &st.jobs_cancelled };
	int64_t *odst[] = { &st.outbox_pending, &st.outbox_sent, &st.outbox_parked };
	int r = 0;

	for (size_t i = 0; store_bug_states[i] && r >= 0; i++)
		r = db_count_by(s, "SELECT count(*) FROM bugs WHERE state = ?",
			     store_bug_states[i], &st.bugs_by_state[i]);
	for (size_t i = 0; i < ARRAY_SIZE(jdst) && r >= 0; i++)
		r = db_count_by(s, "SELECT count(*) FROM jobs WHERE state = ?",
			     store_job_states[i], jdst[i]);
	for (size_t i = 0; i < ARRAY_SIZE(odst) && r >= 0; i++)
		r = db_count_by(s, "SELECT count(*) FROM outbox WHERE state = ?",
			     store_outbox_states[i], odst[i]);
	if (r >= 0)
		r = db_count_by(s, "SELECT coalesce(min(created), 0) FROM jobs WHERE state = ?",
			     "queued", &st.oldest_queued);
	if (r >= 0)
		r = db_count_by(s, "SELECT coalesce(max(CAST(value AS BIGINT)), 0) FROM kv WHERE key = ?",
			     "budget.day-spent-until", &st.llm_wait_until);
	if (r >= 0)
		r = db_count_by(s, "SELECT count(DISTINCT bug_id) FROM events WHERE kind = ?",
			     "upstream.fix", &st.upstream_compared);
	/* a bug's newest comparison counts */
	if (r >= 0)
		r = count_upstream_matched(s, &st.upstream_matched);
	if (r >= 0)
		r = store_scheduler_mode(s, st.scheduler, sizeof(st.scheduler));
	if (r < 0)
		return r;
	*ret = st;
	return 0;
}

int store_scheduler_mode(struct store *s, char *buf, size_t n)
{
	_cleanup_free_ char *mode = NULL;
	int r = store_kv_get(s, "scheduler.mode", &mode);

	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(buf, n, "%s", r >= 0 ? mode : "running");
	return 0;
}

int store_scheduler_set(struct store *s, const char *mode, const char *by)
{
	_cleanup_json_ json_t *d = json_pack("{s:s, s:s}", "mode", mode, "by", by);
	_cleanup_free_ char *detail = d ? json_dumps(d, JSON_COMPACT) : NULL;
	int r;

	if (!streq(mode, "running") && !streq(mode, "paused") && !streq(mode, "draining"))
		return -EINVAL;
	if (!detail)
		return -ENOMEM;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_kv_set(s, "scheduler.mode", mode);
	if (r >= 0)
		r = store_event_add(s, 0, 0, "scheduler.mode", detail);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

int store_event_query(struct store *s, const struct store_query *q,
		      struct store_event ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT id, ts, bug_id, job_id, kind, detail FROM events"
			" WHERE (?1 = 0 OR bug_id = ?1) AND (?2 = 0 OR job_id = ?2)"
			" AND (?3 IS NULL OR kind = ?3)" PAGE_SQL("4", "5", "6"),
			"iitiii", q->bug_id, q->job_id, q->state, q->after, db_query_limit(q),
			(int64_t)q->newest);

	if (r < 0)
		return r;
	return event_list_query(s, st, ret, ret_n);
}

int store_llm_usage_add(struct store *s, int64_t bug_id, int64_t job_id, const char *model,
			uint64_t tokens_in, uint64_t tokens_out, double cost)
{
	return db_exec(s, NULL,
		       "INSERT INTO llm_usage (ts, bug_id, job_id, model, tokens_in,"
		       " tokens_out, cost) VALUES (?, nullif(?, 0), nullif(?, 0), ?, ?, ?, ?)",
		       "iiitiid", db_now_sec(), bug_id, job_id, model, (int64_t)tokens_in,
		       (int64_t)tokens_out, cost > 0 ? cost : 0.0);
}

int store_llm_usage_sum(struct store *s, int64_t since, int64_t bug_id, int64_t *ret_tokens,
			double *ret_cost)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st,
			    "SELECT coalesce(sum(tokens_in + tokens_out), 0), coalesce(sum(cost), 0)"
			    " FROM llm_usage WHERE ts >= ? AND (? = 0 OR bug_id = ?)",
			    "iii", since, bug_id, bug_id);

	if (r < 0)
		return r;
	rc = db_step_row(s, st);
	if (rc < 0)
		return rc;
	*ret_tokens = db_col_int64(st, 0);
	*ret_cost = db_col_double(st, 1);
	return 0;
}
