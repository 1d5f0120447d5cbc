/* The reproduce job: builds the bug's base kernel and runs its C
 * reproducer there.  The same crash moves the bug to repairing and queues
 * the repair job, or with [tree] bisect the bisect job that queues it (in
 * the transaction that records the step), so a job killed at any point
 * queues exactly one; no crash, or another
 * crash, makes the bug not-reproducible. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "jobs.h"
#include "pipeline.h"
#include "repro/report.h"
#include "store.h"


#define STEP_DONE "reproduced"

static int result_file(struct job_ctx *ctx, char **ret)
{
	_cleanup_free_ char *dir = NULL;
	int r = pipeline_job_dir(ctx, ctx->job->id, &dir);

	if (r < 0)
		return r;
	return asprintf(ret, "%s/result.json", dir) < 0 ? -ENOMEM : 0;
}

/* The crash the base kernel showed, as the toolstack symbolised it, kept
 * beside the bug's other texts; *ret_guilty is its guilty file when
 * syzkaller's rules find one.  Nothing when the runs left no report. */
static int keep_crash(struct pipeline *p, const struct repair_outcome *base, char **ret_path,
		      char **ret_guilty)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	_cleanup_free_ char *dir = NULL, *path = NULL, *guilty = NULL;
	const char *text;
	char sub[48];
	int r;

	if (!base->log)
		return 0;
	r = report_parse(base->log, strlen(base->log), &rep);
	if (r < 0)
		return r;
	text = report_text(rep);
	if (!text)
		return 0;
	if (report_guilty_file(rep)) {
		guilty = strdup(report_guilty_file(rep));
		if (!guilty)
			return -ENOMEM;
	}
	snprintf(sub, sizeof(sub), "artifacts/bug-%lld", (long long)p->bug->id);
	r = config_state_path(p->ctx->cfg, sub, &dir);
	if (r >= 0)
		r = mkdir_p(dir, 0750);
	if (r >= 0 && asprintf(&path, "%s/crash.txt", dir) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = write_file_atomic(path, text, strlen(text), 0640);
	if (r < 0)
		return r;
	*ret_path = TAKE_PTR(path);
	*ret_guilty = TAKE_PTR(guilty);
	return 0;
}

/* The verdict, its state change and the next job, all or nothing. */
static int record(struct pipeline *p, const struct repair_outcome *base, const char *verdict,
		  const char *why)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *res_path = NULL, *args = NULL, *crash = NULL, *guilty = NULL;
	int64_t repair = 0, attempts = p->jobs.job_attempts;
	int r;

	r = result_file(ctx, &res_path);
	if (r >= 0)
		r = pipeline_write_json(res_path, json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:s?, s:s?}",
			"result", verdict, "reason", why, "title", p->title, "runs", base->runs,
			"crashed", base->crashed, "infra", base->infra, "crash_title", base->title,
			"base", p->src.base[0] ? p->src.base : NULL));
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", res_path ? res_path : "result", strerror(-r));
	r = keep_crash(p, base, &crash, &guilty);
	if (r < 0)
		return job_fail(ctx, r, "keeping the reproduced crash: %s", strerror(-r));
	if (asprintf(&args, "{\"reproduce-job\": %lld}", (long long)ctx->job->id) < 0)
		return -ENOMEM;
	r = store_begin(ctx->store);
	if (r < 0)
		return r;
	if (crash)
		r = store_bug_set_text(ctx->store, p->bug->id, "crash_report", crash);
	if (r >= 0 && guilty)
		r = store_bug_set_text(ctx->store, p->bug->id, "guilty_file", guilty);
	if (r >= 0 && streq(verdict, "reproduced")) {
		r = store_bug_set_state(ctx->store, p->bug->id, "repairing", why);
		/* the cause first, so that the patch's Fixes: names it */
		if (r >= 0 && p->tree.bisect) {
			_cleanup_free_ char *bargs = NULL;

			if (asprintf(&bargs, "{\"repair\": %s}", args) < 0)
				r = -ENOMEM;
			else
				r = store_job_add(ctx->store, p->bug->id, "bisect", bargs,
						  ctx->job->priority, (int)attempts, &repair);
		} else if (r >= 0)
			r = store_job_add(ctx->store, p->bug->id, "repair", args, ctx->job->priority,
					  (int)attempts, &repair);
	} else if (r >= 0)
		r = store_bug_set_state(ctx->store, p->bug->id,
					streq(verdict, "not-reproducible") ? "not-reproducible" : "gave-up",
					why);
	if (r >= 0)
		r = job_step_done(ctx, STEP_DONE);
	if (r < 0) {
		store_rollback(ctx->store);
		return job_fail(ctx, r, "recording the reproduction: %s", store_errmsg(ctx->store));
	}
	r = store_commit(ctx->store);
	if (r >= 0 && repair > 0)
		log_info("reproduced; job %lld queued", (long long)repair);
	return r;
}

