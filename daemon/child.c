#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "common/conf.h"
#include "common/log.h"
#include "common/macro.h"
#include "store.h"

int child_open(const char *config_path, struct config **ret_cfg,
	       struct store **ret_store)
{
	_cleanup_free_ char *err = NULL, *state = NULL, *db = NULL;
	struct config *cfg = NULL;
	int r;

	r = config_load(config_path, &cfg, &err);
	if (r < 0) {
		log_error("%s", err ? err : strerror(-r));
		return r;
	}
	r = config_get_path(cfg, "kfix", NULL, "state-dir", &state);
	if (r >= 0 && asprintf(&db, "%s/kfix.db", state) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = store_open(db, ret_store);
	if (r < 0) {
		log_error("cannot open store: %s", strerror(-r));
		config_free(cfg);
		return r;
	}
	*ret_cfg = cfg;
	return 0;
}
