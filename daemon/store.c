#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/strutil.h"
#include "store.h"

#define STORE_BUSY_TIMEOUT_MS 10000

struct store {
	sqlite3 *db;
	int tx_depth;
	char err[512];
};

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

/* Each entry moves the schema one version up, inside one transaction. */
static const char *const migrations[] = {
	/* 1 */
	"CREATE TABLE bugs ("
	" id INTEGER PRIMARY KEY,"
	" source TEXT NOT NULL, source_id TEXT NOT NULL,"
	" title TEXT NOT NULL, state TEXT NOT NULL,"
	" tree TEXT, base_commit TEXT, report TEXT, repro_c TEXT,"
	" repro_syz TEXT, kernel_config TEXT,"
	" created INTEGER NOT NULL, updated INTEGER NOT NULL,"
	" UNIQUE (source, source_id));"
	"CREATE INDEX bugs_state ON bugs(state);"
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY,"
	" bug_id INTEGER REFERENCES bugs(id),"
	" kind TEXT NOT NULL, state TEXT NOT NULL,"
	" priority INTEGER NOT NULL DEFAULT 0,"
	" attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,"
	" lease_owner TEXT, lease_expires INTEGER NOT NULL DEFAULT 0,"
	" not_before INTEGER NOT NULL DEFAULT 0,"
	" args TEXT, result TEXT, error TEXT, checkpoint TEXT,"
	" created INTEGER NOT NULL, started INTEGER NOT NULL DEFAULT 0,"
	" finished INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX jobs_runnable ON jobs(state, priority, not_before);"
	"CREATE TABLE attempts ("
	" id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id),"
	" n INTEGER NOT NULL, owner TEXT, started INTEGER NOT NULL,"
	" finished INTEGER NOT NULL DEFAULT 0, outcome TEXT, detail TEXT);"
	"CREATE TABLE outbox ("
	" id INTEGER PRIMARY KEY, bug_id INTEGER,"
	" kind TEXT NOT NULL, idem_key TEXT NOT NULL UNIQUE,"
	" payload TEXT NOT NULL, state TEXT NOT NULL,"
	" tries INTEGER NOT NULL DEFAULT 0, next_try INTEGER NOT NULL DEFAULT 0,"
	" last_error TEXT, created INTEGER NOT NULL, sent INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX outbox_due ON outbox(state, next_try);"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
	" bug_id INTEGER, job_id INTEGER, kind TEXT NOT NULL, detail TEXT);"
	"CREATE INDEX events_bug ON events(bug_id);"
	"CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
	/* 2: webhook deliveries, kept before they are answered */
	"CREATE TABLE inbox ("
	" id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
	" type TEXT NOT NULL, hook TEXT NOT NULL, provider TEXT NOT NULL,"
	" event TEXT NOT NULL, received INTEGER NOT NULL, payload BLOB NOT NULL,"
	" state TEXT NOT NULL, bug_id INTEGER, detail TEXT);"
	"CREATE INDEX inbox_state ON inbox(state, id);",
	/* 3: validated patches, one row per version */
	"CREATE TABLE patches ("
	" id INTEGER PRIMARY KEY,"
	" bug_id INTEGER NOT NULL REFERENCES bugs(id),"
	" version INTEGER NOT NULL, state TEXT NOT NULL,"
	" subject TEXT, message TEXT, diff TEXT NOT NULL, explanation TEXT,"
	" evidence TEXT, base_commit TEXT, branch TEXT, message_id TEXT,"
	" sent_to TEXT, decided_by TEXT, reason TEXT,"
	" created INTEGER NOT NULL, updated INTEGER NOT NULL,"
	" UNIQUE (bug_id, version));",
	/* 4: counters and histograms recorded by job processes */
	"CREATE TABLE metrics ("
	" name TEXT NOT NULL, labels TEXT NOT NULL, kind TEXT NOT NULL,"
	" value REAL NOT NULL DEFAULT 0, count INTEGER NOT NULL DEFAULT 0,"
	" updated INTEGER NOT NULL, PRIMARY KEY (name, labels));"
	"CREATE TABLE metric_buckets ("
	" name TEXT NOT NULL, labels TEXT NOT NULL, bucket INTEGER NOT NULL,"
	" count INTEGER NOT NULL, PRIMARY KEY (name, labels, bucket));",
	/* the Message-ID of a bug's syzbot report mail, to thread under it */
	"ALTER TABLE bugs ADD COLUMN report_message_id TEXT;",
	/* 6: every mail a patch went out in (moderation, upstream), and the
	 * review replies they drew */
	"CREATE TABLE patch_mails ("
	" message_id TEXT PRIMARY KEY, patch_id INTEGER NOT NULL REFERENCES patches(id),"
	" stage TEXT, recipients TEXT);"
	"INSERT OR IGNORE INTO patch_mails (message_id, patch_id)"
	" SELECT message_id, id FROM patches WHERE message_id IS NOT NULL;"
	"CREATE TABLE reviews ("
	" id INTEGER PRIMARY KEY, bug_id INTEGER NOT NULL REFERENCES bugs(id),"
	" patch_id INTEGER NOT NULL REFERENCES patches(id),"
	" message_id TEXT NOT NULL UNIQUE, author TEXT NOT NULL,"
	" trailers TEXT, comments TEXT, may_iterate INTEGER NOT NULL DEFAULT 0,"
	" job_id INTEGER, created INTEGER NOT NULL);"
	"CREATE INDEX reviews_bug ON reviews(bug_id, job_id);",
	/* 7: every LLM call's tokens and cost, for the budgets */
	"CREATE TABLE llm_usage ("
	" id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, bug_id INTEGER, job_id INTEGER,"
	" model TEXT, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,"
	" cost REAL NOT NULL);"
	"CREATE INDEX llm_usage_ts ON llm_usage(ts);"
	"CREATE INDEX llm_usage_bug ON llm_usage(bug_id);",
	/* 8: the crash kfix reproduced, symbolised with its own vmlinux, and
	 * the guilty file syzkaller's rules find in it */
	"ALTER TABLE bugs ADD COLUMN crash_report TEXT;"
	"ALTER TABLE bugs ADD COLUMN guilty_file TEXT;",
	/* 9: what a running job is doing now, and since when */
	"ALTER TABLE jobs ADD COLUMN progress TEXT;"
	"ALTER TABLE jobs ADD COLUMN progress_at INTEGER NOT NULL DEFAULT 0;",
	/* 10: this store's own random name, in the Message-IDs of its mail:
	 * a recreated store or a second instance on the same domain never
	 * repeats one */
	"INSERT OR IGNORE INTO kv (key, value) VALUES ('store.id', lower(hex(randomblob(6))));",
	/* 11: events of one kind per bug (the upstream comparisons counted
	 * by store_stats, request lookups) without reading the whole log */
	"CREATE INDEX events_kind ON events(kind, bug_id);",
};

static int64_t now_sec(void)
{
	return (int64_t)time(NULL);
}

