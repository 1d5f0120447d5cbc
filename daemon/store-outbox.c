/* The outbox: mails and pushes, each delivered once. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define OUTBOX_COLS                                                            \
	"id, bug_id, kind, idem_key, payload, state, tries, next_try,"        \
	" last_error, created, sent"

static struct store_outbox *outbox_from_row(struct db_stmt *st)
{
	struct store_outbox *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->id = db_col_int64(st, 0);
	o->bug_id = db_col_int64(st, 1);
	o->kind = db_col_text(st, 2);
	o->idem_key = db_col_text(st, 3);
	o->payload = db_col_text(st, 4);
	o->state = db_col_text(st, 5);
	o->tries = db_col_int(st, 6);
	o->next_try = db_col_int64(st, 7);
	o->last_error = db_col_text(st, 8);
	o->created = db_col_int64(st, 9);
	o->sent = db_col_int64(st, 10);
	return o;
}

void store_outbox_free(struct store_outbox *o)
{
	if (!o)
		return;
	free(o->kind);
	free(o->idem_key);
	free(o->payload);
	free(o->state);
	free(o->last_error);
	free(o);
}

DEFINE_ROW_LIST(outbox)

int store_outbox_add(struct store *s, int64_t bug_id, const char *kind,
		     const char *idem_key, const char *payload, int64_t *ret_id,
		     bool *ret_created)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = db_exec(s, &n,
		 "INSERT INTO outbox (bug_id, kind, idem_key, payload, state, created)"
		 " VALUES (NULLIF(?, 0), ?, ?, ?, 'pending', ?)"
		 " ON CONFLICT (idem_key) DO NOTHING",
		 "ittti", bug_id, kind, idem_key, payload, db_now_sec());
	if (r >= 0)
		r = db_prepare(s, &st, "SELECT id FROM outbox WHERE idem_key = ?", "t",
			    idem_key);
	if (r >= 0)
		r = db_step_row(s, st);
	if (r >= 0 && ret_id)
		*ret_id = db_col_int64(st, 0);
	if (r >= 0 && n > 0)
		r = store_event_add(s, bug_id, 0, "outbox.added", idem_key);
	r = db_tx_end(s, r);
	if (r >= 0 && ret_created)
		*ret_created = n > 0;
	return r;
}

int store_next_due(struct store *s, bool jobs, bool outbox, int64_t *ret_usec)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st,
			    "SELECT MIN(t) FROM ("
			    " SELECT MIN(CASE state WHEN 'queued' THEN not_before ELSE lease_expires END)"
			    "  AS t FROM jobs WHERE ?1 <> 0 AND state IN ('queued', 'running')"
			    " UNION ALL"
			    " SELECT MIN(next_try) FROM outbox WHERE ?2 <> 0 AND state = 'pending') AS due",
			    "ii", (int64_t)jobs, (int64_t)outbox);

	if (r < 0)
		return r;
	rc = db_step_row(s, st);
	if (rc < 0)
		return rc;
	if (db_col_null(st, 0))
		return -ENOENT;
	*ret_usec = db_col_int64(st, 0);
	return 0;
}

int store_outbox_next(struct store *s, struct store_outbox **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			   "SELECT " OUTBOX_COLS " FROM outbox WHERE state = 'pending'"
			   " AND next_try <= ? ORDER BY next_try, id LIMIT 1",
			   "i", db_now_usec());

	return r < 0 ? r : outbox_one_query(s, st, ret);
}

int store_outbox_claim(struct store *s, const char *owner, uint64_t lease_usec,
		       struct store_outbox **ret)
{
	_cleanup_(store_outbox_freep) struct store_outbox *o = NULL;
	int64_t until = db_now_usec() + (int64_t)lease_usec;
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = store_outbox_next(s, &o);
	if (r >= 0)
		r = db_exec(s, &n,
			    "UPDATE outbox SET claimed_by = ?, next_try = ?"
			    " WHERE id = ? AND state = 'pending'",
			    "tii", owner, until, o->id);
	if (r >= 0 && n != 1)
		r = -ENOENT;
	r = db_tx_end(s, r);
	if (r < 0)
		return r;
	o->next_try = until;
	*ret = TAKE_PTR(o);
	return 0;
}

int store_outbox_claimers(struct store *s, char ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	char **owners = NULL;
	size_t n = 0;
	int r = db_prepare(s, &st,
			   "SELECT DISTINCT claimed_by FROM outbox WHERE state = 'pending'"
			   " AND claimed_by IS NOT NULL ORDER BY claimed_by LIMIT ?",
			   "i", (int64_t)STORE_OUTBOX_CLAIMERS_MAX);

	while (r >= 0 && (r = db_step(s, st)) == DB_ROW) {
		char **no = realloc(owners, (n + 2) * sizeof(*owners));

		if (!no) {
			r = -ENOMEM;
			break;
		}
		owners = no;
		owners[n] = db_col_text(st, 0);
		owners[++n] = NULL;
		if (!owners[n - 1]) {
			r = -ENOMEM;
			break;
		}
	}
	if (r < 0) {
		strv_free(owners);
		return r;
	}
	*ret = owners;
	*ret_n = n;
	return 0;
}

int store_outbox_release_owner(struct store *s, const char *owner, int64_t *ret_n)
{
	int n = 0, r = db_exec(s, &n,
			       "UPDATE outbox SET claimed_by = NULL, next_try = 0"
			       " WHERE claimed_by = ? AND state = 'pending'",
			       "t", owner);

	if (r >= 0 && ret_n)
		*ret_n = n;
	return r;
}

/* Runs one outbox UPDATE (bound "ti": text, then the id) plus its event. */
static int outbox_update(struct store *s, int64_t id, const char *sql,
			 const char *text, const char *ev)
{
	char d[32];
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = db_exec(s, &n, sql, "ti", text, id);
	if (r >= 0 && n == 0)
		r = -ENOENT;
	snprintf(d, sizeof(d), "%lld", (long long)id);
	if (r >= 0)
		r = store_event_add(s, 0, 0, ev, d);
	return db_tx_end(s, r);
}

