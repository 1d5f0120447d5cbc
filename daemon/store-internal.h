/* What the store's files share: the connection, and the helpers that
 * run SQL on it.  Each store-TABLE.c holds one table's rows; store.c
 * opens the database, migrates its schema and runs transactions. */
#ifndef KFIX_STORE_INTERNAL_H
#define KFIX_STORE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "common/strutil.h"
#include "store.h"

/* A prepared statement; each backend's own struct starts with this one. */
struct db_stmt {
	const struct store_backend *be;
};

/* What differs between database engines.  The SQL the store files write
 * is the one both engines run: SQLite's '?' and '?N' parameters (a
 * backend that numbers them otherwise rewrites them), ON CONFLICT, and
 * RETURNING instead of a last-row-id call. */
struct store_backend {
	const char *name;
	/* password: NULL, or one the target does not carry */
	int (*open)(struct store *s, const char *target, const char *password);
	void (*close)(struct store *s);
	/* types as for db_prepare */
	int (*prepare)(struct store *s, struct db_stmt **ret, const char *sql,
		       const char *types, va_list ap);
	/* DB_ROW, DB_DONE or a negative errno (the message in s->err) */
	int (*step)(struct store *s, struct db_stmt *st);
	/* rows the last stepped statement inserted, updated or deleted */
	int64_t (*changes)(struct store *s, struct db_stmt *st);
	void (*finalize)(struct db_stmt *st);
	/* statements without parameters, separated by ';' */
	int (*exec_script)(struct store *s, const char *sql);
	/* one schema migration, in the store's dialect of the DDL */
	int (*exec_ddl)(struct store *s, const char *sql);
	int (*begin)(struct store *s);
	int (*schema_version)(struct store *s, int *ret);
	int (*set_schema_version)(struct store *s, int v);
	bool (*col_null)(struct db_stmt *st, int i);
	int64_t (*col_int64)(struct db_stmt *st, int i);
	double (*col_double)(struct db_stmt *st, int i);
	/* NULL for SQL NULL; valid until the next step */
	const char *(*col_str)(struct db_stmt *st, int i);
	const void *(*col_blob)(struct db_stmt *st, int i, size_t *ret_len);
};

extern const struct store_backend store_backend_sqlite;
extern const struct store_backend store_backend_pg;

struct store {
	const struct store_backend *be;
	void *conn;
	int tx_depth;
	char err[512];
};

enum { DB_DONE = 0, DB_ROW = 1 };

int64_t db_now_sec(void);
int64_t db_now_usec(void);
/* Keeps a message for store_errmsg; returns err (a negative errno). */
int db_error(struct store *s, int err, const char *fmt, ...) _printf_(3, 4);
void db_finalizep(struct db_stmt **st);
#define _cleanup_stmt_ _cleanup_(db_finalizep)
/* Binds arguments by a type string: 'i' int64, 't' text (NULL allowed),
 * 'd' double, 'b' blob (a pointer and a size_t). */
int db_prepare(struct store *s, struct db_stmt **ret, const char *sql, const char *types, ...);
int db_vprepare(struct store *s, struct db_stmt **ret, const char *sql, const char *types,
		va_list ap);
/* DB_ROW, DB_DONE or a negative errno */
int db_step(struct store *s, struct db_stmt *st);
/* A statement that must answer a row: -ENODATA when it answers none. */
int db_step_row(struct store *s, struct db_stmt *st);
/* Runs a statement that returns no rows; *ret_changes gets the row count. */
int db_exec(struct store *s, int *ret_changes, const char *sql, const char *types, ...);
int db_vexec(struct store *s, int *ret_changes, const char *sql, const char *types,
	     va_list ap);
/* Runs an INSERT ... RETURNING id: *ret_id is the new row's id, or 0 when
 * the statement inserted nothing (ON CONFLICT DO NOTHING). */
int db_insert(struct store *s, int64_t *ret_id, const char *sql, const char *types, ...);
int db_exec_script(struct store *s, const char *sql);
/* Ends a transaction opened by store_begin: commit when r >= 0. */
int db_tx_end(struct store *s, int r);
bool db_col_null(struct db_stmt *st, int i);
int64_t db_col_int64(struct db_stmt *st, int i);
int db_col_int(struct db_stmt *st, int i);
double db_col_double(struct db_stmt *st, int i);
const char *db_col_str(struct db_stmt *st, int i);
const void *db_col_blob(struct db_stmt *st, int i, size_t *ret_len);
/* a copy of a text column, NULL for SQL NULL (or no memory) */
char *db_col_text(struct db_stmt *st, int i);
/* The one integer a query with one text argument answers (a count). */
int db_count_by(struct store *s, const char *sql, const char *what, int64_t *ret);

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
	static int name##_list_query(struct store *s, struct db_stmt *st,      \
				     struct store_##name ***ret,               \
				     size_t *ret_n)                            \
	{                                                                      \
		struct store_##name **items = NULL;                            \
		size_t n = 0;                                                  \
		int rc;                                                        \
                                                                               \
		while ((rc = db_step(s, st)) == DB_ROW) {                      \
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
		if (rc < 0) {                                                  \
			store_##name##_list_free(items, n);                    \
			return rc;                                             \
		}                                                              \
		*ret = items;                                                  \
		*ret_n = n;                                                    \
		return 0;                                                      \
	}                                                                      \
                                                                               \
	/* the one row a statement selects, or -ENOENT */                      \
	static _unused_ int name##_one_query(struct store *s,                 \
					     struct db_stmt *st,               \
					     struct store_##name **ret)        \
	{                                                                      \
		struct store_##name *it;                                       \
		int rc = db_step(s, st);                                       \
                                                                               \
		if (rc == DB_DONE)                                             \
			return -ENOENT;                                        \
		if (rc < 0)                                                    \
			return rc;                                             \
		it = name##_from_row(st);                                      \
		if (!it)                                                       \
			return -ENOMEM;                                        \
		*ret = it;                                                     \
		return 0;                                                      \
	}

/* A page in either order: ?A is the cursor, ?L the limit, ?D the order. */
#define PAGE_SQL(a, l, d)                                                          \
	" AND (CASE WHEN ?" d " <> 0 THEN (?" a " = 0 OR id < ?" a ") ELSE id > ?" a " END)" \
	" ORDER BY CASE WHEN ?" d " <> 0 THEN -id ELSE id END LIMIT ?" l

static inline int64_t db_query_limit(const struct store_query *q)
{
	return q->limit > 0 ? q->limit : INT64_MAX;
}

#endif
