/* The bisect job: finds the commit that introduced a bug by running its
 * reproducer on revisions between a good one and the bug's base, the way
 * syzbot bisects: each revision built (incrementally, in the tree's own
 * folder and the warm build folder) and run [tree] bisect-runs times; a
 * revision that does not build, cannot be run or shows another crash is
 * skipped, as git bisect skip does.  The good end is --good, else
 * [tree] bisect-good, else the nearest releases below the base (each
 * one that still crashes narrows the range).
 *
 * Every tested revision is written to the job's bisect.json before the
 * next is chosen, so a job killed halfway runs again without rebuilding
 * what it tested.  The result is an event bisect.done: the culprit with
 * its subject, author and Signed-off-by chain, which the repair's Fixes:
 * and the upstream mail's Cc use.  With {"repair": ARGS} (the [tree]
 * bisect setting) the repair is queued after it, whatever it found. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "jobs.h"
#include "pipeline.h"
#include "store.h"

#define STEP_DONE "bisected"
#define BISECT_MAX_COMMITS 200000
#define BISECT_MAX_TESTS 48
#define BISECT_INFRA_MAX 3 /* failures in a row that are the host's, not the revision's */
#define BISECT_STATE_MAX (4u << 20)
#define BISECT_CANDIDATES_MAX 32

enum verdict { V_GOOD, V_BAD, V_SKIP };
static const char *const verdict_names[] = { "good", "bad", "skip" };

struct bisect {
	struct pipeline p;
	struct tree *tree;
	json_t *st;	  /* bisect.json */
	char *st_path;
	unsigned runs;	  /* per revision */
	unsigned infra;	  /* infrastructure failures in a row */
	size_t range;	  /* commits between the good and bad ends, the bad included */
	char base[TREE_OID_HEX]; /* the bug's base, where the folder returns */
	char bad[TREE_OID_HEX];
	char **good, **skip;
	char good_from[TREE_REF_MAX + 32];
	double t0;
	struct jobs_conf jobs; /* read before the pipeline opens: a failure records too */
};

static void bisect_clear(struct bisect *b)
{
	tree_free(b->tree);
	json_decref(b->st);
	free(b->st_path);
	strv_free(b->good);
	strv_free(b->skip);
	pipeline_clear(&b->p);
}

static double now_seconds(void)
{
	return (double)clock_mono_usec() / 1e6;
}

static int state_save(struct bisect *b)
{
	json_object_set_new(b->st, "wall", json_real(json_number_value(
		json_object_get(b->st, "wall")) + now_seconds() - b->t0));
	b->t0 = now_seconds();
	json_incref(b->st);
	return pipeline_write_json(b->st_path, b->st);
}

static int state_load(struct bisect *b)
{
	_cleanup_free_ char *text = NULL;
	json_error_t jerr;
	size_t len = 0;
	int r;

	if (asprintf(&b->st_path, "%s/bisect.json", b->p.dir) < 0)
		return -ENOMEM;
	r = read_file_bounded(b->st_path, BISECT_STATE_MAX, &text, &len);
	if (r == -ENOENT) {
		b->st = json_pack("{s:[], s:i, s:i, s:f}", "tests", "builds", 0, "runs", 0,
				  "wall", 0.0);
		return b->st ? 0 : -ENOMEM;
	}
	if (r < 0)
		return r;
	if (json_parse_bounded(text, len, BISECT_STATE_MAX, &b->st, &jerr) < 0 ||
	    !json_is_array(json_object_get(b->st, "tests")))
		return -EBADMSG;
	return 0;
}

static void count(struct bisect *b, const char *key)
{
	json_object_set_new(b->st, key, json_integer(json_get_int(b->st, key, 0) + 1));
}

static void progress(struct bisect *b, const char *fmt, ...) _printf_(2, 3);
static void progress(struct bisect *b, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r >= 0)
		(void)store_job_progress(b->p.ctx->store, b->p.ctx->job->id, b->p.ctx->owner, line);
}

