/* A fresh store for each cmocka test (setup and teardown), shared by the
 * unit tests of the store's users.  By default an SQLite file in a
 * temporary folder; with KFIX_TEST_STORE_URL set (a PostgreSQL server's
 * URI without a database, postgresql://USER:PASSWORD@HOST:PORT, which
 * tests/integration/store-pg.sh starts), a new database on that server,
 * dropped afterwards: the same tests then run on the second backend. */
#ifndef KFIX_TESTS_STORE_FIXTURE_H
#define KFIX_TESTS_STORE_FIXTURE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "daemon/store.h"

struct fixture {
	char dir[64];
	char path[512];
	struct store *s;
};

static inline const char *fixture_pg_server(void)
{
	const char *u = getenv("KFIX_TEST_STORE_URL");

	return u && *u ? u : NULL;
}

/* Runs one statement on the server's maintenance database. */
static inline int fixture_pg_admin(const char *sql)
{
	char uri[512];
	PGconn *c;
	PGresult *res;
	int ok;

	snprintf(uri, sizeof(uri), "%s/postgres", fixture_pg_server());
	c = PQconnectdb(uri);
	res = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
	ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "fixture: %s: %s", sql, PQerrorMessage(c));
	PQclear(res);
	PQfinish(c);
	return ok ? 0 : -1;
}

/* A target no store is in yet: a file path in dir, or a new database. */
static inline int fixture_new_target(const char *dir, char *buf, size_t n)
{
	static unsigned seq;
	char sql[128];

	seq++;
	if (!fixture_pg_server())
		return snprintf(buf, n, "%s/kfix-%u.db", dir, seq) < (int)n ? 0 : -1;
	snprintf(sql, sizeof(sql), "CREATE DATABASE kfix_t_%ld_%u", (long)getpid(), seq);
	if (fixture_pg_admin(sql) < 0)
		return -1;
	return snprintf(buf, n, "%s/kfix_t_%ld_%u", fixture_pg_server(), (long)getpid(), seq) <
			       (int)n
		       ? 0
		       : -1;
}

static inline void fixture_drop_target(const char *target)
{
	char sql[128];
	const char *db = strrchr(target, '/');

	if (!fixture_pg_server() || !db)
		return;
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db + 1);
	fixture_pg_admin(sql);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/kfix-store-XXXXXX");
	if (!mkdtemp(f->dir) || fixture_new_target(f->dir, f->path, sizeof(f->path)) < 0 ||
	    store_open(f->path, &f->s) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	store_close(f->s);
	fixture_drop_target(f->path);
	rm_rf(f->dir);
	free(f);
	return 0;
}

#endif
