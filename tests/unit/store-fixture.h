/* A fresh store in a temporary folder for each cmocka test (setup and
 * teardown), shared by the unit tests of the store's users. */
#ifndef KFIX_TESTS_STORE_FIXTURE_H
#define KFIX_TESTS_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "daemon/store.h"

struct fixture {
	char dir[64];
	char path[96];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/kfix-store-XXXXXX");
	if (!mkdtemp(f->dir) ||
	    (snprintf(f->path, sizeof(f->path), "%s/kfix.db", f->dir),
	     store_open(f->path, &f->s) < 0)) {
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
	rm_rf(f->dir);
	free(f);
	return 0;
}

#endif
