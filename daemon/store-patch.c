/* Validated patches, one row per version. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

const char *const store_job_states[] = {
	"queued", "running", "done", "failed", "cancelled", NULL,
};

const char *const store_outbox_states[] = { "pending", "sent", "parked", NULL };

const char *const store_patch_states[] = {
	"validated", "awaiting-approval", "approved", "sent", "rejected",
	"superseded", "held", NULL,
};

#define PATCH_COLS                                                             \
	"id, bug_id, version, state, subject, message, diff, explanation,"    \
	" evidence, base_commit, branch, message_id, sent_to, decided_by,"    \
	" reason, created, updated"

static struct store_patch *patch_from_row(struct db_stmt *st)
{
	struct store_patch *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->id = db_col_int64(st, 0);
	p->bug_id = db_col_int64(st, 1);
	p->version = db_col_int(st, 2);
	p->state = db_col_text(st, 3);
	p->subject = db_col_text(st, 4);
	p->message = db_col_text(st, 5);
	p->diff = db_col_text(st, 6);
	p->explanation = db_col_text(st, 7);
	p->evidence = db_col_text(st, 8);
	p->base_commit = db_col_text(st, 9);
	p->branch = db_col_text(st, 10);
	p->message_id = db_col_text(st, 11);
	p->sent_to = db_col_text(st, 12);
	p->decided_by = db_col_text(st, 13);
	p->reason = db_col_text(st, 14);
	p->created = db_col_int64(st, 15);
	p->updated = db_col_int64(st, 16);
	return p;
}

void store_patch_free(struct store_patch *p)
{
	if (!p)
		return;
	free(p->state);
	free(p->subject);
	free(p->message);
	free(p->diff);
	free(p->explanation);
	free(p->evidence);
	free(p->base_commit);
	free(p->branch);
	free(p->message_id);
	free(p->sent_to);
	free(p->decided_by);
	free(p->reason);
	free(p);
}

DEFINE_ROW_LIST(patch)

int store_patch_add(struct store *s, const struct store_patch *p,
		    int64_t *ret_id, int *ret_version)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int64_t now = db_now_sec(), id;
	int version = 1, r;

	if (!p->diff || p->bug_id <= 0)
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = db_prepare(s, &st, "SELECT coalesce(max(version), 0) + 1 FROM patches WHERE bug_id = ?",
		    "i", p->bug_id);
	if (r >= 0)
		r = db_step_row(s, st);
	if (r >= 0)
		version = db_col_int(st, 0);
	if (r >= 0)
		r = db_exec(s, NULL,
			 "UPDATE patches SET state = 'superseded', updated = ?"
			 " WHERE bug_id = ? AND state IN ('validated', 'awaiting-approval')",
			 "ii", now, p->bug_id);
	if (r >= 0)
		r = db_insert(s, &id,
			 "INSERT INTO patches (bug_id, version, state, subject, message,"
			 " diff, explanation, evidence, base_commit, branch, created, updated)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
			 "iittttttttii", p->bug_id, (int64_t)version,
			 p->state ? p->state : "validated", p->subject, p->message,
			 p->diff, p->explanation, p->evidence, p->base_commit,
			 p->branch, now, now);
	if (r >= 0) {
		char d[64];

		snprintf(d, sizeof(d), "patch %lld v%d", (long long)id, version);
		r = store_event_add(s, p->bug_id, 0, "patch.new", d);
	}
	r = db_tx_end(s, r);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	if (ret_version)
		*ret_version = version;
	return 0;
}

int store_patch_get(struct store *s, int64_t id, struct store_patch **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT " PATCH_COLS " FROM patches WHERE id = ?", "i", id);

	return r < 0 ? r : patch_one_query(s, st, ret);
}

int store_patch_list(struct store *s, const char *state, int64_t bug_id,
		     int64_t limit, struct store_patch ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " PATCH_COLS " FROM patches WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2) ORDER BY id LIMIT ?3",
			"tii", state, bug_id, limit > 0 ? limit : INT64_MAX);

	if (r < 0)
		return r;
	return patch_list_query(s, st, ret, ret_n);
}

static bool patch_transition_ok(const char *from, const char *to)
{
	static const char *const ok[][2] = {
		{ "validated", "awaiting-approval" },
		{ "validated", "rejected" },
		{ "awaiting-approval", "approved" },
		{ "awaiting-approval", "rejected" },
		{ "approved", "sent" },
		/* a pre-send check failed; the moderator decides again */
		{ "approved", "held" },
		{ "held", "approved" },
		{ "held", "rejected" },
		{ "sent", "superseded" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		if (streq(ok[i][0], from) && streq(ok[i][1], to))
			return true;
	return false;
}

int store_patch_decide(struct store *s, int64_t id, const char *state,
		       const char *who, const char *reason)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	char d[512];
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = store_patch_get(s, id, &p);
	if (r >= 0 && !patch_transition_ok(p->state, state))
		r = -EPERM;
	if (r >= 0)
		r = db_exec(s, NULL,
			 "UPDATE patches SET state = ?, decided_by = coalesce(?, decided_by),"
			 " reason = coalesce(?, reason), updated = ? WHERE id = ?",
			 "tttii", state, who, reason, db_now_sec(), id);
	if (r >= 0) {
		snprintf(d, sizeof(d), "patch %lld v%d: %s -> %s%s%s", (long long)id,
			 p->version, p->state, state, who ? " by " : "", who ? who : "");
		r = store_event_add(s, p->bug_id, 0, "patch.state", d);
	}
	return db_tx_end(s, r);
}

int store_patch_set_sent(struct store *s, int64_t id, const char *message_id,
			 const char *sent_to, const char *branch)
{
	int n = 0, r = db_exec(s, &n,
			    "UPDATE patches SET message_id = coalesce(?, message_id),"
			    " sent_to = coalesce(?, sent_to), branch = coalesce(?, branch),"
			    " updated = ? WHERE id = ?",
			    "tttii", message_id, sent_to, branch, db_now_sec(), id);

	if (r >= 0 && n == 1 && message_id)
		r = store_patch_mail_add(s, id, message_id, NULL, NULL);
	return r < 0 ? r : n == 1 ? 0 : -ENOENT;
}

int store_patch_find_by_message_id(struct store *s, const char *message_id,
				   struct store_patch **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	const char *id = message_id;
	char buf[512];
	int r;

	/* stored without <>, as composed */
	if (id[0] == '<') {
		snprintf(buf, sizeof(buf), "%s", id + 1);
		buf[strcspn(buf, ">")] = '\0';
		id = buf;
	}
	r = db_prepare(s, &st, "SELECT " PATCH_COLS " FROM patches WHERE message_id = ?1"
		    " OR id IN (SELECT patch_id FROM patch_mails WHERE message_id = ?1)"
		    " ORDER BY id DESC LIMIT 1", "t", id);
	return r < 0 ? r : patch_one_query(s, st, ret);
}

int store_patch_query(struct store *s, const struct store_query *q,
		      struct store_patch ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " PATCH_COLS " FROM patches WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, db_query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return patch_list_query(s, st, ret, ret_n);
}
