/* Opening the store: the schema and its migrations, transactions, and the
 * SQL helpers the store-TABLE.c files share (store-internal.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "store-internal.h"

#define STORE_OPEN_RETRY_MS 10000

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
	"INSERT INTO patch_mails (message_id, patch_id)"
	" SELECT message_id, id FROM patches WHERE message_id IS NOT NULL"
	" ON CONFLICT DO NOTHING;"
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
	"INSERT INTO kv (key, value) VALUES ('store.id', lower(hex(randomblob(6))))"
	" ON CONFLICT DO NOTHING;",
	/* 11: events of one kind per bug (the upstream comparisons counted
	 * by store_stats, request lookups) without reading the whole log */
	"CREATE INDEX events_kind ON events(kind, bug_id);",
	/* 12: who is delivering an outbox entry: with several instances (or
	 * a restarted one) a mail goes out once */
	"ALTER TABLE outbox ADD COLUMN claimed_by TEXT;",
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

int db_error(struct store *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *store_errmsg(struct store *s)
{
	return s->err[0] ? s->err : "no database error";
}

void db_finalizep(struct db_stmt **st)
{
	if (*st)
		(*st)->be->finalize(*st);
}

int db_vprepare(struct store *s, struct db_stmt **ret, const char *sql,
		const char *types, va_list ap)
{
	/* the message is the last statement's: an earlier failure must not
	 * explain a later one */
	s->err[0] = 0;
	return s->be->prepare(s, ret, sql, types, ap);
}

int db_prepare(struct store *s, struct db_stmt **ret, const char *sql,
	       const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = db_vprepare(s, ret, sql, types, ap);
	va_end(ap);
	return r;
}

int db_step(struct store *s, struct db_stmt *st)
{
	return s->be->step(s, st);
}

int db_step_row(struct store *s, struct db_stmt *st)
{
	int r = db_step(s, st);

	if (r == DB_DONE)
		return db_error(s, -ENODATA, "the query answered no row");
	return r < 0 ? r : 0;
}

int db_vexec(struct store *s, int *ret_changes, const char *sql, const char *types,
	     va_list ap)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_vprepare(s, &st, sql, types, ap);

	if (r >= 0)
		r = db_step(s, st);
	if (r < 0)
		return r;
	if (ret_changes)
		*ret_changes = (int)s->be->changes(s, st);
	return 0;
}

int db_exec(struct store *s, int *ret_changes, const char *sql,
	    const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = db_vexec(s, ret_changes, sql, types, ap);
	va_end(ap);
	return r;
}

int db_insert(struct store *s, int64_t *ret_id, const char *sql, const char *types, ...)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	va_list ap;
	int r;

	va_start(ap, types);
	r = db_vprepare(s, &st, sql, types, ap);
	va_end(ap);
	if (r >= 0)
		r = db_step(s, st);
	if (r < 0)
		return r;
	*ret_id = r == DB_ROW ? db_col_int64(st, 0) : 0;
	return 0;
}

int db_exec_script(struct store *s, const char *sql)
{
	s->err[0] = 0;
	return s->be->exec_script(s, sql);
}

int store_begin(struct store *s)
{
	int r;

	s->err[0] = 0;
	r = s->tx_depth == 0 ? s->be->begin(s) : db_exec_script(s, "SAVEPOINT sp");
	if (r == 0)
		s->tx_depth++;
	return r;
}

int store_commit(struct store *s)
{
	int r = db_exec_script(s, s->tx_depth == 1 ? "COMMIT" : "RELEASE SAVEPOINT sp");

	if (r == 0)
		s->tx_depth--;
	else
		store_rollback(s);
	return r;
}

void store_rollback(struct store *s)
{
	char err[sizeof(s->err)];

	if (s->tx_depth <= 0)
		return;
	/* the message is the failure's that made us roll back */
	memcpy(err, s->err, sizeof(err));
	if (s->tx_depth == 1)
		(void)s->be->exec_script(s, "ROLLBACK");
	else
		(void)s->be->exec_script(s, "ROLLBACK TO SAVEPOINT sp; RELEASE SAVEPOINT sp");
	memcpy(s->err, err, sizeof(err));
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
	int v = 0, r = s->be->schema_version(s, &v);

	return r < 0 ? r : v;
}

/* Each migration runs in its own transaction, which also takes the
 * write lock: of several instances starting at once, one migrates and
 * the others find the new version once they get the lock.  A store that
 * is up to date is not locked at all (it may be read-only). */
