#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "archive.h"
#include "bisect.h"
#include "budget.h"
#include "iterate.h"
#include "publish.h"
#include "repro/run.h"
#include <string.h>
#include "sched.h"
#include "source.h"
#include "store.h"
#include "syztest.h"
#include "upstream.h"

#define SCHED_BATCH 100
/* bugs with a C reproducer go before everything else of their tree */
#define SCHED_C_REPRO_PRIORITY 100

/* The [kfix] and [vm] keys of one scheduling round, read at its start
 * so that a reload takes effect at the next round. */
struct sched_conf {
	int job_attempts;
	bool self_test_jobs;
	char *syzkaller; /* the first [vm]'s syzkaller build; NULL: none */
	uint64_t upstream_check_usec; /* 0: never look for the developers' fixes */
};

static void sched_conf_done(struct sched_conf *c)
{
	free(c->syzkaller);
	*c = (struct sched_conf){ 0 };
}

static int sched_conf_from_config(const struct config *cfg, struct sched_conf *ret)
{
	_cleanup_strv_ char **vms = NULL;
	struct sched_conf c = { 0 };
	int64_t attempts = 0;
	int r;

	(void)config_get_int(cfg, "kfix", NULL, "job-attempts", &attempts);
	(void)config_get_bool(cfg, "kfix", NULL, "self-test-jobs", &c.self_test_jobs);
	(void)config_get_duration(cfg, "kfix", NULL, "upstream-check", &c.upstream_check_usec);
	c.job_attempts = (int)attempts;
	r = config_subsections(cfg, "vm", &vms);
	if (r < 0)
		return r;
	if (vms && vms[0]) {
		r = config_get_path(cfg, "vm", vms[0], "syzkaller", &c.syzkaller);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	*ret = c;
	return 0;
}

static int sched_new_bugs(struct config *cfg, const struct sched_conf *sc, struct store *store);

/* A new version on request: iterate_queue's refusals become events. */
static int request_new_version(const struct sched_conf *sc, struct store *store, int64_t bug,
			       const char *by)
{
	int r = iterate_queue(store, bug, "request", by, SCHED_C_REPRO_PRIORITY, sc->job_attempts);

	if (r == -ENOENT)
		return store_event_add(store, bug, 0, "request.ignored",
				       "no published patch to make a new version of");
	if (r == -EBUSY)
		return store_event_add(store, bug, 0, "request.ignored",
				       "a job is already working on the bug");
	return r;
}

/* The open patch of a bug: the newest awaiting approval, else the newest
 * held by a pre-send check (approving it again sends it anyway). */
static int open_patch(struct store *store, int64_t bug, struct store_patch **ret)
{
	struct store_patch **ps = NULL;
	size_t n = 0;
	int r = store_patch_list(store, "awaiting-approval", bug, 0, &ps, &n);

	if (r >= 0 && n == 0) {
		store_patch_list_free(ps, 0);
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
	store_patch_list_free(ps, n);
	return r;
}

/* Acts on one "#kfix CMD" (mail or forge comment) from an allowed sender,
 * recorded by the intake as an event "request.CMD". */
static int handle_request(const struct sched_conf *sc, struct store *store,
			  const struct store_event *e)
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
		store_job_list_free(jobs, n);
		return r;
	}
	if (streq(cmd, "retest")) {
		_cleanup_free_ char *args = NULL;
		json_t *a;

		r = open_patch(store, e->bug_id, &p);
		if (r == -ENOENT)
			return store_event_add(store, e->bug_id, 0, "request.ignored",
					       "no patch is awaiting approval");
		if (r < 0)
			return r;
		a = json_pack("{s:I, s:s?}", "patch", (json_int_t)p->id, "by",
			      name ? name : d ? json_get_str(d, "by") : NULL);
		args = a ? json_dumps(a, JSON_COMPACT) : NULL;
		json_decref(a);
		if (!args)
			return -ENOMEM;
		return store_job_add(store, e->bug_id, "retest", args, SCHED_C_REPRO_PRIORITY, 3, NULL);
	}
	if (streq(cmd, "compare"))
		return d ? upstream_request(store, e->bug_id, d) : -ENOMEM;
	if (streq(cmd, "bisect"))
		return d ? bisect_request(store, e->bug_id, d) : -ENOMEM;
	if (streq(cmd, "repair"))
		return request_new_version(sc, store, e->bug_id,
					   name ? name : d ? json_get_str(d, "by") : NULL);
	return store_event_add(store, e->bug_id, 0, "request.ignored",
			       "this command is not supported");
}

static int sched_requests(const struct sched_conf *sc, struct store *store)
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
		r = handle_request(sc, store, ev[i]);
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
	store_event_list_free(ev, n);
	return r;
}

