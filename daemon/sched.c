#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "common/conf.h"
#include "common/log.h"
#include "sched.h"
#include "store.h"

#define SCHED_BATCH 100

/* A new bug gets its first job.  Only the self-test kind exists so far;
 * reproduce/repair/publish kinds plug in here. */
static const char *first_job_kind(const struct config *cfg)
{
	bool selftest = false;

	config_get_bool(cfg, "kfix", NULL, "self-test-jobs", &selftest);
	return selftest ? "self-test" : NULL;
}

int sched_run(struct config *cfg, struct store *store)
{
	struct store_bug **bugs = NULL;
	const char *kind = first_job_kind(cfg);
	int64_t attempts = 3;
	size_t n = 0;
	int r;

	if (!kind)
		return 0;
	config_get_int(cfg, "kfix", NULL, "job-attempts", &attempts);
	r = store_bug_list(store, "new", SCHED_BATCH, &bugs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct store_job **jobs = NULL;
		size_t nj = 0;

		r = store_job_list(store, NULL, bugs[i]->id, 1, &jobs, &nj);
		if (r >= 0 && nj == 0)
			r = store_job_add(store, bugs[i]->id, kind, NULL, 0,
					  (int)attempts, NULL);
		store_list_free((void **)jobs, nj, (void (*)(void *))store_job_free);
	}
	store_list_free((void **)bugs, n, (void (*)(void *))store_bug_free);
	return r;
}
