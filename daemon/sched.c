#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "archive.h"
#include "publish.h"
#include <string.h>
#include "sched.h"
#include "store.h"

#define SCHED_BATCH 100

static int sched_new_bugs(struct config *cfg, struct store *store);

/* A new bug gets its first job.  Only the self-test kind exists so far;
 * reproduce/repair/publish kinds plug in here. */
static const char *first_job_kind(const struct config *cfg)
{
	bool selftest = false;

	config_get_bool(cfg, "kfix", NULL, "self-test-jobs", &selftest);
	return selftest ? "self-test" : NULL;
}

/* The open patch of a bug: the newest awaiting approval, else the newest
 * held by a pre-send check (approving it again sends it anyway). */
static int open_patch(struct store *store, int64_t bug, struct store_patch **ret)
{
	struct store_patch **ps = NULL;
	size_t n = 0;
	int r = store_patch_list(store, "awaiting-approval", bug, 0, &ps, &n);

	if (r >= 0 && n == 0) {
		store_list_free((void **)ps, 0, (void (*)(void *))store_patch_free);
		ps = NULL;
		r = store_patch_list(store, "held", bug, 0, &ps, &n);
	}

	if (r >= 0 && n == 0)
		r = -ENOENT;
	if (r >= 0) {
		*ret = ps[n - 1];
		ps[n - 1] = NULL;
		n--;
	}
	store_list_free((void **)ps, n, (void (*)(void *))store_patch_free);
	return r;
}

/* Acts on one "#kfix CMD" (mail or forge comment) from an allowed sender,
 * recorded by the intake as an event "request.CMD". */
static int handle_request(struct store *store, const struct store_event *e)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_json_ json_t *d = NULL;
	const char *cmd = e->kind + strlen("request."), *name;
	struct store_job **jobs = NULL;
	size_t n = 0;
	int r = 0;

	d = e->detail ? json_loads(e->detail, 0, NULL) : NULL;
	name = d ? json_get_str(d, "name") : NULL;
	if (streq(cmd, "upstream") || streq(cmd, "reject")) {
		r = open_patch(store, e->bug_id, &p);
		if (r == -ENOENT)
			return store_event_add(store, e->bug_id, 0, "request.ignored",
					       "no patch is awaiting approval");
		if (r < 0)
			return r;
		if (streq(cmd, "reject"))
			return store_patch_decide(store, p->id, "rejected", name, "rejected by mail");
		if (!name || !strchr(name, '<'))
			return store_event_add(store, e->bug_id, 0, "request.ignored",
					       "the approver has no \"Name <addr>\" to sign off with");
		r = store_patch_decide(store, p->id, "approved", name, NULL);
		return r < 0 ? r : publish_queue(store, p->id, "upstream", name);
	}
	if (streq(cmd, "stop")) {
		r = store_job_list(store, NULL, e->bug_id, 0, &jobs, &n);
		for (size_t i = 0; i < n && r >= 0; i++)
			if (streq(jobs[i]->state, "queued") || streq(jobs[i]->state, "running"))
				r = store_job_cancel(store, jobs[i]->id);
		store_list_free((void **)jobs, n, (void (*)(void *))store_job_free);
		return r;
	}
	/* retest and repair need the repair job kinds */
	return store_event_add(store, e->bug_id, 0, "request.ignored",
			       "this command is not supported yet");
}

static int sched_requests(struct store *store)
{
	_cleanup_free_ char *last = NULL;
	struct store_event **ev = NULL;
	struct store_query q = { .limit = SCHED_BATCH };
	uint64_t after = 0;
	size_t n = 0;
	int r;

	if (store_kv_get(store, "sched.requests.after", &last) >= 0)
		parse_uint64(last, &after);
	q.after = (int64_t)after;
	r = store_event_query(store, &q, &ev, &n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		char pos[32];

		if (!startswith(ev[i]->kind, "request.") || streq(ev[i]->kind, "request.ignored"))
			continue;
		/* the action and the position move together */
		r = store_begin(store);
		if (r < 0)
			break;
		r = handle_request(store, ev[i]);
		snprintf(pos, sizeof(pos), "%lld", (long long)ev[i]->id);
		if (r >= 0)
			r = store_kv_set(store, "sched.requests.after", pos);
		r = r < 0 ? (store_rollback(store), r) : store_commit(store);
	}
	if (r >= 0 && n > 0) {
		char pos[32];

		snprintf(pos, sizeof(pos), "%lld", (long long)ev[n - 1]->id);
		r = store_kv_set(store, "sched.requests.after", pos);
	}
	store_list_free((void **)ev, n, (void (*)(void *))store_event_free);
	return r;
}

int sched_run(struct config *cfg, struct store *store)
{
	int rq = sched_requests(store);

	if (rq < 0)
		return rq;
	rq = archive_schedule(cfg, store);
	if (rq < 0)
		return rq;
	return sched_new_bugs(cfg, store);
}

static int sched_new_bugs(struct config *cfg, struct store *store)
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