/* Builds and runs one revision: good, bad or skip, and why. */
static int try_revision(struct bisect *b, const char *commit, enum verdict *ret, char **ret_reason,
			bool *ret_infra)
{
	struct pipeline *p = &b->p;
	struct repair_outcome o = {};
	_cleanup_free_ char *log = NULL, *err = NULL, *text = NULL;
	int r;

	r = source_move(p->ctx->cfg, p->bug->tree, &p->src, commit, &err);
	if (r < 0) {
		p->ctx->permanent = r != -EIO;
		return job_fail(p->ctx, r, "%s", err ? err : strerror(-r));
	}
	r = p->ops.build(p, NULL, &log);
	count(b, "builds");
	if (r == -ENOEXEC) {
		b->infra = 0;
		*ret = V_SKIP;
		return asprintf(ret_reason, "does not build") < 0 ? -ENOMEM : 0;
	}
	if (r >= 0) {
		r = p->ops.run(p, b->runs, &o);
		count(b, "runs");
	}
	if (r == -ENOSYS) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, r, "no [build] or [vm] to bisect with");
	}
	if (r < 0 || (o.crashed == 0 && (o.survived == 0 || o.survived * 2 < o.runs))) {
		repair_outcome_clear(&o);
		if (++b->infra >= BISECT_INFRA_MAX)
			return job_fail(p->ctx, r < 0 ? r : -EIO, "%u revisions in a row could not be "
					"built or run: the build or VM host is failing", b->infra);
		*ret = V_SKIP;
		*ret_infra = true;
		return asprintf(ret_reason, "could not be tested: %s",
				r < 0 ? strerror(-r) : "too few runs ended") < 0 ? -ENOMEM : 0;
	}
	b->infra = 0;
	text = pipeline_outcome_text(&o);
	if (o.crashed > 0)
		*ret = pipeline_same_crash(p, o.title) ? V_BAD : V_SKIP;
	else
		*ret = V_GOOD;
	repair_outcome_clear(&o);
	if (*ret == V_SKIP)
		return asprintf(ret_reason, "another crash: %s", text ? text : "?") < 0 ? -ENOMEM : 0;
	*ret_reason = TAKE_PTR(text);
	return *ret_reason ? 0 : -ENOMEM;
}

/* One revision's verdict: from bisect.json when it was tested before. */
static int test(struct bisect *b, const char *commit, const char *what, enum verdict *ret)
{
	json_t *tests = json_object_get(b->st, "tests"), *t = NULL;
	_cleanup_free_ char *why = NULL, *subject = NULL;
	bool infra = false;
	double t0;
	size_t i;
	int r;

	json_array_foreach(tests, i, t)
		if (streq_ptr(json_get_str(t, "commit"), commit))
			break;
	if (i == json_array_size(tests))
		t = NULL;
	else if (json_is_true(json_object_get(t, "infra"))) {
		/* the host failed there: a later attempt tries again */
		json_array_remove(tests, i);
		t = NULL;
	}
	if (t) {
		const char *v = json_get_str(t, "verdict");

		*ret = streq_ptr(v, "good") ? V_GOOD : streq_ptr(v, "bad") ? V_BAD : V_SKIP;
		return 0;
	}
	(void)tree_commit_subject(b->tree, commit, &subject);
	progress(b, "testing %.12s (%s), %s", commit, subject ? subject : "?", what);
	t0 = now_seconds();
	r = try_revision(b, commit, ret, &why, &infra);
	if (r < 0)
		return r;
	log_info("bisect: %.12s is %s: %s", commit, verdict_names[*ret], why);
	t = json_pack("{s:s, s:s?, s:s, s:s, s:i, s:b}", "commit", commit, "subject", subject,
		      "verdict", verdict_names[*ret], "why", why, "seconds",
		      (int)(now_seconds() - t0), "infra", infra);
	if (!t || json_array_append_new(tests, t) < 0)
		return -ENOMEM;
	r = state_save(b);
	return r < 0 ? job_fail(b->p.ctx, r, "%s: %s", b->st_path, strerror(-r)) : 0;
}

