/* Jobs, their leases and attempts. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define JOB_COLS                                                               \
	"id, bug_id, kind, state, priority, attempts, max_attempts,"          \
	" lease_owner, lease_expires, not_before, args, result, error,"       \
	" checkpoint, created, started, finished, progress, progress_at"

static struct store_job *job_from_row(struct db_stmt *st)
{
	struct store_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = db_col_int64(st, 0);
	j->bug_id = db_col_int64(st, 1);
	j->kind = db_col_text(st, 2);
	j->state = db_col_text(st, 3);
	j->priority = db_col_int(st, 4);
	j->attempts = db_col_int(st, 5);
	j->max_attempts = db_col_int(st, 6);
	j->lease_owner = db_col_text(st, 7);
	j->lease_expires = db_col_int64(st, 8);
	j->not_before = db_col_int64(st, 9);
	j->args = db_col_text(st, 10);
	j->result = db_col_text(st, 11);
	j->error = db_col_text(st, 12);
	j->checkpoint = db_col_text(st, 13);
	j->created = db_col_int64(st, 14);
	j->started = db_col_int64(st, 15);
	j->finished = db_col_int64(st, 16);
	j->progress = db_col_text(st, 17);
	j->progress_at = db_col_int64(st, 18);
	return j;
}

void store_job_free(struct store_job *j)
{
	if (!j)
		return;
	free(j->progress);
	free(j->kind);
	free(j->state);
	free(j->lease_owner);
	free(j->args);
	free(j->result);
	free(j->error);
	free(j->checkpoint);
	free(j);
}

DEFINE_ROW_LIST(job)

int store_job_add(struct store *s, int64_t bug_id, const char *kind,
		  const char *args, int priority, int max_attempts,
		  int64_t *ret_id)
{
	int64_t id = 0;
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = db_insert(s, &id,
		      "INSERT INTO jobs (bug_id, kind, state, priority, max_attempts,"
		      " args, created) VALUES (NULLIF(?, 0), ?, 'queued', ?, ?, ?, ?) RETURNING id",
		      "itiiti", bug_id, kind, (int64_t)priority,
		      (int64_t)(max_attempts > 0 ? max_attempts : 1), args, db_now_sec());
	if (r >= 0) {
		r = store_event_add(s, bug_id, id, "job.queued", kind);
		if (r >= 0 && ret_id)
			*ret_id = id;
	}
	return db_tx_end(s, r);
}

int store_job_get(struct store *s, int64_t id, struct store_job **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT " JOB_COLS " FROM jobs WHERE id = ?", "i", id);

	return r < 0 ? r : job_one_query(s, st, ret);
}

int store_job_lease(struct store *s, const char *owner, uint64_t lease_usec,
		    struct store_job **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int64_t now = db_now_usec(), id;
	int r = store_begin(s), rc;

	if (r < 0)
		return r;
	r = db_prepare(s, &st,
		    "SELECT id FROM jobs WHERE (state = 'queued' AND not_before <= ?1)"
		    " OR (state = 'running' AND lease_expires <= ?1)"
		    " ORDER BY priority DESC, id LIMIT 1",
		    "i", now);
	if (r < 0)
		return db_tx_end(s, r);
	rc = db_step(s, st);
	if (rc != DB_ROW)
		return db_tx_end(s, rc < 0 ? rc : -ENOENT);
	id = db_col_int64(st, 0);
	r = db_exec(s, NULL,
		 "UPDATE jobs SET state = 'running', lease_owner = ?,"
		 " lease_expires = ?, attempts = attempts + 1,"
		 " started = CASE WHEN started = 0 THEN ? ELSE started END"
		 " WHERE id = ?",
		 "tiii", owner, now + (int64_t)lease_usec, now / 1000000, id);
	if (r >= 0)
		r = db_exec(s, NULL,
			 "INSERT INTO attempts (job_id, n, owner, started)"
			 " SELECT id, attempts, ?, ? FROM jobs WHERE id = ?",
			 "tii", owner, now / 1000000, id);
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.leased", owner);
	if (r >= 0)
		r = store_job_get(s, id, ret);
	return db_tx_end(s, r);
}

/* UPDATE guarded by the lease: -ESTALE if owner lost the job meanwhile. */
static int job_owned_update(struct store *s, const char *sql, const char *types,
			    ...)
{
	va_list ap;
	int n = 0, r;

	va_start(ap, types);
	r = db_vexec(s, &n, sql, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return n == 1 ? 0 : -ESTALE;
}

int store_job_renew(struct store *s, int64_t id, const char *owner,
		    uint64_t lease_usec)
{
	return job_owned_update(s,
				"UPDATE jobs SET lease_expires = ? WHERE id = ?"
				" AND state = 'running' AND lease_owner = ?",
				"iit", db_now_usec() + (int64_t)lease_usec, id, owner);
}

int store_job_release_owner(struct store *s, const char *owner, int64_t *ret_n)
{
	int n = 0;
	int r = db_exec(s, &n,
		     "UPDATE jobs SET lease_expires = 0 WHERE state = 'running'"
		     " AND lease_owner = ?",
		     "t", owner);

	if (r >= 0 && ret_n)
		*ret_n = n;
	return r;
}

int store_job_checkpoint(struct store *s, int64_t id, const char *owner,
			 const char *step)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = job_owned_update(s,
			     "UPDATE jobs SET checkpoint = ? WHERE id = ?"
			     " AND state = 'running' AND lease_owner = ?",
			     "tit", step, id, owner);
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.step", step);
	return db_tx_end(s, r);
}

