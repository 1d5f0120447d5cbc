/* Opening the store: the schema and its migrations, transactions, and the
 * SQL helpers the store-TABLE.c files share (store-internal.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/strutil.h"
#include "store-internal.h"

#define STORE_BUSY_TIMEOUT_MS 10000

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

int64_t db_now_sec(void)
{
	return (int64_t)time(NULL);
}

int64_t db_now_usec(void)
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

int db_fail(struct store *s, int rc)
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

void db_finalizep(sqlite3_stmt **st)
{
	sqlite3_finalize(*st);
}

/* Binds arguments by a type string: 'i' int64, 't' text (NULL allowed). */
int db_vprepare(struct store *s, sqlite3_stmt **ret, const char *sql,
		    const char *types, va_list ap)
{
	sqlite3_stmt *st;
	int rc;

	/* the message is the last statement's: an earlier failure must not
	 * explain a later one */
	s->err[0] = 0;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(s, rc);
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
			return db_fail(s, rc);
		}
	}
	*ret = st;
	return 0;
}

int db_prepare(struct store *s, sqlite3_stmt **ret, const char *sql,
		   const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = db_vprepare(s, ret, sql, types, ap);
	va_end(ap);
	return r;
}

int db_exec(struct store *s, int *ret_changes, const char *sql,
		const char *types, ...)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	va_list ap;
	int r, rc;

	va_start(ap, types);
	r = db_vprepare(s, &st, sql, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_fail(s, rc);
	if (ret_changes)
		*ret_changes = sqlite3_changes(s->db);
	return 0;
}

int db_exec_script(struct store *s, const char *sql)
{
	int rc;

	s->err[0] = 0;
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(s, rc);
}

int store_begin(struct store *s)
{
	int r = db_exec_script(s, s->tx_depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT sp");

	if (r == 0)
		s->tx_depth++;
	return r;
}

int store_commit(struct store *s)
{
	int r = db_exec_script(s, s->tx_depth == 1 ? "COMMIT" : "RELEASE sp");

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

int db_tx_end(struct store *s, int r)
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
	int r = db_prepare(s, &st, "PRAGMA user_version", NULL);

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r != SQLITE_ROW)
		return db_fail(s, r);
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
		r = db_exec_script(s, migrations[i]);
		if (r >= 0)
			r = db_exec_script(s, pragma);
		r = db_tx_end(s, r);
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
		return s->db ? db_fail(s, rc) : -ENOMEM;
	sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(s->db, 1);
	r = db_exec_script(s, "PRAGMA journal_mode = WAL");
	if (r >= 0)
		r = db_exec_script(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
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

char *db_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

int db_count_by(struct store *s, const char *sql, const char *what,
		int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int rc, r = db_prepare(s, &st, sql, "t", what);

	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_fail(s, rc);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}