/* The good end; *ret_reason says why there is none. */
static int find_good(struct bisect *b, const char *given, char **ret_reason)
{
	const char *cfg_good = b->p.tree.bisect_good;
	char oid[TREE_OID_HEX], tag[TREE_REF_MAX], below[TREE_OID_HEX];
	enum verdict v;
	int r;

	if (!given && cfg_good)
		given = cfg_good;
	if (given) {
		if (tree_resolve(b->tree, given, oid) < 0 || tree_is_ancestor(b->tree, oid, b->bad) != 1)
			return asprintf(ret_reason, "the good revision %.60s is not an ancestor of the "
					"base %.12s", given, b->bad) < 0 ? -ENOMEM : 0;
		r = test(b, oid, "the good end", &v);
		if (r < 0)
			return r;
		if (v != V_GOOD)
			return asprintf(ret_reason, "the good revision %.60s is %s", given,
					v == V_BAD ? "bad too: the bug is older" :
						     "untestable") < 0 ? -ENOMEM : 0;
		snprintf(b->good_from, sizeof(b->good_from), "%s%.60s",
			 given == cfg_good ? "[tree] bisect-good " : "--good ", given);
		return strv_push(&b->good, oid);
	}
	snprintf(below, sizeof(below), "%s", b->bad);
	for (int64_t i = 0; i < b->p.tree.bisect_releases; i++) {
		if (tree_release_below(b->tree, below, tag, oid) < 0)
			break;
		r = test(b, oid, tag, &v);
		if (r < 0)
			return r;
		if (v == V_GOOD) {
			snprintf(b->good_from, sizeof(b->good_from), "the release %s", tag);
			return strv_push(&b->good, oid);
		}
		/* a release that crashes narrows the range from above */
		if (v == V_BAD)
			snprintf(b->bad, sizeof(b->bad), "%s", oid);
		snprintf(below, sizeof(below), "%s", oid);
	}
	return asprintf(ret_reason, "no good revision: no release below %.12s that was tested "
			"good (give one with kfixctl bisect --good or [tree] bisect-good)",
			b->bad) < 0 ? -ENOMEM : 0;
}

/* Bisects between the good and bad ends; *ret_step is the last step. */
static int narrow(struct bisect *b, struct tree_bisect_step *ret_step)
{
	unsigned tests = 0;
	int r;

	for (;;) {
		struct tree_bisect_step s;
		enum verdict v;
		char what[64];

		r = tree_bisect_next(b->tree, b->bad, b->good, b->skip, BISECT_MAX_COMMITS, &s);
		if (r < 0) {
			b->p.ctx->permanent = r != -ENOMEM;
			return job_fail(b->p.ctx, r, "bisect: %s", tree_error(b->tree));
		}
		if (tests == 0)
			b->range = s.remaining;
		if (s.result != TREE_BISECT_TEST || tests++ >= BISECT_MAX_TESTS) {
			*ret_step = s;
			return 0;
		}
		if (s.steps_left <= 1)
			snprintf(what, sizeof(what), "%zu commits left, likely the last test", s.remaining);
		else
			snprintf(what, sizeof(what), "%zu commits left, about %u tests to go",
				 s.remaining, s.steps_left);
		r = test(b, s.commit, what, &v);
		if (r < 0)
			return r;
		if (v == V_BAD)
			snprintf(b->bad, sizeof(b->bad), "%s", s.commit);
		else
			r = strv_push(v == V_GOOD ? &b->good : &b->skip, s.commit);
		if (r < 0)
			return r;
	}
}

/* The author and the Signed-off-by chain, each once; whether a mail can
 * carry them is the mail composer's check (mail_upstream_recipients). */
static json_t *people(struct bisect *b, const char *commit, const char *author)
{
	_cleanup_strv_ char **sob = NULL, **all = NULL;
	json_t *a;

	if (author && strv_push(&all, author) < 0)
		return NULL;
	if (tree_commit_trailers(b->tree, commit, "Signed-off-by", &sob) >= 0)
		for (size_t i = 0; sob[i]; i++)
			if (!strv_contains(all, sob[i]) && strv_push(&all, sob[i]) < 0)
				return NULL;
	a = json_array();
	for (size_t i = 0; a && all && all[i]; i++)
		json_array_append_new(a, json_string(all[i]));
	return a;
}

static int on_author(const struct tree_commit_info *ci, void *userdata)
{
	char **ret = userdata;

	if (asprintf(ret, "%s <%s>", ci->author_name ? ci->author_name : "",
		     ci->author_email ? ci->author_email : "") < 0)
		*ret = NULL;
	return 1;
}