static int64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int sqlite_to_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CANTOPEN:
		return -EACCES;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EPERM;
	default:
		return -EIO;
	}
}

static int fail(struct store *s, int rc)
{
	int se = sqlite3_system_errno(s->db);

	snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	/* an I/O error says more through the OS error behind it (ENOSPC) */
	if ((rc & 0xff) == SQLITE_IOERR && se > 0)
		return -se;
	return sqlite_to_errno(rc);
}

const char *store_errmsg(struct store *s)
{
	return s->err[0] ? s->err : "no database error";
}

static void finalizep(sqlite3_stmt **st)
{
	sqlite3_finalize(*st);
}
#define _cleanup_stmt_ _cleanup_(finalizep)

/* Binds arguments by a type string: 'i' int64, 't' text (NULL allowed). */
static int vprepare(struct store *s, sqlite3_stmt **ret, const char *sql,
		    const char *types, va_list ap)
{
	sqlite3_stmt *st;
	int rc;

	/* the message is the last statement's: an earlier failure must not
	 * explain a later one */
	s->err[0] = 0;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc);
	for (int i = 0; types && types[i]; i++) {
		if (types[i] == 'i') {
			rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
		} else {
			const char *t = va_arg(ap, const char *);

			rc = t ? sqlite3_bind_text(st, i + 1, t, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, i + 1);
		}
		if (rc != SQLITE_OK) {
			sqlite3_finalize(st);
			return fail(s, rc);
		}
	}
	*ret = st;
	return 0;
}

static int prepare(struct store *s, sqlite3_stmt **ret, const char *sql,
		   const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = vprepare(s, ret, sql, types, ap);
	va_end(ap);
	return r;
}

/* Runs a statement that returns no rows; *changes gets the row count. */
static int exec(struct store *s, int *ret_changes, const char *sql,
		const char *types, ...)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	va_list ap;
	int r, rc;

	va_start(ap, types);
	r = vprepare(s, &st, sql, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return fail(s, rc);
	if (ret_changes)
		*ret_changes = sqlite3_changes(s->db);
	return 0;
}

static int exec_script(struct store *s, const char *sql)
{
	int rc;

	s->err[0] = 0;
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc);
}

int store_begin(struct store *s)
{
	int r = exec_script(s, s->tx_depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT sp");

	if (r == 0)
		s->tx_depth++;
	return r;
}

int store_commit(struct store *s)
{
	int r = exec_script(s, s->tx_depth == 1 ? "COMMIT" : "RELEASE sp");

	if (r == 0)
		s->tx_depth--;
	else
		store_rollback(s);
	return r;
}

void store_rollback(struct store *s)
{
	if (s->tx_depth <= 0)
		return;
	if (s->tx_depth == 1)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	else
		sqlite3_exec(s->db, "ROLLBACK TO sp; RELEASE sp", NULL, NULL, NULL);
	s->tx_depth--;
}

/* Ends a transaction opened by store_begin: commit when r >= 0. */
static int tx_end(struct store *s, int r)
{
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

int store_schema_version(struct store *s)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st, "PRAGMA user_version", NULL);

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r != SQLITE_ROW)
		return fail(s, r);
	return sqlite3_column_int(st, 0);
}

static int migrate(struct store *s)
{
	int v = store_schema_version(s);

	if (v < 0)
		return v;
	if ((size_t)v > ARRAY_SIZE(migrations)) {
		snprintf(s->err, sizeof(s->err),
			 "store schema version %d is newer than this kfix (%zu)",
			 v, ARRAY_SIZE(migrations));
		return -EPROTO;
	}
	for (size_t i = (size_t)v; i < ARRAY_SIZE(migrations); i++) {
		char pragma[64];
		int r = store_begin(s);

		if (r < 0)
			return r;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %zu", i + 1);
		r = exec_script(s, migrations[i]);
		if (r >= 0)
			r = exec_script(s, pragma);
		r = tx_end(s, r);
		if (r < 0)
			return r;
	}
	return 0;
}

static int store_open_once(const char *path, struct store **ret)
{
	_cleanup_(store_closep) struct store *s = calloc(1, sizeof(*s));
	int rc, r;

	if (!s)
		return -ENOMEM;
	rc = sqlite3_open_v2(path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK)
		return s->db ? fail(s, rc) : -ENOMEM;
	sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(s->db, 1);
	r = exec_script(s, "PRAGMA journal_mode = WAL");
	if (r >= 0)
		r = exec_script(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
	if (r >= 0)
		r = migrate(s);
	if (r < 0) {
		/* the caller reads the reason from the returned errno only */
		return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

/* Two processes creating the same new store race on switching it to WAL
 * and on the first migration; the loser sees a busy or I/O error that
 * goes away once the winner is done, so it tries again for a while. */
int store_open(const char *path, struct store **ret)
{
	int r;

	for (int tries = 0;; tries++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		r = store_open_once(path, ret);
		if ((r != -EBUSY && r != -EIO) || tries * 100 >= STORE_BUSY_TIMEOUT_MS)
			return r;
		nanosleep(&ts, NULL);
	}
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close_v2(s->db);
	free(s);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

/* A collector and a list free for each row type, not one shared loop over
 * void pointers: calling from_row or a free function through a pointer of
 * another function type is undefined behaviour. */
#define DEFINE_ROW_LIST(name)                                                  \
	void store_##name##_list_free(struct store_##name **items, size_t n)   \
	{                                                                      \
		for (size_t i = 0; i < n; i++)                                 \
			store_##name##_free(items[i]);                         \
		free(items);                                                   \
	}                                                                      \
                                                                               \
	static int name##_list_query(struct store *s, sqlite3_stmt *st,        \
				     struct store_##name ***ret,               \
				     size_t *ret_n)                            \
	{                                                                      \
		struct store_##name **items = NULL;                            \
		size_t n = 0;                                                  \
		int rc;                                                        \
                                                                               \
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {                \
			struct store_##name **ni =                             \
				realloc(items, (n + 1) * sizeof(*items));      \
			struct store_##name *it =                              \
				ni ? name##_from_row(st) : NULL;               \
                                                                               \
			if (ni)                                                \
				items = ni;                                    \
			if (!it) {                                             \
				store_##name##_list_free(items, n);            \
				return -ENOMEM;                                \
			}                                                      \
			items[n++] = it;                                       \
		}                                                              \
		if (rc != SQLITE_DONE) {                                       \
			store_##name##_list_free(items, n);                    \
			return fail(s, rc);                                    \
		}                                                              \
		*ret = items;                                                  \
		*ret_n = n;                                                    \
		return 0;                                                      \
	}

/* ---- bugs ---- */

#define BUG_COLS                                                               \
	"id, source, source_id, title, state, tree, base_commit, report,"     \
	" repro_c, repro_syz, kernel_config, created, updated, crash_report,"   \
	" guilty_file, (SELECT count(*) FROM patches WHERE bug_id = bugs.id)"

static struct store_bug *bug_from_row(sqlite3_stmt *st)
{
	struct store_bug *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->id = sqlite3_column_int64(st, 0);
	b->source = col_text(st, 1);
	b->source_id = col_text(st, 2);
	b->title = col_text(st, 3);
	b->state = col_text(st, 4);
	b->tree = col_text(st, 5);
	b->base_commit = col_text(st, 6);
	b->report = col_text(st, 7);
	b->repro_c = col_text(st, 8);
	b->repro_syz = col_text(st, 9);
	b->kernel_config = col_text(st, 10);
	b->created = sqlite3_column_int64(st, 11);
	b->updated = sqlite3_column_int64(st, 12);
	b->crash_report = col_text(st, 13);
	b->guilty_file = col_text(st, 14);
	b->patches = sqlite3_column_int64(st, 15);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st, "SELECT id FROM bugs WHERE source = ? AND source_id = ?",
			"tt", source, source_id);

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r == SQLITE_DONE)
		return -ENOENT;
	if (r != SQLITE_ROW)
		return fail(s, r);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

int store_bug_add(struct store *s, const struct store_bug *b, int64_t *ret_id,
		  bool *ret_created)
{
	int64_t id = 0, now = now_sec();
	bool created = false;
	int r;

	if (!b->source || !b->source_id || !b->title)
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = bug_find_id(s, b->source, b->source_id, &id);
	if (r == -ENOENT) {
		r = exec(s, NULL,
			 "INSERT INTO bugs (source, source_id, title, state, tree,"
			 " base_commit, report, repro_c, repro_syz, kernel_config,"
			 " created, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
			 "ttttttttttii", b->source, b->source_id, b->title,
			 b->state ? b->state : "new", b->tree, b->base_commit,
			 b->report, b->repro_c, b->repro_syz, b->kernel_config,
			 now, now);
		if (r >= 0) {
			id = sqlite3_last_insert_rowid(s->db);
			created = true;
			r = store_event_add(s, id, 0, "bug.new", b->title);
		}
	}
	r = tx_end(s, r);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	if (ret_created)
		*ret_created = created;
	return 0;
}

static int bug_query_one(struct store *s, sqlite3_stmt *st,
			 struct store_bug **ret)
{
	struct store_bug *b;
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	b = bug_from_row(st);
	if (!b)
		return -ENOMEM;
	*ret = b;
	return 0;
}

int store_bug_get(struct store *s, int64_t id, struct store_bug **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st, "SELECT " BUG_COLS " FROM bugs WHERE id = ?", "i", id);

	return r < 0 ? r : bug_query_one(s, st, ret);
}

int store_bug_find(struct store *s, const char *source, const char *source_id,
		   struct store_bug **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " BUG_COLS " FROM bugs WHERE source = ? AND source_id = ?",
			"tt", source, source_id);

	return r < 0 ? r : bug_query_one(s, st, ret);
}

