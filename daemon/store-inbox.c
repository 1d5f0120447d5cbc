/* Webhook deliveries, kept before they are answered. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define INBOX_COLS                                                             \
	"id, key, type, hook, provider, event, received, payload, state,"     \
	" bug_id, detail"

static struct store_inbox *inbox_from_row(struct db_stmt *st)
{
	struct store_inbox *in = calloc(1, sizeof(*in));
	const void *p;
	size_t n;

	if (!in)
		return NULL;
	in->id = db_col_int64(st, 0);
	in->key = db_col_text(st, 1);
	in->type = db_col_text(st, 2);
	in->hook = db_col_text(st, 3);
	in->provider = db_col_text(st, 4);
	in->event = db_col_text(st, 5);
	in->received = db_col_int64(st, 6);
	p = db_col_blob(st, 7, &n);
	in->payload = malloc(n + 1);
	if (in->payload) {
		if (n > 0)
			memcpy(in->payload, p, n);
		in->payload[n] = '\0';
		in->payload_len = n;
	}
	in->state = db_col_text(st, 8);
	in->bug_id = db_col_int64(st, 9);
	in->detail = db_col_text(st, 10);
	if (!in->key || !in->payload || !in->state) {
		store_inbox_free(in);
		return NULL;
	}
	return in;
}

void store_inbox_free(struct store_inbox *in)
{
	if (!in)
		return;
	free(in->key);
	free(in->type);
	free(in->hook);
	free(in->provider);
	free(in->event);
	free(in->payload);
	free(in->state);
	free(in->detail);
	free(in);
}

DEFINE_ROW_LIST(inbox)

int store_inbox_add(struct store *s, const struct store_inbox *in,
		    int64_t *ret_id, bool *ret_created)
{
	_cleanup_stmt_ struct db_stmt *q = NULL;
	int64_t id = 0;
	int r;

	r = db_insert(s, &id,
		      "INSERT INTO inbox (key, type, hook, provider, event, received,"
		      " payload, state, bug_id, detail)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0), ?)"
		      " ON CONFLICT (key) DO NOTHING RETURNING id",
		      "tttttibtit", in->key, in->type, in->hook, in->provider, in->event,
		      db_now_sec(), (const void *)in->payload, in->payload_len, in->state,
		      in->bug_id, in->detail);
	if (r < 0)
		return r;
	if (id > 0) {
		*ret_id = id;
		*ret_created = true;
		return 0;
	}
	r = db_prepare(s, &q, "SELECT id FROM inbox WHERE key = ?", "t", in->key);
	if (r >= 0)
		r = db_step_row(s, q);
	if (r < 0)
		return r;
	*ret_id = db_col_int64(q, 0);
	*ret_created = false;
	return 0;
}

int store_inbox_find(struct store *s, const char *key, struct store_inbox **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT " INBOX_COLS " FROM inbox WHERE key = ?", "t", key);

	if (r < 0)
		return r;
	return inbox_one_query(s, st, ret);
}

int store_inbox_set_state(struct store *s, int64_t id, const char *state,
			  int64_t bug_id, const char *detail)
{
	int n = 0;
	int r = db_exec(s, &n,
		     "UPDATE inbox SET state = ?, bug_id = coalesce(NULLIF(?, 0), bug_id),"
		     " detail = ? WHERE id = ?",
		     "titi", state, bug_id, detail, id);

	if (r < 0)
		return r;
	return n > 0 ? 0 : -ENOENT;
}

int store_inbox_get(struct store *s, int64_t id, struct store_inbox **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT " INBOX_COLS " FROM inbox WHERE id = ?", "i", id);

	if (r < 0)
		return r;
	return inbox_one_query(s, st, ret);
}

int store_inbox_pending(struct store *s, const char *type, int64_t *ids, size_t max,
			size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	size_t n = 0;
	int rc, r = db_prepare(s, &st,
			    "SELECT id FROM inbox WHERE state = 'pending' AND type = ?"
			    " ORDER BY id LIMIT ?",
			    "ti", type, (int64_t)max);

	if (r < 0)
		return r;
	while ((rc = db_step(s, st)) == DB_ROW && n < max)
		ids[n++] = db_col_int64(st, 0);
	if (rc < 0)
		return rc;
	*ret_n = n;
	return 0;
}

int store_inbox_claim(struct store *s, int64_t id)
{
	int n = 0;
	int r = db_exec(s, &n, "UPDATE inbox SET state = 'parsing' WHERE id = ? AND state = 'pending'",
		     "i", id);

	if (r < 0)
		return r;
	return n > 0 ? 0 : -EALREADY;
}

int store_inbox_set_event(struct store *s, int64_t id, const char *event)
{
	return db_exec(s, NULL, "UPDATE inbox SET event = ? WHERE id = ?", "ti", event, id);
}

/* A row left in "parsing" was being processed by a process that died:
 * once that may be a restart, twice it is the mail. */
int store_inbox_recover(struct store *s)
{
	return db_exec(s, NULL,
		    "UPDATE inbox SET"
		    " state = CASE WHEN coalesce(detail, '') = 'interrupted' THEN 'failed'"
		    "  ELSE 'pending' END,"
		    " detail = CASE WHEN coalesce(detail, '') = 'interrupted' THEN"
		    "  'processing was interrupted twice (the parser died or ran out of memory)'"
		    "  ELSE 'interrupted' END"
		    " WHERE state = 'parsing'",
		    "");
}

int store_inbox_query(struct store *s, const struct store_query *q,
		      struct store_inbox ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " INBOX_COLS " FROM inbox WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 IS NULL OR type = ?2)" PAGE_SQL("3", "4", "5"),
			"ttiii", q->state, q->source, q->after, db_query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return inbox_list_query(s, st, ret, ret_n);
}

int store_inbox_count(struct store *s, const char *state, int64_t *ret)
{
	return db_count_by(s, "SELECT count(*) FROM inbox WHERE state = ?", state, ret);
}
