/* The shared store: a PostgreSQL database that several kfixd and kfixctl
 * on several machines use at once (libpq).
 *
 * The store files' SQL is SQLite's dialect where the two differ only in
 * spelling: '?'/'?N' parameters become '$N' here, and the migrations'
 * column types become PostgreSQL's (SQLite's INTEGER is 64 bits, so
 * BIGINT).  A transaction takes one advisory lock first: like SQLite's
 * BEGIN IMMEDIATE it runs alone among writers, so a read-then-write in
 * one transaction sees no other instance's write in between.  Statements
 * outside a transaction run on their own, as in SQLite. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "store-internal.h"

/* pg_type OIDs of the parameter types (catalog/pg_type.dat) */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_TEXT 25
#define OID_FLOAT8 701

#define PG_MAX_PARAMS 64
/* how long a lost connection is tried again before a call fails, and
 * how long one try may take (unless the URI says otherwise) */
#define PG_RECONNECT_MS 30000
#define PG_CONNECT_TIMEOUT_SEC "10"
/* the longest statement kfix writes is a migration, some KiB */
#define PG_MAX_SQL (256 * 1024)
/* the advisory lock every write transaction holds: "kfix" in ASCII */
#define PG_TX_LOCK "1802881400"

struct pg_stmt {
	struct db_stmt base;
	char *sql;
	int n;
	Oid types[PG_MAX_PARAMS];
	char *values[PG_MAX_PARAMS];
	int lengths[PG_MAX_PARAMS];
	int formats[PG_MAX_PARAMS];
	PGresult *res;
	int row;  /* the row the last step answered */
	unsigned char *blob;
};

static PGconn *conn_of(struct store *s)
{
	return s->conn;
}

static struct pg_stmt *pst(struct db_stmt *st)
{
	return (struct pg_stmt *)st;
}

/* SQLSTATE classes and codes (PostgreSQL's errcodes.txt) to errnos */
static int sqlstate_to_errno(const char *state)
{
	static const struct {
		const char *prefix;
		int err;
	} map[] = {
		{ "23", -EEXIST },   /* integrity constraint violation */
		{ "40", -EBUSY },    /* serialization failure, deadlock */
		{ "55P03", -EBUSY }, /* lock not available */
		{ "53100", -ENOSPC },
		{ "53200", -ENOMEM },
		{ "53", -EAGAIN },   /* insufficient resources */
		{ "57P", -ECONNRESET }, /* the server is shutting down */
		{ "08", -ECONNRESET },  /* connection exception */
		{ "28", -EACCES },   /* invalid authorization */
		{ "42501", -EACCES },
		{ "3D", -ENOENT },   /* no such database */
		{ "25006", -EROFS }, /* read-only transaction */
		{ "42", -EINVAL },   /* syntax error or access rule violation */
		{ "22", -EINVAL },   /* data exception */
	};

	for (size_t i = 0; state && i < ARRAY_SIZE(map); i++)
		if (startswith(state, map[i].prefix))
			return map[i].err;
	return -EIO;
}

/* libpq's messages end in a newline and may span lines */
static int pg_fail(struct store *s, PGresult *res)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";
	int err;

	if (!msg[0])
		msg = PQerrorMessage(conn_of(s));
	err = res && PQresultErrorField(res, PG_DIAG_SQLSTATE)
		      ? sqlstate_to_errno(PQresultErrorField(res, PG_DIAG_SQLSTATE))
		      : PQstatus(conn_of(s)) == CONNECTION_OK ? -EIO : -ECONNRESET;
	db_error(s, err, "%.*s", (int)strcspn(msg, "\n"), msg);
	return err;
}

static int result_check(struct store *s, PGresult *res)
{
	ExecStatusType t = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	return t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK ? 0 : pg_fail(s, res);
}

static int64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A connection the server dropped (a restart, a fail-over) is made
 * again when no transaction was open on it: nothing done in one is lost
 * silently, and a statement outside one is simply sent again.  A server
 * that restarts is back within seconds; the store can do nothing
 * without it meanwhile, so this waits for it, a bounded time. */