int store_bug_set_report_message_id(struct store *s, int64_t id,
				    const char *message_id)
{
	return exec(s, NULL,
		    "UPDATE bugs SET report_message_id = ? WHERE id = ?"
		    " AND report_message_id IS NULL",
		    "ti", message_id, id);
}

int store_bug_report_message_id(struct store *s, int64_t id, char **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st, "SELECT report_message_id FROM bugs WHERE id = ?"
			    " AND report_message_id IS NOT NULL", "i", id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret = col_text(st, 0);
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
		r = exec(s, NULL, "UPDATE bugs SET state = ?, updated = ? WHERE id = ?",
			 "tii", state, now_sec(), id);
		snprintf(detail, sizeof(detail), "%s -> %s%s%s", b->state, state,
			 why ? ": " : "", why ? why : "");
		if (r >= 0)
			r = store_event_add(s, id, 0, "bug.state", detail);
	}
	return tx_end(s, r);
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
			r = exec(s, &n, sql, "tii", path, now_sec(), id);
		}
	return r < 0 ? r : n == 0 ? -ENOENT : 0;
}

int store_bug_list(struct store *s, const char *state, int64_t limit,
		   struct store_bug ***ret, size_t *ret_n)
{
	struct store_query q = { .state = state, .limit = limit };

	return store_bug_query(s, &q, ret, ret_n);
}

/* ---- jobs ---- */

#define JOB_COLS                                                               \
	"id, bug_id, kind, state, priority, attempts, max_attempts,"          \
	" lease_owner, lease_expires, not_before, args, result, error,"       \
	" checkpoint, created, started, finished, progress, progress_at"

static struct store_job *job_from_row(sqlite3_stmt *st)
{
	struct store_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = sqlite3_column_int64(st, 0);
	j->bug_id = sqlite3_column_int64(st, 1);
	j->kind = col_text(st, 2);
	j->state = col_text(st, 3);
	j->priority = sqlite3_column_int(st, 4);
	j->attempts = sqlite3_column_int(st, 5);
	j->max_attempts = sqlite3_column_int(st, 6);
	j->lease_owner = col_text(st, 7);
	j->lease_expires = sqlite3_column_int64(st, 8);
	j->not_before = sqlite3_column_int64(st, 9);
	j->args = col_text(st, 10);
	j->result = col_text(st, 11);
	j->error = col_text(st, 12);
	j->checkpoint = col_text(st, 13);
	j->created = sqlite3_column_int64(st, 14);
	j->started = sqlite3_column_int64(st, 15);
	j->finished = sqlite3_column_int64(st, 16);
	j->progress = col_text(st, 17);
	j->progress_at = sqlite3_column_int64(st, 18);
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
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, NULL,
		 "INSERT INTO jobs (bug_id, kind, state, priority, max_attempts,"
		 " args, created) VALUES (NULLIF(?, 0), ?, 'queued', ?, ?, ?, ?)",
		 "itiiti", bug_id, kind, (int64_t)priority,
		 (int64_t)(max_attempts > 0 ? max_attempts : 1), args, now_sec());
	if (r >= 0) {
		int64_t id = sqlite3_last_insert_rowid(s->db);

		r = store_event_add(s, bug_id, id, "job.queued", kind);
		if (r >= 0 && ret_id)
			*ret_id = id;
	}
	return tx_end(s, r);
}