int store_outbox_mark_sent(struct store *s, int64_t id)
{
	char now[32];

	snprintf(now, sizeof(now), "%lld", (long long)db_now_sec());
	return outbox_update(s, id,
			     "UPDATE outbox SET state = 'sent', sent = CAST(? AS BIGINT),"
			     " tries = tries + 1, last_error = NULL, claimed_by = NULL WHERE id = ?",
			     now, "outbox.sent");
}

int store_outbox_mark_retry(struct store *s, int64_t id, const char *error,
			    uint64_t delay_usec)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = db_exec(s, NULL, "UPDATE outbox SET next_try = ?, claimed_by = NULL WHERE id = ?", "ii",
		 db_now_usec() + (int64_t)delay_usec, id);
	if (r >= 0)
		r = outbox_update(s, id,
				  "UPDATE outbox SET tries = tries + 1, last_error = ?"
				  " WHERE id = ? AND state = 'pending'",
				  error, "outbox.retry");
	return db_tx_end(s, r);
}

int store_outbox_park(struct store *s, int64_t id, const char *error)
{
	return outbox_update(s, id,
			     "UPDATE outbox SET state = 'parked', tries = tries + 1, claimed_by = NULL,"
			     " last_error = ? WHERE id = ? AND state = 'pending'",
			     error, "outbox.parked");
}

int store_outbox_list(struct store *s, const char *state, int64_t limit,
		      struct store_outbox ***ret, size_t *ret_n)
{
	struct store_query q = { .state = state, .limit = limit };

	return store_outbox_query(s, &q, ret, ret_n);
}

int store_outbox_query(struct store *s, const struct store_query *q,
		       struct store_outbox ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " OUTBOX_COLS " FROM outbox WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, db_query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return outbox_list_query(s, st, ret, ret_n);
}