static bool pg_reconnect(struct store *s)
{
	struct timespec pause = { 0, 250 * 1000 * 1000 };
	int64_t deadline = now_usec() + PG_RECONNECT_MS * 1000LL;

	if (s->tx_depth > 0 || PQstatus(conn_of(s)) == CONNECTION_OK)
		return false;
	for (;;) {
		PQreset(conn_of(s));
		if (PQstatus(conn_of(s)) == CONNECTION_OK)
			return true;
		if (now_usec() >= deadline)
			return false;
		nanosleep(&pause, NULL);
	}
}

static int pg_exec_script(struct store *s, const char *sql)
{
	PGresult *res = PQexec(conn_of(s), sql);
	int r = result_check(s, res);

	/* COMMIT of a transaction a failed statement aborted "succeeds" as
	 * a ROLLBACK: its work is lost, which the caller must hear */
	if (r >= 0 && streq(sql, "COMMIT") && !streq(PQcmdStatus(res), "COMMIT"))
		r = db_error(s, -EIO, "the transaction was aborted and rolled back");

	if (r < 0 && pg_reconnect(s)) {
		PQclear(res);
		res = PQexec(conn_of(s), sql);
		r = result_check(s, res);
	}
	PQclear(res);
	return r;
}

static int pg_open(struct store *s, const char *uri, const char *password)
{
	/* The URI overrides the keywords before it (the time-out), those
	 * after it override the URI.  kfix's times are numbers and its text
	 * UTF-8 whatever the server's defaults; set here, the settings
	 * survive a reconnection. */
	const char *const keys[] = { "connect_timeout", "dbname", "client_encoding", "options",
				     "password", NULL };
	const char *const values[] = { PG_CONNECT_TIMEOUT_SEC, uri, "UTF8",
				       "-c TimeZone=UTC -c client_min_messages=warning", password,
				       NULL };
	PGconn *c = PQconnectdbParams(keys, values, 1);

	if (!c)
		return -ENOMEM;
	s->conn = c;
	if (PQstatus(c) != CONNECTION_OK) {
		const char *m = PQerrorMessage(c);

		/* the message names the server, never the password */
		return db_error(s, -ECONNREFUSED, "%.*s", (int)strcspn(m, "\n"), m);
	}
	return 0;
}

static void pg_close(struct store *s)
{
	PQfinish(conn_of(s));
}

static void pg_finalize(struct db_stmt *st)
{
	struct pg_stmt *p = pst(st);

	for (int i = 0; i < p->n; i++)
		free(p->values[i]);
	PQclear(p->res);
	PQfreemem(p->blob);
	free(p->sql);
	free(p);
}

/* '?' and '?N' to '$N', numbered as SQLite numbers them (a bare '?' is
 * one more than the largest number so far), outside quoted text. */
