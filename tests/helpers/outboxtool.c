/* Test driver for the outbox with the smtp transport: add entries, run
 * the publisher, list states, make retries due at once. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "daemon/outbox.h"
#include "daemon/store.h"

DEFINE_CLEANUP(struct config, config_free)

static int make_due(const char *db)
{
	sqlite3 *h = NULL;
	int r;

	if (sqlite3_open(db, &h) != SQLITE_OK)
		return 1;
	r = sqlite3_exec(h, "UPDATE outbox SET next_try = 0", NULL, NULL, NULL);
	sqlite3_close(h);
	return r == SQLITE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	_cleanup_(config_freep) struct config *cfg = NULL;
	_cleanup_(store_closep) struct store *st = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	if (argc < 4)
		return 2;
	log_setup("outboxtool", LOG_TARGET_STDERR);
	if (streq(argv[3], "due"))
		return make_due(argv[2]);
	if (config_load(argv[1], &cfg, &err) < 0 || store_open(argv[2], &st) < 0) {
		fprintf(stderr, "setup: %s\n", err ? err : "store");
		return 1;
	}
	if (streq(argv[3], "add") && argc == 6) {
		_cleanup_free_ char *payload = NULL;
		bool created;
		size_t len;

		if (read_file_bounded(argv[5], 1 << 24, &payload, &len) < 0)
			return 1;
		return store_outbox_add(st, 0, "mail", argv[4], payload, NULL, &created) < 0;
	}
	if (streq(argv[3], "run")) {
		struct outbox *o = NULL;
		int sent = 0;

		r = outbox_new(cfg, st, &o, &err);
		if (r < 0) {
			fprintf(stderr, "outbox: %s\n", err ? err : strerror(-r));
			return 1;
		}
		r = outbox_run(o, "outboxtool:1", 10, &sent);
		outbox_free(o);
		printf("sent %d\n", sent);
		return r < 0;
	}
	if (streq(argv[3], "list")) {
		struct store_outbox **v = NULL;
		size_t n = 0;

		if (store_outbox_list(st, NULL, 100, &v, &n) < 0)
			return 1;
		for (size_t i = 0; i < n; i++) {
			printf("%s %s %d %s\n", v[i]->idem_key, v[i]->state, v[i]->tries,
			       v[i]->last_error ? v[i]->last_error : "-");
			store_outbox_free(v[i]);
		}
		free(v);
		return 0;
	}
	return 2;
}
