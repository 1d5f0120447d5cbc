/* Bugs: their states, the transitions allowed between them, and their rows. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

const char *const store_bug_states[] = {
	"new",	     "reproducing", "repairing",	"validated",
	"awaiting-approval", "sent", "not-reproducible", "already-fixed",
	"gave-up",   "rejected",    "needs-syzkaller", NULL,
};

/* from -> allowed targets; any state may go to itself (no-op). */
static const struct {
	const char *from;
	const char *to;
} transitions[] = {
	{ "new", "reproducing" },
	{ "new", "already-fixed" },
	{ "new", "gave-up" },
	/* a syz-only bug waits for syzkaller's tools to be configured */
	{ "new", "needs-syzkaller" },
	{ "needs-syzkaller", "reproducing" },
	{ "needs-syzkaller", "already-fixed" },
	{ "needs-syzkaller", "gave-up" },
	{ "reproducing", "repairing" },
	{ "reproducing", "not-reproducible" },
	{ "reproducing", "already-fixed" },
	{ "reproducing", "gave-up" },
	{ "repairing", "validated" },
	{ "repairing", "gave-up" },
	{ "repairing", "already-fixed" },
	/* a new version that did not validate: the published one stands */
	{ "repairing", "awaiting-approval" },
	{ "repairing", "sent" },
	{ "validated", "awaiting-approval" },
	{ "validated", "repairing" },
	/* the developers' fix landed first (the compare job) */
	{ "validated", "already-fixed" },
	{ "awaiting-approval", "sent" },
	{ "awaiting-approval", "rejected" },
	{ "awaiting-approval", "repairing" },
	{ "awaiting-approval", "already-fixed" },
	{ "sent", "repairing" },
	{ "sent", "already-fixed" },
	/* a retest or a new crash reopens finished bugs */
	{ "not-reproducible", "reproducing" },
	{ "gave-up", "reproducing" },
	{ "rejected", "repairing" },
	/* an operator reruns a failed repair from one of its steps */
	{ "gave-up", "repairing" },
};

bool store_bug_state_valid(const char *state)
{
	for (size_t i = 0; store_bug_states[i]; i++)
		if (streq(store_bug_states[i], state))
			return true;
	return false;
}

bool store_bug_transition_ok(const char *from, const char *to)
{
	if (streq(from, to))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(transitions); i++)
		if (streq(transitions[i].from, from) && streq(transitions[i].to, to))
			return true;
	return false;
}

#define BUG_COLS                                                               \
	"id, source, source_id, title, state, tree, base_commit, report,"     \
	" repro_c, repro_syz, kernel_config, created, updated, crash_report,"   \
	" guilty_file, (SELECT count(*) FROM patches WHERE bug_id = bugs.id)"

static struct store_bug *bug_from_row(struct db_stmt *st)
{
	struct store_bug *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->id = db_col_int64(st, 0);
	b->source = db_col_text(st, 1);
	b->source_id = db_col_text(st, 2);
	b->title = db_col_text(st, 3);
	b->state = db_col_text(st, 4);
	b->tree = db_col_text(st, 5);
	b->base_commit = db_col_text(st, 6);
	b->report = db_col_text(st, 7);
	b->repro_c = db_col_text(st, 8);
	b->repro_syz = db_col_text(st, 9);
	b->kernel_config = db_col_text(st, 10);
	b->created = db_col_int64(st, 11);
	b->updated = db_col_int64(st, 12);
	b->crash_report = db_col_text(st, 13);
	b->guilty_file = db_col_text(st, 14);
	b->patches = db_col_int64(st, 15);
	return b;
}

void store_bug_free(struct store_bug *b)
{
	if (!b)
		return;
	free(b->source);
	free(b->source_id);
	free(b->title);
	free(b->state);
	free(b->tree);
	free(b->base_commit);
	free(b->report);
	free(b->repro_c);
	free(b->repro_syz);
	free(b->kernel_config);
	free(b->crash_report);
	free(b->guilty_file);
	free(b);
}

DEFINE_ROW_LIST(bug)

static int bug_find_id(struct store *s, const char *source,
		       const char *source_id, int64_t *ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT id FROM bugs WHERE source = ? AND source_id = ?",
			"tt", source, source_id);

	if (r < 0)
		return r;
	r = db_step(s, st);
	if (r == DB_DONE)
		return -ENOENT;
	if (r < 0)
		return r;
	*ret = db_col_int64(st, 0);
	return 0;
}