static int migrate(struct store *s)
{
	for (;;) {
		int v = store_schema_version(s), r;

		if (v < 0)
			return v;
		if ((size_t)v == ARRAY_SIZE(migrations))
			return 0;
		if ((size_t)v > ARRAY_SIZE(migrations))
			return db_error(s, -EPROTO,
					"store schema version %d is newer than this kfix (%zu)", v,
					ARRAY_SIZE(migrations));
		r = store_begin(s);
		if (r < 0)
			return r;
		if (store_schema_version(s) == v) {
			r = s->be->exec_ddl(s, migrations[v]);
			if (r >= 0)
				r = s->be->set_schema_version(s, v + 1);
		}
		r = db_tx_end(s, r);
		if (r < 0)
			return r;
	}
}

static const struct store_backend *backend_for(const char *target)
{
	return startswith(target, "postgresql://") || startswith(target, "postgres://")
		       ? &store_backend_pg
		       : &store_backend_sqlite;
}

static int store_open_once(const char *target, const char *password, char *err, size_t errlen,
			   struct store **ret)
{
	_cleanup_(store_closep) struct store *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->be = backend_for(target);
	r = s->be->open(s, target, password);
	if (r >= 0)
		r = migrate(s);
	if (r < 0) {
		snprintf(err, errlen, "%s", s->err);
		return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

/* Two processes creating the same new store race on setting it up and on
 * the first migration; the loser sees a busy or I/O error that goes away
 * once the winner is done, so it tries again for a while. */
static int store_open_retry(const char *target, const char *password, char *err, size_t errlen,
			    struct store **ret)
{
	int r;

	for (int tries = 0;; tries++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		r = store_open_once(target, password, err, errlen, ret);
		if ((r != -EBUSY && r != -EIO) || tries * 100 >= STORE_OPEN_RETRY_MS)
			return r;
		nanosleep(&ts, NULL);
	}
}

int store_open_target(const char *target, char *err, size_t errlen, struct store **ret)
{
	return store_open_retry(target, NULL, err, errlen, ret);
}

int store_open(const char *path, struct store **ret)
{
	char err[512];

	return store_open_target(path, err, sizeof(err), ret);
}

bool store_url_valid(const char *url)
{
	return startswith(url, "postgresql://") || startswith(url, "postgres://");
}

int store_open_config(const struct config *cfg, char *err, size_t errlen, struct store **ret)
{
	_cleanup_free_ char *db = NULL, *password = NULL;
	const char *url = NULL;
	int r;

	if (config_get_string(cfg, "store", NULL, "url", &url) < 0 || !url || !*url) {
		r = config_state_path(cfg, STATE_DB, &db);
		if (r < 0) {
			snprintf(err, errlen, "no store path: %s", strerror(-r));
			return r;
		}
		r = store_open_retry(db, NULL, err, errlen, ret);
		if (r == -EBADMSG)
			snprintf(err, errlen, "%s is corrupt or not a SQLite database", db);
		return r;
	}
	if (!store_url_valid(url)) {
		snprintf(err, errlen, "[store] url must be a postgresql:// URI");
		return -EINVAL;
	}
	r = config_get_secret(cfg, "store", NULL, "password", &password);
	if (r < 0 && r != -ENOENT) {
		snprintf(err, errlen, "cannot read [store] password: %s", strerror(-r));
		return r;
	}
	return store_open_retry(url, password, err, errlen, ret);
}

bool store_shared(const struct config *cfg)
{
	const char *url = NULL;

	return config_get_string(cfg, "store", NULL, "url", &url) >= 0 && url && *url;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->conn)
		s->be->close(s);
	free(s);
}

bool db_col_null(struct db_stmt *st, int i)
{
	return st->be->col_null(st, i);
}

int64_t db_col_int64(struct db_stmt *st, int i)
{
	return st->be->col_int64(st, i);
}

int db_col_int(struct db_stmt *st, int i)
{
	int64_t v = st->be->col_int64(st, i);

	return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

double db_col_double(struct db_stmt *st, int i)
{
	return st->be->col_double(st, i);
}

const char *db_col_str(struct db_stmt *st, int i)
{
	return st->be->col_str(st, i);
}

const void *db_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
	return st->be->col_blob(st, i, ret_len);
}

char *db_col_text(struct db_stmt *st, int i)
{
	const char *t = db_col_str(st, i);

	return t ? strdup(t) : NULL;
}

int db_count_by(struct store *s, const char *sql, const char *what,
		int64_t *ret)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int r = db_prepare(s, &st, sql, "t", what);

	if (r >= 0)
		r = db_step_row(s, st);
	if (r < 0)
		return r;
	*ret = db_col_int64(st, 0);
	return 0;
}
