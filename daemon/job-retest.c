/* The retest job (#kfix retest): validates a patch again on the tree's
 * current head -- the base kernel must still crash with the bug's title
 * and the patched kernel must survive every run -- and records the
 * verdict as an event "retest.result" on the bug.  When the bot has a
 * mail identity and the patch was mailed, a short reply with the verdict
 * goes into the patch's thread through the outbox (to whoever asked, else
 * to the patch's recipient).  Verdict, event and mail are one step. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "jobs.h"
#include "pipeline.h"
#include "store.h"


#define STEP_DONE "recorded"

struct verdict {
	const char *result; /* validated, not-reproduced, base-build-error,
			     * patch-build-error, still-crashes */
	struct repair_outcome base, patched;
};

static void verdict_clear(struct verdict *v)
{
	repair_outcome_clear(&v->base);
	repair_outcome_clear(&v->patched);
}

static int retest(struct pipeline *p, const struct store_patch *patch, struct verdict *v)
{
	_cleanup_free_ char *log = NULL;
	bool built = false;
	int r;

	r = pipeline_prepare(p, NULL);
	if (r < 0)
		return r;
	log_info("retesting patch %lld on %s", (long long)patch->id,
		 p->src.base[0] ? p->src.base : p->src.dir);
	r = pipeline_test(p, NULL, p->params.base_runs, &v->base, &built, &log);
	if (r < 0)
		return r;
	if (!built) {
		v->result = "base-build-error";
		return 0;
	}
	if (v->base.crashed == 0 || !pipeline_same_crash(p, v->base.title)) {
		v->result = "not-reproduced";
		return 0;
	}
	free(log);
	log = NULL;
	r = pipeline_test(p, patch->diff, p->params.validate_runs, &v->patched, &built, &log);
	if (r < 0)
		return r;
	if (!built)
		v->result = "patch-build-error";
	else if (v->patched.crashed > 0 || v->patched.runs == 0)
		v->result = "still-crashes";
	else
		v->result = "validated";
	return 0;
}

/* Header values come from mail and the model: one line each. */
static char *one_line(const char *s)
{
	char *c = strdup(s ? s : "");

	for (char *q = c; q && *q; q++)
		if (*q == '\r' || *q == '\n')
			*q = ' ';
	return c;
}

static int queue_reply(struct pipeline *p, const struct store_patch *patch, const char *by,
		       const char *summary)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *to = NULL, *subj = NULL, *mid_in = NULL, *msg = NULL, *key = NULL;
	const char *from = p->mail_from, *at;
	char mid[256], dom[128] = "kfix.invalid", date[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!from || !patch->message_id)
		return 0; /* no identity to answer as, or no thread to answer in */
	to = one_line(by && strchr(by, '@') ? by : patch->sent_to);
	if (!to || !strchr(to, '@'))
		return 0;
	subj = one_line(patch->subject);
	mid_in = one_line(patch->message_id);
	at = strrchr(from, '@');
	if (at)
		snprintf(dom, sizeof(dom), "%.*s", (int)strcspn(at + 1, ">"), at + 1);
	snprintf(mid, sizeof(mid), "kfix-retest-%lld@%s", (long long)ctx->job->id, dom);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	if (!subj || !mid_in || asprintf(&key, "mail:<%s>", mid) < 0 ||
	    asprintf(&msg,
		     "From: %s\nTo: %s\nSubject: Re: [PATCH] %s\nDate: %s\nMessage-ID: <%s>\n"
		     "In-Reply-To: <%s>\nReferences: <%s>\nMIME-Version: 1.0\n"
		     "Content-Type: text/plain; charset=utf-8\n\n%s", from, to, subj, date, mid,
		     mid_in, mid_in, summary) < 0)
		return -ENOMEM;
	return store_outbox_add(ctx->store, p->bug->id, "mail", key, msg, NULL, NULL);
}

static int record(struct pipeline *p, const struct store_patch *patch, const char *by,
		  const struct verdict *v)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *bt = pipeline_outcome_text(&v->base);
	_cleanup_free_ char *pt = v->patched.runs ? pipeline_outcome_text(&v->patched) : NULL;
	_cleanup_free_ char *summary = NULL, *detail = NULL, *path = NULL;
	const char *base = p->src.base[0] ? p->src.base : "the tree's source folder";
	json_t *j;
	int r;

	if (asprintf(&summary,
		     "Retest of patch v%d on %s:\n\n  base kernel:    %s\n  patched kernel: %s\n\n"
		     "Result: %s\n\n-- \nkfix\n", patch->version, base, bt ? bt : "?",
		     pt ? pt : "not tested", v->result) < 0)
		return -ENOMEM;
	j = json_pack("{s:I, s:s, s:s?, s:s?, s:s?}", "patch", (json_int_t)patch->id, "result",
		      v->result, "base", p->src.base[0] ? p->src.base : NULL, "base_kernel", bt,
		      "patched_kernel", pt);
	detail = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!detail || asprintf(&path, "%s/result.json", p->dir) < 0) {
		json_decref(j);
		return -ENOMEM;
	}
	r = pipeline_write_json(path, j);
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", path, strerror(-r));
	r = store_begin(ctx->store);
	if (r < 0)
		return r;
	r = store_event_add(ctx->store, p->bug->id, ctx->job->id, "retest.result", detail);
	if (r >= 0)
		r = queue_reply(p, patch, by, summary);
	if (r >= 0)
		r = job_step_done(ctx, STEP_DONE);
	if (r < 0) {
		store_rollback(ctx->store);
		return job_fail(ctx, r, "recording the retest: %s", store_errmsg(ctx->store));
	}
	return store_commit(ctx->store);
}

static int job_retest_run(struct job_ctx *ctx)
{
	_cleanup_(pipeline_clear) struct pipeline p = {};
	_cleanup_(store_patch_freep) struct store_patch *patch = NULL;
	_cleanup_json_ json_t *args = NULL;
	_cleanup_free_ char *res = NULL;
	struct verdict v = {};
	json_error_t jerr;
	int64_t id;
	int r;

	if (!ctx->job->args ||
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 65536, &args, &jerr) < 0 ||
	    (id = json_get_int(args, "patch", 0)) <= 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "retest job without {\"patch\": ID}");
	}
	r = store_patch_get(ctx->store, id, &patch);
	if (r < 0) {
		ctx->permanent = r == -ENOENT;
		return job_fail(ctx, r, "patch %lld: %s", (long long)id, strerror(-r));
	}
	r = pipeline_open(ctx, &p);
	if (r < 0)
		return r;
	if (!job_step_passed(ctx, STEP_DONE)) {
		r = retest(&p, patch, &v);
		if (r >= 0)
			r = record(&p, patch, json_get_str(args, "by"), &v);
		verdict_clear(&v);
		if (r < 0)
			return r;
	}
	if (asprintf(&res, "%s/result.json", p.dir) < 0)
		return -ENOMEM;
	return pipeline_read_json(res, &ctx->result);
}

const struct job_kind job_kind_retest = {
	.name = "retest",
	.run = job_retest_run,
	.doc = "validates a patch again on the tree's current head and records the "
		"verdict (event retest.result, reply mail)",
};
