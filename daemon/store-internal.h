/* What the store's files share: the connection, and the helpers that
 * run SQL on it.  Each store-TABLE.c holds one table's rows; store.c
 * opens the database, migrates its schema and runs transactions. */
#ifndef KFIX_STORE_INTERNAL_H
#define KFIX_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>

#include "common/json.h"
#include "common/strutil.h"
#include "store.h"

struct store {
	sqlite3 *db;
	int tx_depth;
	char err[512];
};

int64_t db_now_sec(void);
int64_t db_now_usec(void);
/* Keeps SQLite's message for store_errmsg; returns the negative errno. */
int db_fail(struct store *s, int rc);
void db_finalizep(sqlite3_stmt **st);
#define _cleanup_stmt_ _cleanup_(db_finalizep)
/* Binds arguments by a type string: 'i' int64, 't' text (NULL allowed). */
int db_prepare(struct store *s, sqlite3_stmt **ret, const char *sql, const char *types, ...);
int db_vprepare(struct store *s, sqlite3_stmt **ret, const char *sql, const char *types,
		va_list ap);
/* Runs a statement that returns no rows; *ret_changes gets the row count. */
int db_exec(struct store *s, int *ret_changes, const char *sql, const char *types, ...);
int db_exec_script(struct store *s, const char *sql);
/* Ends a transaction opened by store_begin: commit when r >= 0. */
int db_tx_end(struct store *s, int r);
char *db_col_text(sqlite3_stmt *st, int i);
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
			return db_fail(s, rc);                                 \
		}                                                              \
		*ret = items;                                                  \
		*ret_n = n;                                                    \
		return 0;                                                      \
	}

/* A page in either order: ?A is the cursor, ?L the limit, ?D the order. */
#define PAGE_SQL(a, l, d)                                                          \
	" AND (CASE WHEN ?" d " THEN (?" a " = 0 OR id < ?" a ") ELSE id > ?" a " END)" \
	" ORDER BY CASE WHEN ?" d " THEN -id ELSE id END LIMIT ?" l

static inline int64_t db_query_limit(const struct store_query *q)
{
	return q->limit > 0 ? q->limit : INT64_MAX;
}

#endif