int store_job_get(struct store *s, int64_t id, struct store_job **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct store_job *j;
	int rc, r = prepare(s, &st, "SELECT " JOB_COLS " FROM jobs WHERE id = ?", "i", id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	j = job_from_row(st);
	if (!j)
		return -ENOMEM;
	*ret = j;
	return 0;
}

int store_job_lease(struct store *s, const char *owner, uint64_t lease_usec,
		    struct store_job **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t now = now_usec(), id;
	int r = store_begin(s), rc;

	if (r < 0)
		return r;
	r = prepare(s, &st,
		    "SELECT id FROM jobs WHERE (state = 'queued' AND not_before <= ?1)"
		    " OR (state = 'running' AND lease_expires <= ?1)"
		    " ORDER BY priority DESC, id LIMIT 1",
		    "i", now);
	if (r < 0)
		return tx_end(s, r);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return tx_end(s, -ENOENT);
	if (rc != SQLITE_ROW)
		return tx_end(s, fail(s, rc));
	id = sqlite3_column_int64(st, 0);
	r = exec(s, NULL,
		 "UPDATE jobs SET state = 'running', lease_owner = ?,"
		 " lease_expires = ?, attempts = attempts + 1,"
		 " started = CASE WHEN started = 0 THEN ? ELSE started END"
		 " WHERE id = ?",
		 "tiii", owner, now + (int64_t)lease_usec, now / 1000000, id);
	if (r >= 0)
		r = exec(s, NULL,
			 "INSERT INTO attempts (job_id, n, owner, started)"
			 " SELECT id, attempts, ?, ? FROM jobs WHERE id = ?",
			 "tii", owner, now / 1000000, id);
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.leased", owner);
	if (r >= 0)
		r = store_job_get(s, id, ret);
	return tx_end(s, r);
}

/* UPDATE guarded by the lease: -ESTALE if owner lost the job meanwhile. */
static int job_owned_update(struct store *s, const char *sql, const char *types,
			    ...)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	va_list ap;
	int r, rc;

	va_start(ap, types);
	r = vprepare(s, &st, sql, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		return fail(s, rc);
	return sqlite3_changes(s->db) == 1 ? 0 : -ESTALE;
}

int store_job_renew(struct store *s, int64_t id, const char *owner,
		    uint64_t lease_usec)
{
	return job_owned_update(s,
				"UPDATE jobs SET lease_expires = ? WHERE id = ?"
				" AND state = 'running' AND lease_owner = ?",
				"iit", now_usec() + (int64_t)lease_usec, id, owner);
}

int store_job_release_owner(struct store *s, const char *owner, int64_t *ret_n)
{
	int n = 0;
	int r = exec(s, &n,
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
	return tx_end(s, r);
}

int store_job_progress(struct store *s, int64_t id, const char *owner, const char *text)
{
	return exec(s, NULL,
		    "UPDATE jobs SET progress = ?, progress_at = ? WHERE id = ?"
		    " AND state = 'running' AND lease_owner = ?",
		    "tiit", text, now_sec(), id, owner);
}

static int attempt_close(struct store *s, int64_t id, const char *outcome,
			 const char *detail)
{
	return exec(s, NULL,
		    "UPDATE attempts SET finished = ?, outcome = ?, detail = ?"
		    " WHERE job_id = ? AND finished = 0",
		    "itti", now_sec(), outcome, detail, id);
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
			     "tiit", result, now_sec(), id, owner);
	if (r >= 0)
		r = attempt_close(s, id, "done", NULL);
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.done", NULL);
	return tx_end(s, r);
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
		r = exec(s, NULL,
			 "UPDATE jobs SET state = ?, error = ?, lease_owner = NULL,"
			 " not_before = ?, finished = ? WHERE id = ?",
			 "ttiii", final ? "failed" : "queued", error,
			 now_usec() + (int64_t)retry_delay_usec,
			 final ? now_sec() : 0, id);
	}
	if (r >= 0)
		r = attempt_close(s, id, "failed", error);
	if (r >= 0)
		r = store_event_add(s, 0, id, final ? "job.failed" : "job.retry", error);
	r = tx_end(s, r);
	if (r >= 0 && ret_final)
		*ret_final = final;
	return r;
}

int store_job_retry(struct store *s, int64_t id)
{
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, &n,
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
	return tx_end(s, r);
}

int store_job_cancel(struct store *s, int64_t id)
{
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, &n,
		 "UPDATE jobs SET state = 'cancelled', lease_owner = NULL,"
		 " finished = ? WHERE id = ? AND state IN ('queued', 'running')",
		 "ii", now_sec(), id);
	if (r >= 0 && n == 0) {
		struct store_job *j = NULL;

		r = store_job_get(s, id, &j) == -ENOENT ? -ENOENT : -EALREADY;
		store_job_free(j);
	}
	if (r >= 0)
		r = store_event_add(s, 0, id, "job.cancelled", NULL);
	return tx_end(s, r);
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

/* ---- outbox ---- */

#define OUTBOX_COLS                                                            \
	"id, bug_id, kind, idem_key, payload, state, tries, next_try,"        \
	" last_error, created, sent"

static struct store_outbox *outbox_from_row(sqlite3_stmt *st)
{
	struct store_outbox *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->id = sqlite3_column_int64(st, 0);
	o->bug_id = sqlite3_column_int64(st, 1);
	o->kind = col_text(st, 2);
	o->idem_key = col_text(st, 3);
	o->payload = col_text(st, 4);
	o->state = col_text(st, 5);
	o->tries = sqlite3_column_int(st, 6);
	o->next_try = sqlite3_column_int64(st, 7);
	o->last_error = col_text(st, 8);
	o->created = sqlite3_column_int64(st, 9);
	o->sent = sqlite3_column_int64(st, 10);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int n = 0, rc, r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, &n,
		 "INSERT INTO outbox (bug_id, kind, idem_key, payload, state, created)"
		 " VALUES (NULLIF(?, 0), ?, ?, ?, 'pending', ?)"
		 " ON CONFLICT (idem_key) DO NOTHING",
		 "ittti", bug_id, kind, idem_key, payload, now_sec());
	if (r >= 0)
		r = prepare(s, &st, "SELECT id FROM outbox WHERE idem_key = ?", "t",
			    idem_key);
	if (r >= 0) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			r = fail(s, rc);
		else if (ret_id)
			*ret_id = sqlite3_column_int64(st, 0);
	}
	if (r >= 0 && n > 0)
		r = store_event_add(s, bug_id, 0, "outbox.added", idem_key);
	r = tx_end(s, r);
	if (r >= 0 && ret_created)
		*ret_created = n > 0;
	return r;
}

int store_next_due(struct store *s, bool jobs, bool outbox, int64_t *ret_usec)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st,
			    "SELECT MIN(t) FROM ("
			    " SELECT MIN(CASE state WHEN 'queued' THEN not_before ELSE lease_expires END)"
			    "  AS t FROM jobs WHERE ?1 AND state IN ('queued', 'running')"
			    " UNION ALL"
			    " SELECT MIN(next_try) FROM outbox WHERE ?2 AND state = 'pending')",
			    "ii", (int64_t)jobs, (int64_t)outbox);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		return -ENOENT;
	*ret_usec = sqlite3_column_int64(st, 0);
	return 0;
}

int store_outbox_next(struct store *s, struct store_outbox **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct store_outbox *o;
	int rc, r = prepare(s, &st,
			    "SELECT " OUTBOX_COLS " FROM outbox WHERE state = 'pending'"
			    " AND next_try <= ? ORDER BY next_try, id LIMIT 1",
			    "i", now_usec());

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	o = outbox_from_row(st);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

/* Runs one outbox UPDATE (bound "ti": text, then the id) plus its event. */
static int outbox_update(struct store *s, int64_t id, const char *sql,
			 const char *text, const char *ev)
{
	char d[32];
	int n = 0, r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, &n, sql, "ti", text, id);
	if (r >= 0 && n == 0)
		r = -ENOENT;
	snprintf(d, sizeof(d), "%lld", (long long)id);
	if (r >= 0)
		r = store_event_add(s, 0, 0, ev, d);
	return tx_end(s, r);
}