static int pg_translate(const char *sql, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(PG_MAX_SQL);
	char quote = 0;
	int max = 0, r = 0;

	for (const char *p = sql; *p && r >= 0; p++) {
		if (quote) {
			quote = *p == quote ? 0 : quote;
			r = buf_append(&b, p, 1);
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
			r = buf_append(&b, p, 1);
		} else if (*p == '?') {
			int n;

			if (isdigit((unsigned char)p[1])) {
				n = (int)strtol(p + 1, (char **)&p, 10);
				p--;
			} else {
				n = max + 1;
			}
			if (n < 1 || n > PG_MAX_PARAMS)
				return -EINVAL;
			max = n > max ? n : max;
			r = buf_printf(&b, "$%d", n);
		} else {
			r = buf_append(&b, p, 1);
		}
	}
	if (r < 0)
		return r;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* A number's text; on failure values[i] stays NULL for pg_finalize. */
static int bind_printf(struct pg_stmt *p, int i, Oid type, const char *fmt, ...)
	_printf_(4, 5);
static int bind_printf(struct pg_stmt *p, int i, Oid type, const char *fmt, ...)
{
	va_list ap;
	int r;

	p->types[i] = type;
	va_start(ap, fmt);
	r = vasprintf(&p->values[i], fmt, ap);
	va_end(ap);
	if (r < 0) {
		p->values[i] = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int pg_bind(struct pg_stmt *p, int i, char type, va_list *ap)
{
	switch (type) {
	case 'i':
		return bind_printf(p, i, OID_INT8, "%lld", (long long)va_arg(*ap, int64_t));
	case 'd':
		return bind_printf(p, i, OID_FLOAT8, "%.17g", va_arg(*ap, double));
	case 'b': {
		const void *v = va_arg(*ap, const void *);
		size_t n = va_arg(*ap, size_t);

		if (n > INT32_MAX)
			return -EFBIG;
		p->types[i] = OID_BYTEA;
		p->formats[i] = 1;
		p->lengths[i] = (int)n;
		p->values[i] = malloc(n ? n : 1);
		if (!p->values[i])
			return -ENOMEM;
		if (n)
			memcpy(p->values[i], v, n);
		return 0;
	}
	case 't': {
		const char *t = va_arg(*ap, const char *);

		p->types[i] = OID_TEXT;
		if (!t)
			return 0;
		p->values[i] = strdup(t);
		return p->values[i] ? 0 : -ENOMEM;
	}
	default:
		return -EINVAL;
	}
}

static int pg_prepare(struct store *s, struct db_stmt **ret, const char *sql,
		      const char *types, va_list ap)
{
	struct pg_stmt *p = calloc(1, sizeof(*p));
	va_list aq;
	int r;

	if (!p)
		return -ENOMEM;
	p->base.be = &store_backend_pg;
	p->row = -1;
	r = pg_translate(sql, &p->sql);
	va_copy(aq, ap);
	for (int i = 0; r >= 0 && types && types[i]; i++) {
		if (i >= PG_MAX_PARAMS) {
			r = -E2BIG;
			break;
		}
		/* what a failed bind allocated is NULL: finalize frees all */
		r = pg_bind(p, i, types[i], &aq);
		p->n = i + 1;
	}
	va_end(aq);
	if (r < 0) {
		pg_finalize(&p->base);
		return db_error(s, r, "cannot prepare a statement for PostgreSQL");
	}
	*ret = &p->base;
	return 0;
}

/* The statement runs at its first step; later steps walk its rows. */
static int pg_step(struct store *s, struct db_stmt *st)
{
	struct pg_stmt *p = pst(st);

	if (!p->res) {
		int r;

		p->res = PQexecParams(conn_of(s), p->sql, p->n, p->types,
				      (const char *const *)p->values, p->lengths, p->formats, 0);
		r = result_check(s, p->res);
		if (r < 0 && pg_reconnect(s)) {
			PQclear(p->res);
			p->res = PQexecParams(conn_of(s), p->sql, p->n, p->types,
					      (const char *const *)p->values, p->lengths,
					      p->formats, 0);
			r = result_check(s, p->res);
		}
		if (r < 0)
			return r;
	}
	PQfreemem(p->blob);
	p->blob = NULL;
	if (PQresultStatus(p->res) != PGRES_TUPLES_OK || p->row + 1 >= PQntuples(p->res))
		return DB_DONE;
	p->row++;
	return DB_ROW;
}

static int64_t pg_changes(struct store *s, struct db_stmt *st)
{
	(void)s;
	return pst(st)->res ? strtoll(PQcmdTuples(pst(st)->res), NULL, 10) : 0;
}

/* READ COMMITTED whatever the server's default: each statement after
 * the lock must see what the lock's previous holder committed. */
static int pg_begin(struct store *s)
{
	int r = pg_exec_script(s, "BEGIN ISOLATION LEVEL READ COMMITTED;"
			       " SELECT pg_advisory_xact_lock(" PG_TX_LOCK ")");

	/* a lock wait that failed (a time-out, a cancel) leaves an aborted
	 * transaction open, in which every later statement would fail */
	if (r < 0 && PQtransactionStatus(conn_of(s)) != PQTRANS_IDLE) {
		PGresult *res = PQexec(conn_of(s), "ROLLBACK");

		PQclear(res);
	}
	return r;
}

/* The migrations' DDL, spelt for PostgreSQL.  Replacements apply to
 * whole words outside quoted text, longest first. */
static const struct {
	const char *from, *to;
} ddl_words[] = {
	{ "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
	{ "INTEGER", "BIGINT" },
	{ "REAL", "DOUBLE PRECISION" },
	{ "BLOB", "BYTEA" },
	{ "lower(hex(randomblob(6)))",
	  "substr(md5(random()::text || clock_timestamp()::text), 1, 12)" },
};

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static int pg_ddl(const char *sql, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(PG_MAX_SQL);
	char quote = 0;
	int r = 0;

	for (const char *p = sql; *p && r >= 0;) {
		size_t i = 0;

		if (quote || *p == '\'' || *p == '"') {
			quote = quote ? (*p == quote ? 0 : quote) : *p;
			r = buf_append(&b, p++, 1);
			continue;
		}
		if (p != sql && word_char(p[-1]))
			i = ARRAY_SIZE(ddl_words);
		for (; i < ARRAY_SIZE(ddl_words); i++) {
			size_t n = strlen(ddl_words[i].from);

			if (strncmp(p, ddl_words[i].from, n) == 0 && !word_char(p[n]))
				break;
		}
		if (i < ARRAY_SIZE(ddl_words)) {
			r = buf_puts(&b, ddl_words[i].to);
			p += strlen(ddl_words[i].from);
		} else {
			r = buf_append(&b, p++, 1);
		}
	}
	if (r < 0)
		return r;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static int pg_exec_ddl(struct store *s, const char *sql)
{
	_cleanup_free_ char *ddl = NULL;
	int r = pg_ddl(sql, &ddl);

	return r < 0 ? r : pg_exec_script(s, ddl);
}

/* The version lives in a table of its own: PostgreSQL has no
 * user_version.  No table yet means an empty database, version 0. */
static int pg_schema_version(struct store *s, int *ret)
{
	PGresult *res = PQexec(conn_of(s), "SELECT to_regclass('kfix_schema') IS NOT NULL");
	int r = result_check(s, res);
	bool exists = r >= 0 && PQntuples(res) == 1 && streq(PQgetvalue(res, 0, 0), "t");

	PQclear(res);
	if (r < 0 || !exists) {
		if (r >= 0)
			*ret = 0;
		return r;
	}
	res = PQexec(conn_of(s), "SELECT max(version) FROM kfix_schema");
	r = result_check(s, res);
	if (r >= 0 && (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)))
		r = db_error(s, -EBADMSG, "kfix_schema holds no version");
	if (r >= 0)
		*ret = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return r;
}

static int pg_set_schema_version(struct store *s, int v)
{
	char sql[160];

	snprintf(sql, sizeof(sql),
		 "CREATE TABLE IF NOT EXISTS kfix_schema (version BIGINT NOT NULL);"
		 " DELETE FROM kfix_schema; INSERT INTO kfix_schema VALUES (%d)", v);
	return pg_exec_script(s, sql);
}

static const char *pg_col_str(struct db_stmt *st, int i)
{
	struct pg_stmt *p = pst(st);

	if (p->row < 0 || i >= PQnfields(p->res) || PQgetisnull(p->res, p->row, i))
		return NULL;
	return PQgetvalue(p->res, p->row, i);
}

static bool pg_col_null(struct db_stmt *st, int i)
{
	return !pg_col_str(st, i);
}

static int64_t pg_col_int64(struct db_stmt *st, int i)
{
	const char *v = pg_col_str(st, i);

	if (!v)
		return 0;
	/* a boolean expression reads as 1 or 0, as in SQLite */
	if (streq(v, "t") || streq(v, "f"))
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

static double pg_col_double(struct db_stmt *st, int i)
{
	const char *v = pg_col_str(st, i);

	return v ? strtod(v, NULL) : 0;
}

static const void *pg_col_blob(struct db_stmt *st, int i, size_t *ret_len)
{
	struct pg_stmt *p = pst(st);
	const char *v = pg_col_str(st, i);

	*ret_len = 0;
	if (!v)
		return NULL;
	/* a text-format result carries bytea in its hex escape */
	PQfreemem(p->blob);
	p->blob = PQunescapeBytea((const unsigned char *)v, ret_len);
	return p->blob;
}

const struct store_backend store_backend_pg = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.prepare = pg_prepare,
	.step = pg_step,
	.changes = pg_changes,
	.finalize = pg_finalize,
	.exec_script = pg_exec_script,
	.exec_ddl = pg_exec_ddl,
	.begin = pg_begin,
	.schema_version = pg_schema_version,
	.set_schema_version = pg_set_schema_version,
	.col_null = pg_col_null,
	.col_int64 = pg_col_int64,
	.col_double = pg_col_double,
	.col_str = pg_col_str,
	.col_blob = pg_col_blob,
};