/* The result: what was found, and the figures of the search. */
static json_t *result(struct bisect *b, const struct tree_bisect_step *s, const char *failed)
{
	json_t *j = json_pack("{s:s, s:s?, s:s, s:O, s:O, s:O, s:I, s:i}", "result",
			      failed ? "failed" : s->result == TREE_BISECT_FOUND ? "found" :
			      s->result == TREE_BISECT_ONLY_SKIPPED ? "only-skipped" : "gave-up",
			      "why", failed, "bad", b->bad, "tests", json_object_get(b->st, "tests"),
			      "builds", json_object_get(b->st, "builds"), "runs",
			      json_object_get(b->st, "runs"), "wall",
			      (json_int_t)json_number_value(json_object_get(b->st, "wall")),
			      "runs_per_revision", (int)b->runs);

	if (!j)
		return NULL;
	if (b->good_from[0])
		json_object_set_new(j, "good_from", json_string(b->good_from));
	if (b->good && b->good[0])
		json_object_set_new(j, "good", json_string(b->good[0]));
	if (b->range)
		json_object_set_new(j, "range", json_integer((json_int_t)b->range));
	if (!failed && s->result == TREE_BISECT_ONLY_SKIPPED) {
		_cleanup_strv_ char **cand = NULL;

		if (tree_bisect_candidates(b->tree, b->bad, b->good, BISECT_MAX_COMMITS, &cand) >= 0) {
			json_t *c = json_array();

			for (size_t i = 0; c && cand[i] && i < BISECT_CANDIDATES_MAX; i++)
				json_array_append_new(c, json_string(cand[i]));
			json_object_set_new(j, "candidates", c);
		}
	}
	if (!failed && s->result == TREE_BISECT_FOUND) {
		_cleanup_free_ char *subject = NULL, *author = NULL;

		(void)tree_commit_subject(b->tree, s->commit, &subject);
		(void)tree_commit_show(b->tree, s->commit, on_author, &author);
		json_object_set_new(j, "culprit", json_string(s->commit));
		json_object_set_new(j, "subject", json_string(subject ? subject : ""));
		json_object_set_new(j, "author", json_string(author ? author : ""));
		json_object_set_new(j, "cc", people(b, s->commit, author));
	}
	return j;
}

/* The event (bisect.done, or bisect.failed after the last attempt), the
 * job's step and the repair after it, all or nothing. */
static int record(struct job_ctx *ctx, const struct jobs_conf *jc, const char *kind,
		  json_t *detail, const char *repair)
{
	int64_t attempts = jc->job_attempts;
	int r;

	r = store_begin(ctx->store);
	if (r < 0) {
		json_decref(detail);
		return r;
	}
	r = store_event_add_json(ctx->store, ctx->job->bug_id, ctx->job->id, kind, detail);
	if (r >= 0 && repair)
		r = store_job_add(ctx->store, ctx->job->bug_id, "repair", repair, ctx->job->priority,
				  (int)attempts, NULL);
	if (r >= 0 && streq(kind, "bisect.done"))
		r = job_step_done(ctx, STEP_DONE);
	if (r < 0) {
		store_rollback(ctx->store);
		return job_fail(ctx, r, "recording the bisection: %s", store_errmsg(ctx->store));
	}
	return store_commit(ctx->store);
}

static int result_path(struct job_ctx *ctx, char **ret)
{
	_cleanup_free_ char *dir = NULL;
	int r = pipeline_job_dir(ctx, ctx->job->id, &dir);

	if (r < 0)
		return r;
	return asprintf(ret, "%s/result.json", dir) < 0 ? -ENOMEM : 0;
}

/* The tree's folder goes back to the base whatever happened, and the
 * build folder too: the repair after it reads the base's vmlinux there. */