int store_outbox_mark_sent(struct store *s, int64_t id)
{
	char now[32];

	snprintf(now, sizeof(now), "%lld", (long long)now_sec());
	return outbox_update(s, id,
			     "UPDATE outbox SET state = 'sent', sent = CAST(? AS INTEGER),"
			     " tries = tries + 1, last_error = NULL WHERE id = ?",
			     now, "outbox.sent");
}

int store_outbox_mark_retry(struct store *s, int64_t id, const char *error,
			    uint64_t delay_usec)
{
	int r = store_begin(s);

	if (r < 0)
		return r;
	r = exec(s, NULL, "UPDATE outbox SET next_try = ? WHERE id = ?", "ii",
		 now_usec() + (int64_t)delay_usec, id);
	if (r >= 0)
		r = outbox_update(s, id,
				  "UPDATE outbox SET tries = tries + 1, last_error = ?"
				  " WHERE id = ? AND state = 'pending'",
				  error, "outbox.retry");
	return tx_end(s, r);
}

int store_outbox_park(struct store *s, int64_t id, const char *error)
{
	return outbox_update(s, id,
			     "UPDATE outbox SET state = 'parked', tries = tries + 1,"
			     " last_error = ? WHERE id = ? AND state = 'pending'",
			     error, "outbox.parked");
}

int store_outbox_list(struct store *s, const char *state, int64_t limit,
		      struct store_outbox ***ret, size_t *ret_n)
{
	struct store_query q = { .state = state, .limit = limit };

	return store_outbox_query(s, &q, ret, ret_n);
}

/* ---- events, kv, stats ---- */

int store_event_add(struct store *s, int64_t bug_id, int64_t job_id,
		    const char *kind, const char *detail)
{
	return exec(s, NULL,
		    "INSERT INTO events (ts, bug_id, job_id, kind, detail)"
		    " VALUES (?, NULLIF(?, 0), NULLIF(?, 0), ?, ?)",
		    "iiitt", now_usec(), bug_id, job_id, kind, detail);
}

static struct store_event *event_from_row(sqlite3_stmt *st)
{
	struct store_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->id = sqlite3_column_int64(st, 0);
	e->ts = sqlite3_column_int64(st, 1);
	e->bug_id = sqlite3_column_int64(st, 2);
	e->job_id = sqlite3_column_int64(st, 3);
	e->kind = col_text(st, 4);
	e->detail = col_text(st, 5);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st, sql, "t", arg);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret = col_text(st, 0);
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
	return exec(s, NULL,
		    "INSERT INTO kv (key, value) VALUES (?, ?)"
		    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		    "tt", key, value);
}

static int count_by(struct store *s, const char *sql, const char *what,
		    int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st, sql, "t", what);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret = sqlite3_column_int64(st, 0);
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
		r = count_by(s, "SELECT count(*) FROM bugs WHERE state = ?",
			     store_bug_states[i], &st.bugs_by_state[i]);
	for (size_t i = 0; i < ARRAY_SIZE(jdst) && r >= 0; i++)
		r = count_by(s, "SELECT count(*) FROM jobs WHERE state = ?",
			     store_job_states[i], jdst[i]);
	for (size_t i = 0; i < ARRAY_SIZE(odst) && r >= 0; i++)
		r = count_by(s, "SELECT count(*) FROM outbox WHERE state = ?",
			     store_outbox_states[i], odst[i]);
	if (r >= 0)
		r = count_by(s, "SELECT coalesce(min(created), 0) FROM jobs WHERE state = ?",
			     "queued", &st.oldest_queued);
	if (r >= 0)
		r = count_by(s, "SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM kv WHERE key = ?",
			     "budget.day-spent-until", &st.llm_wait_until);
	if (r >= 0)
		r = count_by(s, "SELECT count(DISTINCT bug_id) FROM events WHERE kind = ?",
			     "upstream.fix", &st.upstream_compared);
	/* a bug's newest comparison counts */
	if (r >= 0)
		r = count_by(s, "SELECT count(*) FROM events e WHERE e.kind = ?1 AND e.id ="
			     " (SELECT max(id) FROM events WHERE kind = ?1 AND bug_id = e.bug_id)"
			     " AND json_extract(e.detail, '$.matches') = 1",
			     "upstream.fix", &st.upstream_matched);
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

/* ---- patches ---- */

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

static struct store_patch *patch_from_row(sqlite3_stmt *st)
{
	struct store_patch *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->id = sqlite3_column_int64(st, 0);
	p->bug_id = sqlite3_column_int64(st, 1);
	p->version = sqlite3_column_int(st, 2);
	p->state = col_text(st, 3);
	p->subject = col_text(st, 4);
	p->message = col_text(st, 5);
	p->diff = col_text(st, 6);
	p->explanation = col_text(st, 7);
	p->evidence = col_text(st, 8);
	p->base_commit = col_text(st, 9);
	p->branch = col_text(st, 10);
	p->message_id = col_text(st, 11);
	p->sent_to = col_text(st, 12);
	p->decided_by = col_text(st, 13);
	p->reason = col_text(st, 14);
	p->created = sqlite3_column_int64(st, 15);
	p->updated = sqlite3_column_int64(st, 16);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t now = now_sec(), id;
	int version = 1, rc, r;