/* Comments that ask for a new version start one, once nothing else
 * works on the bug (comments arriving meanwhile wait for the next). */
static int sched_reviews(const struct sched_conf *sc, struct store *store)
{
	_cleanup_free_ int64_t *bugs = NULL;
	size_t n = 0;
	int r = store_review_waiting(store, &bugs, &n);

	for (size_t i = 0; i < n && r >= 0; i++) {
		r = iterate_queue(store, bugs[i], "review", NULL, SCHED_C_REPRO_PRIORITY,
				  sc->job_attempts);
		if (r == -ENOENT || r == -EBUSY)
			r = 0;
	}
	return r;
}

int sched_run(struct config *cfg, struct store *store)
{
	_cleanup_(sched_conf_done) struct sched_conf sc = { 0 };
	int rq = sched_conf_from_config(cfg, &sc);

	if (rq >= 0)
		rq = sched_requests(&sc, store);
	if (rq < 0)
		return rq;
	rq = sched_reviews(&sc, store);
	if (rq < 0)
		return rq;
	rq = budget_schedule(cfg, store);
	if (rq < 0)
		return rq;
	rq = archive_schedule(cfg, store);
	if (rq < 0)
		return rq;
	rq = upstream_schedule(store, sc.upstream_check_usec);
	if (rq < 0)
		return rq;
	rq = syztest_schedule(cfg, store);
	if (rq < 0)
		return rq;
	return sched_new_bugs(cfg, &sc, store);
}

/* The first job of a new bug.  With kfix.self-test-jobs every new bug
 * gets a self-test job (it exercises the job machinery without a
 * kernel).  Otherwise a bug of a configured tree with a C reproducer gets
 * a reproduce job, which queues the repair once the crash reproduces; a
 * bug without one has nothing to test a fix with and is given up; a bug
 * whose tree is not configured waits (a reload that adds the tree picks
 * it up). */
/* Whether a syz program can run: the VM section the toolstack uses (the
 * first) names a syzkaller build holding both tools. */
static bool sched_syzkaller_ready(const struct sched_conf *sc)
{
	_cleanup_free_ char *bin = NULL;

	return sc->syzkaller && syz_tools_find(sc->syzkaller, &bin, NULL) == 0;
}

static int sched_bug(struct config *cfg, const struct sched_conf *sc, struct store *store,
		     const struct store_bug *b)
{
	bool selftest = sc->self_test_jobs;
	int attempts = sc->job_attempts;
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	struct store_job **jobs = NULL;
	size_t nj = 0;
	int r;

	if (!selftest && source_configured(cfg, b->tree) < 0)
		return 0;
	r = store_job_list(store, NULL, b->id, 1, &jobs, &nj);
	store_job_list_free(jobs, nj);
	if (r < 0 || nj > 0)
		return r;
	if (selftest)
		return store_job_add(store, b->id, "self-test", NULL, 0, attempts, NULL);
	if ((!b->repro_c || !*b->repro_c) && (!b->repro_syz || !*b->repro_syz))
		return store_bug_set_state(store, b->id, "gave-up",
					   "no reproducer: nothing to test a fix with");
	if ((!b->repro_c || !*b->repro_c) && !sched_syzkaller_ready(sc))
		return streq(b->state, "needs-syzkaller") ? 0
			: store_bug_set_state(store, b->id, "needs-syzkaller",
					      "only a syz reproducer, and no [vm] syzkaller = DIR "
					      "with syz-execprog and syz-executor to run it");
	r = tree_conf_from_config(cfg, b->tree, &tc, NULL);
	if (r < 0)
		return r;
	return store_job_add(store, b->id, "reproduce", NULL,
			     SCHED_C_REPRO_PRIORITY + (int)tc.priority, attempts, NULL);
}

static int sched_new_bugs(struct config *cfg, const struct sched_conf *sc, struct store *store)
{
	struct store_bug **bugs = NULL;
	size_t n = 0;
	int r;

	/* all of them: bugs waiting for their tree stay new */
	r = store_bug_list(store, "new", 0, &bugs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = sched_bug(cfg, sc, store, bugs[i]);
	store_bug_list_free(bugs, n);
	/* syz-only bugs wait for syzkaller's tools; a reload that names them
	 * sends the bugs on (the tools are looked for only while bugs wait) */
	if (r < 0 || sc->self_test_jobs)
		return r;
	bugs = NULL, n = 0;
	r = store_bug_list(store, "needs-syzkaller", 0, &bugs, &n);
	if (r >= 0 && n > 0 && sched_syzkaller_ready(sc))
		for (size_t i = 0; i < n && r >= 0; i++)
			r = sched_bug(cfg, sc, store, bugs[i]);
	store_bug_list_free(bugs, n);
	return r;
}
