/* The default store: one SQLite file, in WAL mode, written by one
 * transaction at a time (BEGIN IMMEDIATE takes the write lock at once, so
 * a read-then-write transaction never fails on upgrading its lock). */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define STORE_BUSY_TIMEOUT_MS 10000

struct sqlite_stmt {
	struct db_stmt base;
	sqlite3_stmt *st;
};

static sqlite3 *db_of(struct store *s)
{
	return s->conn;
}

static sqlite3_stmt *st_of(struct db_stmt *st)
{
	return ((struct sqlite_stmt *)st)->st;
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

static int sq_fail(struct store *s, int rc)
{
	int se = sqlite3_system_errno(db_of(s));

	/* an I/O error says more through the OS error behind it (ENOSPC) */
	if ((rc & 0xff) == SQLITE_IOERR && se > 0)
		return db_error(s, -se, "%s", sqlite3_errmsg(db_of(s)));
	return db_error(s, sqlite_to_errno(rc) ?: -EIO, "%s", sqlite3_errmsg(db_of(s)));
}

static int sq_exec_script(struct store *s, const char *sql)
{
	int rc = sqlite3_exec(db_of(s), sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sq_fail(s, rc);
}

static int sq_open(struct store *s, const char *path, const char *password)
{
	sqlite3 *db = NULL;
	int rc, r;

	(void)password;
	rc = sqlite3_open_v2(path, &db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (!db)
		return -ENOMEM;
	s->conn = db;
	if (rc != SQLITE_OK)
		return sq_fail(s, rc);
	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db, 1);
	r = sq_exec_script(s, "PRAGMA journal_mode = WAL");
	if (r >= 0)
		r = sq_exec_script(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
	return r;
}

static void sq_close(struct store *s)
{
	sqlite3_close_v2(db_of(s));
}

static void sq_finalize(struct db_stmt *st)
{
	sqlite3_finalize(st_of(st));
	free(st);
}

static int sq_bind(sqlite3_stmt *st, int i, char type, va_list *ap)
{
	switch (type) {
	case 'i':
		return sqlite3_bind_int64(st, i, va_arg(*ap, int64_t));
	case 'd':
		return sqlite3_bind_double(st, i, va_arg(*ap, double));
	case 'b': {
		const void *p = va_arg(*ap, const void *);
		size_t n = va_arg(*ap, size_t);

		return sqlite3_bind_blob64(st, i, p ? p : "", n, SQLITE_TRANSIENT);
	}
	case 't': {
		const char *t = va_arg(*ap, const char *);

		return t ? sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT)
			 : sqlite3_bind_null(st, i);
	}
	default:
		return SQLITE_MISUSE;
	}
}

static int sq_prepare(struct store *s, struct db_stmt **ret, const char *sql,
		      const char *types, va_list ap)
{
	struct sqlite_stmt *st = calloc(1, sizeof(*st));
	va_list aq;
	int rc = SQLITE_OK;

	if (!st)
		return -ENOMEM;
	st->base.be = &store_backend_sqlite;
	rc = sqlite3_prepare_v2(db_of(s), sql, -1, &st->st, NULL);
	va_copy(aq, ap);
	for (int i = 0; rc == SQLITE_OK && types && types[i]; i++)
		rc = sq_bind(st->st, i + 1, types[i], &aq);
	va_end(aq);
	if (rc != SQLITE_OK) {
		int r = sq_fail(s, rc);

		sq_finalize(&st->base);
		return r;
	}
	*ret = &st->base;
	return 0;
}

static int sq_step(struct store *s, struct db_stmt *st)
{
	int rc = sqlite3_step(st_of(st));

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	return sq_fail(s, rc);
}

static int64_t sq_changes(struct store *s, struct db_stmt *st)
{
	(void)st;
	return sqlite3_changes(db_of(s));
}

static int sq_begin(struct store *s)
{
	return sq_exec_script(s, "BEGIN IMMEDIATE");
}

/* SQLite's DDL is the store's own dialect. */
static int sq_exec_ddl(struct store *s, const char *sql)
{
	return sq_exec_script(s, sql);
}

static int sq_schema_version(struct store *s, int *ret)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_of(s), "PRAGMA user_version", -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : sq_fail(s, rc);
}

static int sq_set_schema_version(struct store *s, int v)
{
	char pragma[64];

	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v);
	return sq_exec_script(s, pragma);
}

static bool sq_col_null(struct db_stmt *st, int i)
{
	return sqlite3_column_type(st_of(st), i) == SQLITE_NULL;
}

static int64_t sq_col_int64(struct db_stmt *st, int i)
{
	return sqlite3_column_int64(st_of(st), i);
}

static double sq_col_double(struct db_stmt *st, int i)
{
	return sqlite3_column_double(st_of(st), i);
}

static const char *sq_col_str(struct db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st_of(st), i);
}

static const void *sq_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
	const void *p = sqlite3_column_blob(st_of(st), i);

	*ret_len = (size_t)sqlite3_column_bytes(st_of(st), i);
	return p;
}

const struct store_backend store_backend_sqlite = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.prepare = sq_prepare,
	.step = sq_step,
	.changes = sq_changes,
	.finalize = sq_finalize,
	.exec_script = sq_exec_script,
	.exec_ddl = sq_exec_ddl,
	.begin = sq_begin,
	.schema_version = sq_schema_version,
	.set_schema_version = sq_set_schema_version,
	.col_null = sq_col_null,
	.col_int64 = sq_col_int64,
	.col_double = sq_col_double,
	.col_str = sq_col_str,
	.col_blob = sq_col_blob,
};