static int go_back(struct bisect *b, char **ret_error)
{
	struct pipeline *p = &b->p;
	_cleanup_free_ char *log = NULL;
	int r;

	if (source_in_place(p->ctx->cfg, p->bug->tree))
		r = source_restore(p->ctx->cfg, p->bug->tree, ret_error);
	else
		r = source_move(p->ctx->cfg, p->bug->tree, &p->src, b->base, ret_error);
	if (r < 0 || json_get_int(b->st, "builds", 0) == 0)
		return r;
	progress(b, "building the base %.12s again", b->base);
	r = p->ops.build(p, NULL, &log);
	if (r < 0)
		*ret_error = strdup("the base kernel does not build again after the bisection");
	return r;
}

static int bisect(struct bisect *b, const json_t *args, const char *repair)
{
	struct job_ctx *ctx = b->p.ctx;
	_cleanup_free_ char *err = NULL, *why = NULL, *path = NULL;
	_cleanup_json_ json_t *res = NULL;
	struct tree_bisect_step s = {};
	int r, rr;

	r = pipeline_prepare(&b->p, b->p.bug->base_commit);
	if (r < 0)
		return r;
	if (b->p.src.plain) {
		ctx->permanent = true;
		return job_fail(ctx, -ENOTSUP, "tree %s is a plain folder: no history to bisect",
				b->p.bug->tree);
	}
	r = source_open_tree(ctx->cfg, b->p.bug->tree, &b->tree, &err);
	if (r < 0)
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	b->runs = (unsigned)b->p.tree.bisect_runs;
	r = state_load(b);
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", b->st_path ? b->st_path : "bisect.json",
				strerror(-r));
	b->t0 = now_seconds();
	snprintf(b->base, sizeof(b->base), "%s", b->p.src.base);
	snprintf(b->bad, sizeof(b->bad), "%s", b->p.src.base);
	r = find_good(b, json_get_str(args, "good"), &why);
	if (r >= 0 && !why)
		r = narrow(b, &s);
	rr = go_back(b, &err);
	if (r < 0)
		return r;
	if (rr < 0)
		return job_fail(ctx, rr, "%s", err ? err : strerror(-rr));
	if (state_save(b) < 0 || !(res = result(b, &s, why)))
		return -ENOMEM;
	r = result_path(ctx, &path);
	if (r >= 0)
		r = pipeline_write_json(path, json_incref(res));
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", path ? path : "result.json", strerror(-r));
	if (why)
		log_info("bisect: %s", why);
	else if (s.result == TREE_BISECT_FOUND)
		log_info("bisect: the first bad commit is %.12s", s.commit);
	return record(ctx, &b->jobs, "bisect.done", json_incref(res), repair);
}

static int job_bisect_run(struct job_ctx *ctx)
{
	_cleanup_(bisect_clear) struct bisect b = {};
	_cleanup_json_ json_t *args = NULL;
	_cleanup_free_ char *repair = NULL, *path = NULL;
	json_error_t jerr;
	int r;

	if (ctx->job->args &&
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 65536, &args, &jerr) < 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "bisect job with unreadable arguments");
	}
	if (json_object_get(args, "repair") &&
	    !(repair = json_dumps(json_object_get(args, "repair"), JSON_COMPACT)))
		return -ENOMEM;
	if (!job_step_passed(ctx, STEP_DONE)) {
		r = jobs_conf_from_config(ctx->cfg, &b.jobs);
		if (r >= 0)
			r = pipeline_open(ctx, &b.p);
		if (r >= 0)
			r = bisect(&b, args, repair);
		if (r < 0) {
			/* failing for good, it still lets the repair go on */
			if (repair && (ctx->permanent || ctx->job->attempts >= ctx->job->max_attempts))
				(void)record(ctx, &b.jobs, "bisect.failed", json_pack("{s:s}", "why",
					     ctx->error ? ctx->error : "?"), repair);
			return r;
		}
	}
	r = result_path(ctx, &path);
	if (r >= 0)
		r = pipeline_read_json(path, &ctx->result);
	return r < 0 ? job_fail(ctx, r, "result: %s", strerror(-r)) : 0;
}

const struct job_kind job_kind_bisect = {
	.name = "bisect",
	.run = job_bisect_run,
	.doc = "finds the commit that introduced the bug by bisecting with its reproducer "
		"between a good revision and its base (bisect.done names it, for Fixes: and "
		"Cc); with [tree] bisect the repair follows",
};
