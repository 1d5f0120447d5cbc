/* The self-test job: moves its bug through the life cycle one checkpointed
 * step at a time and queues a mail, touching every piece of the job
 * machinery (leases, checkpoints, state transitions, outbox) without a
 * kernel.  The crash tests kill the daemon in the middle of it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "jobs.h"
#include "store.h"


static void sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The keys a self-test job reads. */
struct selftest_conf {
	bool enabled;
	uint64_t step_usec;
	const char *from;
};

/* Without [mail] from, the self-test's mail still needs a sender: it
 * only exercises the queue. */
#define SELFTEST_FROM_FALLBACK "kfix@localhost"

static void selftest_conf_from_config(const struct config *c, struct selftest_conf *ret)
{
	struct selftest_conf sc = { .from = SELFTEST_FROM_FALLBACK };

	(void)config_get_bool(c, "kfix", NULL, "self-test-jobs", &sc.enabled);
	(void)config_get_duration(c, "kfix", NULL, "self-test-step", &sc.step_usec);
	(void)config_get_string(c, "mail", NULL, "from", &sc.from);
	*ret = sc;
}

static int queue_mail(struct job_ctx *ctx, const struct selftest_conf *sc)
{
	_cleanup_free_ char *msg = NULL, *key = NULL;
	const char *from = sc->from, *to = "moderation@localhost";
	long long bug = (long long)ctx->job->bug_id;

	if (asprintf(&key, "mail:<kfix-selftest-%lld@kfix>", bug) < 0 ||
	    asprintf(&msg,
		     "From: %s\r\nTo: %s\r\nSubject: [kfix self-test] bug %lld\r\n"
		     "Message-ID: <kfix-selftest-%lld@kfix>\r\n\r\n"
		     "Self-test job %lld walked bug %lld through its life cycle.\r\n",
		     from, to, bug, bug, (long long)ctx->job->id, bug) < 0)
		return -ENOMEM;
	return store_outbox_add(ctx->store, ctx->job->bug_id, "mail", key, msg,
				NULL, NULL);
}

/* One step: the state change, its side effect and the checkpoint commit
 * together, so a crash redoes the whole step or none of it. */
static int step(struct job_ctx *ctx, const struct selftest_conf *sc, const char *state,
		bool mail)
{
	int r;

	if (job_step_passed(ctx, state))
		return 0;
	r = store_begin(ctx->store);
	if (r < 0)
		return r;
	r = store_bug_set_state(ctx->store, ctx->job->bug_id, state, "self-test");
	if (r >= 0 && mail)
		r = queue_mail(ctx, sc);
	if (r >= 0)
		r = job_step_done(ctx, state);
	if (r < 0) {
		store_rollback(ctx->store);
		return r;
	}
	r = store_commit(ctx->store);
	if (r >= 0)
		log_info("self-test step %s", state);
	return r;
}

/* What a job shows while it runs: its progress line and a trajectory
 * event per step, as a repair job does (the dashboard's live view). */
static void report_step(struct job_ctx *ctx, struct trajectory *t, const char *state,
			size_t i, size_t n, uint64_t start)
{
	_cleanup_json_ json_t *out = json_pack("{s:s}", "bug-state", state);
	char line[96];

	snprintf(line, sizeof(line), "self-test: %s (%zu of %zu)", state, i, n);
	if (store_job_progress(ctx->store, ctx->job->id, ctx->owner, line) < 0)
		log_debug("job progress not recorded: %s", store_errmsg(ctx->store));
	if (t)
		(void)trajectory_add(t, &(struct traj_event){ .step = state, .kind = "selftest.step",
				     .start_usec = start, .duration_usec = trajectory_now() - start,
				     .output = out, .verdict = "done" }, NULL);
}

static int open_trajectory(struct job_ctx *ctx, struct trajectory **ret)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;
	char sub[64];
	int r;

	snprintf(sub, sizeof(sub), "jobs/%lld", (long long)ctx->job->id);
	r = config_state_path(ctx->cfg, sub, &dir);
	if (r >= 0)
		r = mkdir_p(dir, 0755);
	if (r >= 0 && asprintf(&path, "%s/trajectory.jsonl", dir) < 0)
		r = -ENOMEM;
	return r < 0 ? r : trajectory_open(path, ret);
}

static int job_selftest_run(struct job_ctx *ctx)
{
	static const char *const states[] = { "reproducing", "repairing",
					      "validated", "awaiting-approval" };
	_cleanup_json_ json_t *args = NULL;
	_cleanup_(trajectory_closep) struct trajectory *traj = NULL;
	struct selftest_conf sc;
	int64_t step_ms = 0;
	json_error_t jerr;

	selftest_conf_from_config(ctx->cfg, &sc);
	if (!sc.enabled) {
		ctx->permanent = true;
		return job_fail(ctx, -EPERM, "self-test jobs are disabled (kfix.self-test-jobs)");
	}
	if (ctx->job->bug_id == 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "self-test job without a bug");
	}
	if (ctx->job->args &&
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 4096,
			       &args, &jerr) >= 0)
		step_ms = json_get_int(args, "step-ms", 0);
	if (!args)
		step_ms = (int64_t)(sc.step_usec / 1000);
	if (step_ms < 0 || step_ms > 600000)
		step_ms = 0;
	if (open_trajectory(ctx, &traj) < 0)
		log_debug("self-test: no trajectory");
	for (size_t i = 0; i < ARRAY_SIZE(states); i++) {
		uint64_t start = trajectory_now();
		int r;

		if (job_step_passed(ctx, states[i]))
			continue;
		sleep_ms(step_ms);
		r = step(ctx, &sc, states[i], i + 1 == ARRAY_SIZE(states));
		if (r < 0)
			return job_fail(ctx, r, "step %s: %s", states[i], strerror(-r));
		report_step(ctx, traj, states[i], i + 1, ARRAY_SIZE(states), start);
	}
	ctx->result = strdup("{\"self-test\": \"passed\"}");
	return ctx->result ? 0 : -ENOMEM;
}

const struct job_kind job_kind_selftest = {
	.name = "self-test",
	.run = job_selftest_run,
	.doc = "walks a bug through the life cycle with checkpoints and queues a "
		"mail (enabled by kfix.self-test-jobs; for testing the job machinery)",
};