	if (!p->diff || p->bug_id <= 0)
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = prepare(s, &st, "SELECT coalesce(max(version), 0) + 1 FROM patches WHERE bug_id = ?",
		    "i", p->bug_id);
	if (r >= 0) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			version = sqlite3_column_int(st, 0);
		else
			r = fail(s, rc);
	}
	if (r >= 0)
		r = exec(s, NULL,
			 "UPDATE patches SET state = 'superseded', updated = ?"
			 " WHERE bug_id = ? AND state IN ('validated', 'awaiting-approval')",
			 "ii", now, p->bug_id);
	if (r >= 0)
		r = exec(s, NULL,
			 "INSERT INTO patches (bug_id, version, state, subject, message,"
			 " diff, explanation, evidence, base_commit, branch, created, updated)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			 "iittttttttii", p->bug_id, (int64_t)version,
			 p->state ? p->state : "validated", p->subject, p->message,
			 p->diff, p->explanation, p->evidence, p->base_commit,
			 p->branch, now, now);
	id = sqlite3_last_insert_rowid(s->db);
	if (r >= 0) {
		char d[64];

		snprintf(d, sizeof(d), "patch %lld v%d", (long long)id, version);
		r = store_event_add(s, p->bug_id, 0, "patch.new", d);
	}
	r = tx_end(s, r);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct store_patch *p;
	int rc, r = prepare(s, &st, "SELECT " PATCH_COLS " FROM patches WHERE id = ?", "i", id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	p = patch_from_row(st);
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

int store_patch_list(struct store *s, const char *state, int64_t bug_id,
		     int64_t limit, struct store_patch ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
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
		r = exec(s, NULL,
			 "UPDATE patches SET state = ?, decided_by = coalesce(?, decided_by),"
			 " reason = coalesce(?, reason), updated = ? WHERE id = ?",
			 "tttii", state, who, reason, now_sec(), id);
	if (r >= 0) {
		snprintf(d, sizeof(d), "patch %lld v%d: %s -> %s%s%s", (long long)id,
			 p->version, p->state, state, who ? " by " : "", who ? who : "");
		r = store_event_add(s, p->bug_id, 0, "patch.state", d);
	}
	return tx_end(s, r);
}

int store_patch_set_sent(struct store *s, int64_t id, const char *message_id,
			 const char *sent_to, const char *branch)
{
	int n = 0, r = exec(s, &n,
			    "UPDATE patches SET message_id = coalesce(?, message_id),"
			    " sent_to = coalesce(?, sent_to), branch = coalesce(?, branch),"
			    " updated = ? WHERE id = ?",
			    "tttii", message_id, sent_to, branch, now_sec(), id);

	if (r >= 0 && n == 1 && message_id)
		r = store_patch_mail_add(s, id, message_id, NULL, NULL);
	return r < 0 ? r : n == 1 ? 0 : -ENOENT;
}

int store_patch_find_by_message_id(struct store *s, const char *message_id,
				   struct store_patch **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct store_patch *p;
	const char *id = message_id;
	char buf[512];
	int rc, r;

	/* stored without <>, as composed */
	if (id[0] == '<') {
		snprintf(buf, sizeof(buf), "%s", id + 1);
		buf[strcspn(buf, ">")] = '\0';
		id = buf;
	}
	r = prepare(s, &st, "SELECT " PATCH_COLS " FROM patches WHERE message_id = ?1"
		    " OR id IN (SELECT patch_id FROM patch_mails WHERE message_id = ?1)"
		    " ORDER BY id DESC LIMIT 1", "t", id);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	p = patch_from_row(st);
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

/* ---- paged queries ---- */

/* A page in either order: ?A is the cursor, ?L the limit, ?D the order. */
#define PAGE_SQL(a, l, d)                                                          \
	" AND (CASE WHEN ?" d " THEN (?" a " = 0 OR id < ?" a ") ELSE id > ?" a " END)" \
	" ORDER BY CASE WHEN ?" d " THEN -id ELSE id END LIMIT ?" l

static int64_t query_limit(const struct store_query *q)
{
	return q->limit > 0 ? q->limit : INT64_MAX;
}

int store_bug_query(struct store *s, const struct store_query *q,
		    struct store_bug ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " BUG_COLS " FROM bugs WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 IS NULL OR source = ?2) AND (?6 IS NULL OR tree = ?6)"
			PAGE_SQL("3", "4", "5"),
			"ttiiit", q->state, q->source, q->after, query_limit(q), (int64_t)q->newest,
			q->tree);

	if (r < 0)
		return r;
	return bug_list_query(s, st, ret, ret_n);
}

int store_job_query(struct store *s, const struct store_query *q,
		    struct store_job ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " JOB_COLS " FROM jobs WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return job_list_query(s, st, ret, ret_n);
}

int store_outbox_query(struct store *s, const struct store_query *q,
		       struct store_outbox ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " OUTBOX_COLS " FROM outbox WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return outbox_list_query(s, st, ret, ret_n);
}

int store_event_query(struct store *s, const struct store_query *q,
		      struct store_event ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT id, ts, bug_id, job_id, kind, detail FROM events"
			" WHERE (?1 = 0 OR bug_id = ?1) AND (?2 = 0 OR job_id = ?2)"
			" AND (?3 IS NULL OR kind = ?3)" PAGE_SQL("4", "5", "6"),
			"iitiii", q->bug_id, q->job_id, q->state, q->after, query_limit(q),
			(int64_t)q->newest);

	if (r < 0)
		return r;
	return event_list_query(s, st, ret, ret_n);
}

/* ---- inbox ---- */

#define INBOX_COLS                                                             \
	"id, key, type, hook, provider, event, received, payload, state,"     \
	" bug_id, detail"

static struct store_inbox *inbox_from_row(sqlite3_stmt *st)
{
	struct store_inbox *in = calloc(1, sizeof(*in));
	const void *p;
	int n;

	if (!in)
		return NULL;
	in->id = sqlite3_column_int64(st, 0);
	in->key = col_text(st, 1);
	in->type = col_text(st, 2);
	in->hook = col_text(st, 3);
	in->provider = col_text(st, 4);
	in->event = col_text(st, 5);
	in->received = sqlite3_column_int64(st, 6);
	p = sqlite3_column_blob(st, 7);
	n = sqlite3_column_bytes(st, 7);
	in->payload = malloc((size_t)n + 1);
	if (in->payload) {
		if (n > 0)
			memcpy(in->payload, p, (size_t)n);
		in->payload[n] = '\0';
		in->payload_len = (size_t)n;
	}
	in->state = col_text(st, 8);
	in->bug_id = sqlite3_column_int64(st, 9);
	in->detail = col_text(st, 10);
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
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r;

	r = prepare(s, &st,
		    "INSERT INTO inbox (key, type, hook, provider, event, received,"
		    " payload, state, bug_id, detail)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULLIF(?9, 0), ?10)"
		    " ON CONFLICT (key) DO NOTHING",
		    "tttttiitit", in->key, in->type, in->hook, in->provider, in->event,
		    now_sec(), (int64_t)0, in->state, in->bug_id, in->detail);
	if (r < 0)
		return r;
	rc = sqlite3_bind_blob64(st, 7, in->payload ? in->payload : "",
				 in->payload_len, SQLITE_STATIC);
	if (rc != SQLITE_OK)
		return fail(s, rc);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		return fail(s, rc);
	if (sqlite3_changes(s->db) == 0) {
		_cleanup_stmt_ sqlite3_stmt *q = NULL;

		r = prepare(s, &q, "SELECT id FROM inbox WHERE key = ?", "t", in->key);
		if (r < 0)
			return r;
		rc = sqlite3_step(q);
		if (rc != SQLITE_ROW)
			return fail(s, rc);
		*ret_id = sqlite3_column_int64(q, 0);
		*ret_created = false;
		return 0;
	}
	*ret_id = sqlite3_last_insert_rowid(s->db);
	*ret_created = true;
	return 0;
}

/* The one row a statement selects, or -ENOENT. */
static int inbox_one_row(struct store *s, sqlite3_stmt *st, struct store_inbox **ret)
{
	struct store_inbox *v;
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	v = inbox_from_row(st);
	if (!v)
		return -ENOMEM;
	*ret = v;
	return 0;
}

int store_inbox_find(struct store *s, const char *key, struct store_inbox **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st, "SELECT " INBOX_COLS " FROM inbox WHERE key = ?", "t", key);

	if (r < 0)
		return r;
	return inbox_one_row(s, st, ret);
}