int store_bug_add(struct store *s, const struct store_bug *b, int64_t *ret_id,
		  bool *ret_created)
{
	int64_t id = 0, now = db_now_sec();
	bool created = false;
	int r;

	if (!b->source || !b->source_id || !b->title)
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = bug_find_id(s, b->source, b->source_id, &id);
	if (r == -ENOENT) {
		r = db_insert(s, &id,
			 "INSERT INTO bugs (source, source_id, title, state, tree,"
			 " base_commit, report, repro_c, repro_syz, kernel_config,"
			 " created, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
			 "ttttttttttii", b->source, b->source_id, b->title,
			 b->state ? b->state : "new", b->tree, b->base_commit,
			 b->report, b->repro_c, b->repro_syz, b->kernel_config,
			 now, now);
		if (r >= 0) {
			created = true;
			r = store_event_add(s, id, 0, "bug.new", b->title);
		}
	}
	r = db_tx_end(s, r);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	if (ret_created)
		*ret_created = created;
	return 0;
}

int store_bug_get(struct store *s, int64_t id, struct store_bug **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, "SELECT " BUG_COLS " FROM bugs WHERE id = ?", "i", id);

	return r < 0 ? r : bug_one_query(s, st, ret);
}

int store_bug_find(struct store *s, const char *source, const char *source_id,
		   struct store_bug **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " BUG_COLS " FROM bugs WHERE source = ? AND source_id = ?",
			"tt", source, source_id);

	return r < 0 ? r : bug_one_query(s, st, ret);
}

int store_bug_set_report_message_id(struct store *s, int64_t id,
				    const char *message_id)
{
	return db_exec(s, NULL,
		    "UPDATE bugs SET report_message_id = ? WHERE id = ?"
		    " AND report_message_id IS NULL",
		    "ti", message_id, id);
}

int store_bug_report_message_id(struct store *s, int64_t id, char **ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st, "SELECT report_message_id FROM bugs WHERE id = ?"
			    " AND report_message_id IS NOT NULL", "i", id);

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

int store_bug_set_state(struct store *s, int64_t id, const char *state,
			const char *why)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	char detail[512];
	int r;

	if (!store_bug_state_valid(state))
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_bug_get(s, id, &b);
	if (r >= 0 && !store_bug_transition_ok(b->state, state))
		r = -EPERM;
	if (r >= 0 && !streq(b->state, state)) {
		r = db_exec(s, NULL, "UPDATE bugs SET state = ?, updated = ? WHERE id = ?",
			 "tii", state, db_now_sec(), id);
		snprintf(detail, sizeof(detail), "%s -> %s%s%s", b->state, state,
			 why ? ": " : "", why ? why : "");
		if (r >= 0)
			r = store_event_add(s, id, 0, "bug.state", detail);
	}
	return db_tx_end(s, r);
}

int store_bug_set_text(struct store *s, int64_t id, const char *field, const char *path)
{
	static const char *const fields[] = { "report", "repro_c", "repro_syz", "kernel_config",
					      "crash_report", "guilty_file" };
	char sql[96];
	int n = 0, r = -EINVAL;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (streq(field, fields[i])) {
			/* the column name comes from the list above, never from the caller */
			snprintf(sql, sizeof(sql), "UPDATE bugs SET %s = ?, updated = ? WHERE id = ?",
				 fields[i]);
			r = db_exec(s, &n, sql, "tii", path, db_now_sec(), id);
		}
	return r < 0 ? r : n == 0 ? -ENOENT : 0;
}

int store_bug_list(struct store *s, const char *state, int64_t limit,
		   struct store_bug ***ret, size_t *ret_n)
{
	struct store_query q = { .state = state, .limit = limit };

	return store_bug_query(s, &q, ret, ret_n);
}

int store_bug_query(struct store *s, const struct store_query *q,
		    struct store_bug ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st,
			"SELECT " BUG_COLS " FROM bugs WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 IS NULL OR source = ?2) AND (?6 IS NULL OR tree = ?6)"
			PAGE_SQL("3", "4", "5"),
			"ttiiit", q->state, q->source, q->after, db_query_limit(q), (int64_t)q->newest,
			q->tree);

	if (r < 0)
		return r;
	return bug_list_query(s, st, ret, ret_n);
}