/* The base kernel does not build: the job fails, for good, with the
 * compiler's first error and where the whole log is; the bug gives up
 * with the same words. */
static int base_build_failed(struct pipeline *p, const char *log)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *path = NULL, *first = NULL, *why = NULL;
	const char *l = log ? log : "";
	int r;

	for (const char *e; *l; l = e + (*e == '\n')) {
		e = l + strcspn(l, "\n");
		if (memmem(l, (size_t)(e - l), "error:", 6)) {
			first = str_escape(l, (size_t)(e - l), 300);
			break;
		}
	}
	if (asprintf(&path, "%s/base-build.log", p->dir) < 0)
		return -ENOMEM;
	r = write_file_atomic(path, log ? log : "", log ? strlen(log) : 0, 0640);
	if (asprintf(&why, "the base kernel does not build: %s (build log: %s)",
		     first ? first : "no compiler error in the log",
		     r >= 0 ? path : "not kept") < 0)
		return -ENOMEM;
	r = store_bug_set_state(ctx->store, p->bug->id, "gave-up", why);
	if (r < 0)
		return job_fail(ctx, r, "bug state: %s", store_errmsg(ctx->store));
	ctx->permanent = true;
	return job_fail(ctx, -ENOEXEC, "%s", why);
}

static int reproduce(struct pipeline *p)
{
	struct job_ctx *ctx = p->ctx;
	struct repair_outcome base = {};
	_cleanup_free_ char *log = NULL, *why = NULL, *out = NULL, *text = NULL;
	const char *verdict;
	bool built = false;
	int r;

	r = store_bug_set_state(ctx->store, p->bug->id, "reproducing", "reproduce job started");
	if (r == -EPERM) {
		ctx->permanent = true;
		return job_fail(ctx, r, "bug %lld is %s, not a bug to reproduce", (long long)p->bug->id,
				p->bug->state);
	}
	if (r < 0)
		return job_fail(ctx, r, "bug state: %s", store_errmsg(ctx->store));
	r = pipeline_prepare(p, p->bug->base_commit);
	if (r < 0)
		return pipeline_fail_bug(p, r);
	log_info("reproducing on %s (%u runs)", p->src.base[0] ? p->src.base : p->src.dir,
		 p->params.base_runs);
	r = pipeline_test(p, NULL, p->params.base_runs, &base, &built, &log);
	if (r < 0)
		return pipeline_fail_bug(p, r);
	if (asprintf(&out, "%s/reproduce.json", p->dir) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = pipeline_outcome_save(out, &base, p->src.base);
	if (r < 0) {
		repair_outcome_clear(&base);
		return job_fail(ctx, r, "%s: %s", out ? out : "reproduce.json", strerror(-r));
	}
	if (!built) {
		repair_outcome_clear(&base);
		return base_build_failed(p, log);
	}
	text = pipeline_outcome_text(&base);
	if (base.crashed > 0 && pipeline_same_crash(p, base.title)) {
		verdict = "reproduced";
		why = strdup(text ? text : "reproduced");
	} else {
		verdict = "not-reproducible";
		if (base.crashed > 0 && asprintf(&why, "a different crash on the base kernel (%s); "
						 "expected %s", text ? text : "?", p->title) < 0)
			why = NULL;
		else if (base.crashed == 0 && asprintf(&why, "no crash on the base kernel: %s",
						      text ? text : "?") < 0)
			why = NULL;
	}
	r = why ? record(p, &base, verdict, why) : -ENOMEM;
	repair_outcome_clear(&base);
	return r;
}

static int job_reproduce_run(struct job_ctx *ctx)
{
	_cleanup_(pipeline_clear) struct pipeline p = {};
	_cleanup_free_ char *res_path = NULL;
	int r;

	if (!job_step_passed(ctx, STEP_DONE)) {
		r = pipeline_open(ctx, &p);
		if (r >= 0)
			r = reproduce(&p);
		if (r < 0)
			return r;
	}
	r = result_file(ctx, &res_path);
	if (r >= 0)
		r = pipeline_read_json(res_path, &ctx->result);
	return r < 0 ? job_fail(ctx, r, "result: %s", strerror(-r)) : 0;
}

const struct job_kind job_kind_reproduce = {
	.name = "reproduce",
	.run = job_reproduce_run,
	.doc = "builds the bug's base kernel and runs its reproducer (C, else syz); the same "
		"crash moves the bug to repairing and queues a repair job, else the "
		"bug is not-reproducible",
};