int store_inbox_set_state(struct store *s, int64_t id, const char *state,
			  int64_t bug_id, const char *detail)
{
	int n = 0;
	int r = exec(s, &n,
		     "UPDATE inbox SET state = ?, bug_id = coalesce(NULLIF(?, 0), bug_id),"
		     " detail = ? WHERE id = ?",
		     "titi", state, bug_id, detail, id);

	if (r < 0)
		return r;
	return n > 0 ? 0 : -ENOENT;
}

int store_inbox_get(struct store *s, int64_t id, struct store_inbox **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st, "SELECT " INBOX_COLS " FROM inbox WHERE id = ?", "i", id);

	if (r < 0)
		return r;
	return inbox_one_row(s, st, ret);
}

int store_inbox_pending(struct store *s, const char *type, int64_t *ids, size_t max,
			size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc, r = prepare(s, &st,
			    "SELECT id FROM inbox WHERE state = 'pending' AND type = ?"
			    " ORDER BY id LIMIT ?",
			    "ti", type, (int64_t)max);

	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < max)
		ids[n++] = sqlite3_column_int64(st, 0);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, rc);
	*ret_n = n;
	return 0;
}

int store_inbox_claim(struct store *s, int64_t id)
{
	int n = 0;
	int r = exec(s, &n, "UPDATE inbox SET state = 'parsing' WHERE id = ? AND state = 'pending'",
		     "i", id);

	if (r < 0)
		return r;
	return n > 0 ? 0 : -EALREADY;
}

int store_inbox_set_event(struct store *s, int64_t id, const char *event)
{
	return exec(s, NULL, "UPDATE inbox SET event = ? WHERE id = ?", "ti", event, id);
}

/* A row left in "parsing" was being processed by a process that died:
 * once that may be a restart, twice it is the mail. */
int store_inbox_recover(struct store *s)
{
	return exec(s, NULL,
		    "UPDATE inbox SET"
		    " state = CASE WHEN detail IS 'interrupted' THEN 'failed' ELSE 'pending' END,"
		    " detail = CASE WHEN detail IS 'interrupted' THEN"
		    "  'processing was interrupted twice (the parser died or ran out of memory)'"
		    "  ELSE 'interrupted' END"
		    " WHERE state = 'parsing'",
		    "");
}

int store_inbox_query(struct store *s, const struct store_query *q,
		      struct store_inbox ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " INBOX_COLS " FROM inbox WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 IS NULL OR type = ?2)" PAGE_SQL("3", "4", "5"),
			"ttiii", q->state, q->source, q->after, query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return inbox_list_query(s, st, ret, ret_n);
}

int store_inbox_count(struct store *s, const char *state, int64_t *ret)
{
	return count_by(s, "SELECT count(*) FROM inbox WHERE state = ?", state, ret);
}

/* ---- metrics from job processes ---- */

const double store_metric_bounds[STORE_METRIC_BUCKETS] = {
	0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200,
};

/* Names and label strings are written by kfix, but they end up verbatim
 * in the Prometheus text: keep them to what that format allows. */
static bool metric_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= STORE_METRIC_NAME_MAX && !(name[0] >= '0' && name[0] <= '9') &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") == n;
}

static bool metric_labels_ok(const char *labels)
{
	return strlen(labels) <= STORE_METRIC_LABELS_MAX && !strpbrk(labels, "\n{}");
}

/* exec() with one more parameter, a double, bound at position vpos. */
static int exec_double(struct store *s, int *ret_changes, const char *sql, int vpos,
		       double v, const char *types, ...)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	va_list ap;
	int r, rc;

	va_start(ap, types);
	r = vprepare(s, &st, sql, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	rc = sqlite3_bind_double(st, vpos, v);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		return fail(s, rc);
	if (ret_changes)
		*ret_changes = sqlite3_changes(s->db);
	return 0;
}

/* Adds to a series, creating it (within the series limit) when new. */
static int metric_bump(struct store *s, const char *name, const char *labels,
		       const char *kind, double v, int64_t count)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int changes = 0, r, rc;

	/* the value is parameter 5, after the four bound by type */
	r = exec_double(s, &changes,
			"UPDATE metrics SET count = count + ?1, updated = ?2"
			", value = value + ?5 WHERE name = ?3 AND labels = ?4 AND kind = ?6",
			5, v, "iittit", count, now_sec(), name, labels, NULL, kind);
	if (r < 0 || changes > 0)
		return r;
	r = prepare(s, &st, "SELECT count(*) FROM metrics", NULL);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	if (sqlite3_column_int64(st, 0) >= STORE_METRIC_SERIES_MAX)
		return -E2BIG;
	return exec_double(s, NULL,
			   "INSERT INTO metrics (name, labels, kind, count, updated, value)"
			   " VALUES (?, ?, ?, ?, ?, ?)",
			   6, v, "tttii", name, labels, kind, count, now_sec());
}

int store_metric_add(struct store *s, const char *name, const char *labels,
		     double v)
{
	int r;

	if (!labels)
		labels = "";
	if (!metric_name_ok(name) || !metric_labels_ok(labels) || !(v >= 0))
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	return tx_end(s, metric_bump(s, name, labels, "counter", v, 0));
}

int store_metric_observe(struct store *s, const char *name, const char *labels,
			 double v)
{
	size_t b = 0;
	int r;

	if (!labels)
		labels = "";
	if (!metric_name_ok(name) || !metric_labels_ok(labels) || !(v >= 0))
		return -EINVAL;
	while (b < STORE_METRIC_BUCKETS && v > store_metric_bounds[b])
		b++;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = metric_bump(s, name, labels, "histogram", v, 1);
	/* only the bucket hit is stored; renderers add them up */
	if (r >= 0 && b < STORE_METRIC_BUCKETS)
		r = exec(s, NULL,
			 "INSERT INTO metric_buckets (name, labels, bucket, count)"
			 " VALUES (?, ?, ?, 1) ON CONFLICT (name, labels, bucket)"
			 " DO UPDATE SET count = count + 1",
			 "tti", name, labels, (int64_t)b);
	return tx_end(s, r);
}

void store_metric_free(struct store_metric *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->labels);
	free(m);
}

static struct store_metric *metric_from_row(sqlite3_stmt *st)
{
	struct store_metric *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->name = col_text(st, 0);
	m->labels = col_text(st, 1);
	m->histogram = streq_ptr((const char *)sqlite3_column_text(st, 2), "histogram");
	m->value = sqlite3_column_double(st, 3);
	m->count = sqlite3_column_int64(st, 4);
	if (!m->name || !m->labels) {
		store_metric_free(m);
		return NULL;
	}
	return m;
}

DEFINE_ROW_LIST(metric)

static int metric_buckets_fill(struct store *s, struct store_metric *m)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st,
			    "SELECT bucket, count FROM metric_buckets WHERE name = ? AND labels = ?",
			    "tt", m->name, m->labels);

	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t b = sqlite3_column_int64(st, 0);

		if (b >= 0 && b < STORE_METRIC_BUCKETS)
			m->bucket[b] = sqlite3_column_int64(st, 1);
	}
	return rc == SQLITE_DONE ? 0 : fail(s, rc);
}