int store_job_progress(struct store *s, int64_t id, const char *owner, const char *text)
{
	return db_exec(s, NULL,
		    "UPDATE jobs SET progress = ?, progress_at = ? WHERE id = ?"
		    " AND state = 'running' AND lease_owner = ?",
		    "tiit", text, db_now_sec(), id, owner);
}

static int attempt_close(struct store *s, int64_t id, const char *outcome,
			 const char *detail)
{
	return db_exec(s, NULL,
		    "UPDATE attempts SET finished = ?, outcome = ?, detail = ?"
		    " WHERE job_id = ? AND finished = 0",
		    "itti", db_now_sec(), outcome, detail, id);
}

int store_job_finish(struct store *s, int64_t id, const char *owner,
		     const char *result)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = job_owned_update(s,
			     "UPDATE jobs SET state = 'done', result = ?, finished = ?,"
			     " lease_owner = NULL, error = NULL WHERE id = ?"
			     " AND state = 'running' AND lease_owner = ?",
			     "tiit", result, db_now_sec(), id, owner);
	if (r >= 0)
		r = attempt_close(s, id, "done", NULL);
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.done", NULL);
	return db_tx_end(s, r);
}

int store_job_fail(struct store *s, int64_t id, const char *owner, int64_t attempt,
		   const char *error, uint64_t retry_delay_usec, bool permanent,
		   bool *ret_final)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	bool final = false;
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = store_job_get(s, id, &j);
	if (r >= 0 && (!streq(j->state, "running") || !streq_ptr(j->lease_owner, owner) ||
		       (attempt > 0 && j->attempts != attempt)))
		r = -ESTALE;
	if (r >= 0) {
		final = permanent || j->attempts >= j->max_attempts;
		r = db_exec(s, NULL,
			 "UPDATE jobs SET state = ?, error = ?, lease_owner = NULL,"
			 " not_before = ?, finished = ? WHERE id = ?",
			 "ttiii", final ? "failed" : "queued", error,
			 db_now_usec() + (int64_t)retry_delay_usec,
			 final ? db_now_sec() : 0, id);
	}
	if (r >= 0)
		r = attempt_close(s, id, "failed", error);
	if (r >= 0)
		r = store_event_add(s, 0, id, final ? "job.failed" : "job.retry", error);
	r = db_tx_end(s, r);
	if (r >= 0 && ret_final)
		*ret_final = final;
	return r;
}

int store_job_retry(struct store *s, int64_t id)
{
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = db_exec(s, &n,
		 "UPDATE jobs SET state = 'queued', not_before = 0, error = NULL,"
		 " attempts = 0, finished = 0, lease_owner = NULL WHERE id = ?"
		 " AND state IN ('failed', 'cancelled', 'done')",
		 "i", id);
	if (r >= 0 && n == 0) {
		struct store_job *j = NULL;

		r = store_job_get(s, id, &j) == -ENOENT ? -ENOENT : -EBUSY;
		store_job_free(j);
	}
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.retry", "requested");
	return db_tx_end(s, r);
}

int store_job_cancel(struct store *s, int64_t id)
{
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = db_exec(s, &n,
		 "UPDATE jobs SET state = 'cancelled', lease_owner = NULL,"
		 " finished = ? WHERE id = ? AND state IN ('queued', 'running')",
		 "ii", db_now_sec(), id);
	if (r >= 0 && n == 0) {
		struct store_job *j = NULL;

		r = store_job_get(s, id, &j) == -ENOENT ? -ENOENT : -EALREADY;
		store_job_free(j);
	}
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.cancelled", NULL);
	return db_tx_end(s, r);
}

int store_job_list(struct store *s, const char *state, int64_t bug_id,
		   int64_t limit, struct store_job ***ret, size_t *ret_n)
{
	struct store_query q = { .state = state, .bug_id = bug_id, .limit = limit };

	return store_job_query(s, &q, ret, ret_n);
}

int store_job_busy(struct store *s, int64_t bug_id, const char *const *kinds)
{
	struct store_job **jobs = NULL;
	size_t n = 0;
	int r = store_job_list(s, NULL, bug_id, 0, &jobs, &n), busy = 0;

	for (size_t i = 0; r >= 0 && i < n && !busy; i++)
		busy = (streq(jobs[i]->state, "queued") || streq(jobs[i]->state, "running")) &&
		       strv_contains((char *const *)kinds, jobs[i]->kind);
	store_job_list_free(jobs, n);
	return r < 0 ? r : busy;
}

int store_job_query(struct store *s, const struct store_query *q,
		    struct store_job ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " JOB_COLS " FROM jobs WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, db_query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return job_list_query(s, st, ret, ret_n);
}

int store_job_defer(struct store *s, const char *kind, int64_t until_sec, int64_t was_sec)
{
	/* not_before is in microseconds, like the lease */
	if (until_sec > 0)
		return db_exec(s, NULL,
			    "UPDATE jobs SET not_before = ? WHERE state = 'queued' AND kind = ?"
			    " AND not_before < ?",
			    "iti", until_sec * 1000000, kind, until_sec * 1000000);
	return was_sec > 0 ? db_exec(s, NULL,
				  "UPDATE jobs SET not_before = 0 WHERE state = 'queued' AND kind = ?"
				  " AND not_before = ?",
				  "ti", kind, was_sec * 1000000)
			   : 0;
}
