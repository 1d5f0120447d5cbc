/* The mails a patch went out in and the review replies to them. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

int store_patch_mail_add(struct store *s, int64_t patch_id, const char *message_id,
			 const char *stage, const char *recipients)
{
	return db_exec(s, NULL,
		    "INSERT INTO patch_mails (message_id, patch_id, stage, recipients)"
		    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (message_id) DO UPDATE SET"
		    " stage = coalesce(?3, patch_mails.stage),"
		    " recipients = coalesce(?4, patch_mails.recipients)",
		    "titt", message_id, patch_id, stage, recipients);
}

int store_patch_mail_recipients(struct store *s, const char *message_id, char **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st, "SELECT recipients FROM patch_mails WHERE message_id = ?",
			    "t", message_id);

	if (r < 0)
		return r;
	rc = db_step(s, st);
	if (rc < 0)
		return rc;
	if (rc == DB_DONE || db_col_null(st, 0))
		return -ENOENT;
	*ret = db_col_text(st, 0);
	return *ret ? 0 : -ENOMEM;
}

#define REVIEW_COLS \
	"id, bug_id, patch_id, message_id, author, trailers, comments, may_iterate," \
	" coalesce(job_id, 0), created"

static struct store_review *review_from_row(struct db_stmt *st)
{
	struct store_review *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->id = db_col_int64(st, 0);
	v->bug_id = db_col_int64(st, 1);
	v->patch_id = db_col_int64(st, 2);
	v->message_id = db_col_text(st, 3);
	v->author = db_col_text(st, 4);
	v->trailers = db_col_text(st, 5);
	v->comments = db_col_text(st, 6);
	v->may_iterate = db_col_int(st, 7) != 0;
	v->job_id = db_col_int64(st, 8);
	v->created = db_col_int64(st, 9);
	return v;
}

void store_review_free(struct store_review *v)
{
	if (!v)
		return;
	free(v->message_id);
	free(v->author);
	free(v->trailers);
	free(v->comments);
	free(v);
}

DEFINE_ROW_LIST(review)

int store_review_add(struct store *s, const struct store_review *v, int64_t *ret_id,
		     bool *ret_created)
{
	int64_t id = 0;
	int r;

	if (!v->message_id || !v->author || v->bug_id <= 0 || v->patch_id <= 0)
		return -EINVAL;
	r = db_insert(s, &id,
		 "INSERT INTO reviews (bug_id, patch_id, message_id, author,"
		 " trailers, comments, may_iterate, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
		 " ON CONFLICT DO NOTHING RETURNING id",
		 "iittttii", v->bug_id, v->patch_id, v->message_id, v->author, v->trailers,
		 v->comments, (int64_t)v->may_iterate, db_now_sec());
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	if (ret_created)
		*ret_created = id > 0;
	return 0;
}

int store_review_list(struct store *s, int64_t bug_id, int64_t patch_id, int64_t job_id,
		      struct store_review ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " REVIEW_COLS " FROM reviews WHERE (?1 = 0 OR bug_id = ?1)"
			" AND (?2 = 0 OR patch_id = ?2) AND (?3 = 0 OR job_id = ?3) ORDER BY id",
			"iii", bug_id, patch_id, job_id);

	if (r < 0)
		return r;
	return review_list_query(s, st, ret, ret_n);
}

int store_review_waiting(struct store *s, int64_t **ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int rc, r = db_prepare(s, &st,
			    "SELECT DISTINCT bug_id FROM reviews WHERE job_id IS NULL"
			    " AND may_iterate = 1 AND comments IS NOT NULL ORDER BY bug_id", NULL);

	if (r < 0)
		return r;
	while ((rc = db_step(s, st)) == DB_ROW) {
		int64_t *ni = realloc(ids, (n + 1) * sizeof(*ids));

		if (!ni) {
			free(ids);
			return -ENOMEM;
		}
		ids = ni;
		ids[n++] = db_col_int64(st, 0);
	}
	if (rc < 0) {
		free(ids);
		return rc;
	}
	*ret = ids;
	*ret_n = n;
	return 0;
}

int store_review_claim(struct store *s, int64_t bug_id, int64_t job_id, int *ret_n)
{
	return db_exec(s, ret_n,
		    "UPDATE reviews SET job_id = ? WHERE bug_id = ? AND job_id IS NULL"
		    " AND may_iterate = 1 AND comments IS NOT NULL",
		    "ii", job_id, bug_id);
}

int store_review_count(struct store *s, int64_t patch_id, int64_t *ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st, "SELECT count(*) FROM reviews WHERE patch_id = ?", "i",
			    patch_id);

	if (r < 0)
		return r;
	rc = db_step_row(s, st);
	if (rc < 0)
		return rc;
	*ret = db_col_int64(st, 0);
	return 0;
}