int store_metric_list(struct store *s, struct store_metric ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct store_metric **items = NULL;
	size_t n = 0;
	int r = prepare(s, &st,
			"SELECT name, labels, kind, value, count FROM metrics"
			" ORDER BY name, labels", NULL);

	if (r < 0)
		return r;
	r = metric_list_query(s, st, &items, &n);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (items[i]->histogram)
			r = metric_buckets_fill(s, items[i]);
	if (r < 0) {
		store_metric_list_free(items, n);
		return r;
	}
	*ret = items;
	*ret_n = n;
	return 0;
}

int store_patch_query(struct store *s, const struct store_query *q,
		      struct store_patch ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " PATCH_COLS " FROM patches WHERE (?1 IS NULL OR state = ?1)"
			" AND (?2 = 0 OR bug_id = ?2)" PAGE_SQL("3", "4", "5"),
			"tiiii", q->state, q->bug_id, q->after, query_limit(q), (int64_t)q->newest);

	if (r < 0)
		return r;
	return patch_list_query(s, st, ret, ret_n);
}

/* ---- the mails of a patch and the review replies to them ---- */

int store_patch_mail_add(struct store *s, int64_t patch_id, const char *message_id,
			 const char *stage, const char *recipients)
{
	return exec(s, NULL,
		    "INSERT INTO patch_mails (message_id, patch_id, stage, recipients)"
		    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (message_id) DO UPDATE SET"
		    " stage = coalesce(?3, stage), recipients = coalesce(?4, recipients)",
		    "titt", message_id, patch_id, stage, recipients);
}

int store_patch_mail_recipients(struct store *s, const char *message_id, char **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st, "SELECT recipients FROM patch_mails WHERE message_id = ?",
			    "t", message_id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE || (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL))
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret = col_text(st, 0);
	return *ret ? 0 : -ENOMEM;
}

#define REVIEW_COLS \
	"id, bug_id, patch_id, message_id, author, trailers, comments, may_iterate," \
	" coalesce(job_id, 0), created"

static struct store_review *review_from_row(sqlite3_stmt *st)
{
	struct store_review *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->id = sqlite3_column_int64(st, 0);
	v->bug_id = sqlite3_column_int64(st, 1);
	v->patch_id = sqlite3_column_int64(st, 2);
	v->message_id = col_text(st, 3);
	v->author = col_text(st, 4);
	v->trailers = col_text(st, 5);
	v->comments = col_text(st, 6);
	v->may_iterate = sqlite3_column_int(st, 7) != 0;
	v->job_id = sqlite3_column_int64(st, 8);
	v->created = sqlite3_column_int64(st, 9);
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
	int n = 0, r;

	if (!v->message_id || !v->author || v->bug_id <= 0 || v->patch_id <= 0)
		return -EINVAL;
	r = exec(s, &n,
		 "INSERT OR IGNORE INTO reviews (bug_id, patch_id, message_id, author,"
		 " trailers, comments, may_iterate, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		 "iittttii", v->bug_id, v->patch_id, v->message_id, v->author, v->trailers,
		 v->comments, (int64_t)v->may_iterate, now_sec());
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = n == 1 ? sqlite3_last_insert_rowid(s->db) : 0;
	if (ret_created)
		*ret_created = n == 1;
	return 0;
}

int store_review_list(struct store *s, int64_t bug_id, int64_t patch_id, int64_t job_id,
		      struct store_review ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, &st,
			"SELECT " REVIEW_COLS " FROM reviews WHERE (?1 = 0 OR bug_id = ?1)"
			" AND (?2 = 0 OR patch_id = ?2) AND (?3 = 0 OR job_id = ?3) ORDER BY id",
			"iii", bug_id, patch_id, job_id);

	if (r < 0)
		return r;
	return review_list_query(s, st, ret, ret_n);
}

int store_review_waiting(struct store *s, int64_t **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int rc, r = prepare(s, &st,
			    "SELECT DISTINCT bug_id FROM reviews WHERE job_id IS NULL"
			    " AND may_iterate = 1 AND comments IS NOT NULL ORDER BY bug_id", NULL);

	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t *ni = realloc(ids, (n + 1) * sizeof(*ids));

		if (!ni) {
			free(ids);
			return -ENOMEM;
		}
		ids = ni;
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		free(ids);
		return fail(s, rc);
	}
	*ret = ids;
	*ret_n = n;
	return 0;
}

int store_review_claim(struct store *s, int64_t bug_id, int64_t job_id, int *ret_n)
{
	return exec(s, ret_n,
		    "UPDATE reviews SET job_id = ? WHERE bug_id = ? AND job_id IS NULL"
		    " AND may_iterate = 1 AND comments IS NOT NULL",
		    "ii", job_id, bug_id);
}

int store_review_count(struct store *s, int64_t patch_id, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st, "SELECT count(*) FROM reviews WHERE patch_id = ?", "i",
			    patch_id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

/* ---- LLM usage ---- */

int store_job_defer(struct store *s, const char *kind, int64_t until_sec, int64_t was_sec)
{
	/* not_before is in microseconds, like the lease */
	if (until_sec > 0)
		return exec(s, NULL,
			    "UPDATE jobs SET not_before = ? WHERE state = 'queued' AND kind = ?"
			    " AND not_before < ?",
			    "iti", until_sec * 1000000, kind, until_sec * 1000000);
	return was_sec > 0 ? exec(s, NULL,
				  "UPDATE jobs SET not_before = 0 WHERE state = 'queued' AND kind = ?"
				  " AND not_before = ?",
				  "ti", kind, was_sec * 1000000)
			   : 0;
}

int store_llm_usage_add(struct store *s, int64_t bug_id, int64_t job_id, const char *model,
			uint64_t tokens_in, uint64_t tokens_out, double cost)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st,
			    "INSERT INTO llm_usage (ts, bug_id, job_id, model, tokens_in,"
			    " tokens_out, cost) VALUES (?, nullif(?, 0), nullif(?, 0), ?, ?, ?, ?)",
			    "iiitii", now_sec(), bug_id, job_id, model, (int64_t)tokens_in,
			    (int64_t)tokens_out);

	if (r < 0)
		return r;
	rc = sqlite3_bind_double(st, 7, cost > 0 ? cost : 0);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	return rc == SQLITE_DONE ? 0 : fail(s, rc);
}

int store_llm_usage_sum(struct store *s, int64_t since, int64_t bug_id, int64_t *ret_tokens,
			double *ret_cost)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = prepare(s, &st,
			    "SELECT coalesce(sum(tokens_in + tokens_out), 0), coalesce(sum(cost), 0)"
			    " FROM llm_usage WHERE ts >= ? AND (? = 0 OR bug_id = ?)",
			    "iii", since, bug_id, bug_id);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc);
	*ret_tokens = sqlite3_column_int64(st, 0);
	*ret_cost = sqlite3_column_double(st, 1);
	return 0;
}
