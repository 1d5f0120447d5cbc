/* The repair job: the repair engine (agent/repair.h) on the bug's base
 * kernel with the configured model, started from the reproduce job's
 * base outcome.  A validated result becomes a patch row and a publish
 * job for moderation, in one transaction with the step that records it,
 * so a job killed at any point never adds two patches.
 *
 * Steps: "repaired" (the engine's outcome is in the job's folder:
 * outcome.json, fix.diff, commit-message.txt, explanation.md and .json,
 * trajectory.jsonl) and "recorded" (bug state, patch, publish job). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm.h"
#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/slot.h"
#include "common/strutil.h"
#include "budget.h"
#include "iterate.h"
#include "jobs.h"
#include "pipeline.h"
#include "publish.h"
#include "stats.h"
#include "store.h"


#define STEP_REPAIRED "repaired"
#define STEP_RECORDED "recorded"
#define TEXT_MAX (4u << 20)

static int job_file(const struct pipeline *p, const char *name, char **ret)
{
	return asprintf(ret, "%s/%s", p->dir, name) < 0 ? -ENOMEM : 0;
}

static int read_job_file(const struct pipeline *p, const char *name, char **ret)
{
	_cleanup_free_ char *path = NULL;
	int r = job_file(p, name, &path);

	return r < 0 ? r : read_file_bounded(path, TEXT_MAX, ret, NULL);
}

static int load_base(struct pipeline *p)
{
	_cleanup_json_ json_t *args = NULL;
	_cleanup_free_ char *dir = NULL, *path = NULL;
	struct repair_outcome o = {};
	json_error_t jerr;
	int64_t id;
	int r;

	if (!p->ctx->job->args ||
	    json_parse_bounded(p->ctx->job->args, strlen(p->ctx->job->args), 4096, &args, &jerr) < 0 ||
	    (id = json_get_int(args, "reproduce-job", 0)) <= 0)
		return 0; /* the engine reproduces on its own */
	r = pipeline_job_dir(p->ctx, id, &dir);
	if (r >= 0 && asprintf(&path, "%s/reproduce.json", dir) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = pipeline_outcome_load(path, &o);
	if (r == -ENOENT)
		return 0;
	if (r >= 0)
		r = pipeline_cache_base(p, &o);
	repair_outcome_clear(&o);
	return r < 0 ? job_fail(p->ctx, r, "%s: %s", path ? path : "reproduce.json", strerror(-r)) : 0;
}

struct llm_stats {
	struct store *store;
	const char *model;
	int64_t bug, job;
};

static void on_llm_call(void *ud, bool ok, uint64_t usec, uint64_t in, uint64_t out, double cost)
{
	const struct llm_stats *ls = ud;

	(void)stats_llm_call(ls->store, ls->model, ok, (double)usec / 1e6, in, out, cost);
	/* what the budgets count: a lost row only makes them lenient */
	if (in + out > 0 || cost > 0)
		(void)store_llm_usage_add(ls->store, ls->bug, ls->job, ls->model, in, out, cost);
}

/* The engine's own guards stop where the bug's budget ends. */
static void cap_to_budget(struct pipeline *p, const struct budget_left *left)
{
	if (left->tokens < p->params.limits.max_tokens)
		p->params.limits.max_tokens = left->tokens;
	if (left->cost >= 0 && (p->params.limits.max_cost <= 0 || left->cost < p->params.limits.max_cost))
		p->params.limits.max_cost = left->cost;
}

static int make_llm(struct pipeline *p, bool iterating, struct llm **ret)
{
	_cleanup_free_ char *err = NULL, *path = NULL;
	_cleanup_(llm_agent_conf_free) struct llm_agent_conf ac = { 0 };
	int r;

	r = llm_agent_conf_from_config(p->ctx->cfg, &ac);
	if (r < 0)
		return job_fail(p->ctx, r, "model: %s", strerror(-r));
	r = llm_new_from_config(p->ctx->cfg, iterating && ac.iterate_llm ? ac.iterate_llm : ac.llm,
				ret, &err);
	if (r < 0) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, r, "model: %s", err ? err : strerror(-r));
	}
	if (ac.record && !llm_is_replay(*ret)) {
		r = job_file(p, "cassette.jsonl", &path);
		if (r >= 0)
			r = llm_record(*ret, path);
		if (r < 0)
			return job_fail(p->ctx, r, "cannot record the model's exchanges: %s",
					strerror(-r));
	}
	return 0;
}

static int save_outcome(struct pipeline *p, const struct repair_summary *s,
			const struct llm_usage *u, const char *model)
{
	_cleanup_free_ char *path = NULL;
	int r;

	if (s->result == REPAIR_VALIDATED) {
		r = job_file(p, "fix.diff", &path);
		if (r >= 0)
			r = write_file_atomic(path, s->diff ? s->diff : "", s->diff ? strlen(s->diff) : 0,
					      0644);
		free(path);
		path = NULL;
		if (r < 0)
			return r;
	}
	r = job_file(p, "outcome.json", &path);
	if (r < 0)
		return r;
	return pipeline_write_json(path, json_pack(
		"{s:s, s:s?, s:s?, s:i, s:{s:s?, s:i, s:i, s:i, s:I, s:I, s:f}, s:i, s:i}",
		"result", repair_result_name(s->result), "reason", s->reason,
		"base", p->src.base[0] ? p->src.base : NULL, "attempts", s->attempts,
		"llm", "model", model, "calls", u->calls, "failures", u->failures,
		"retries", u->retries, "tokens_in", (json_int_t)u->input_tokens,
		"tokens_out", (json_int_t)u->output_tokens, "cost", u->cost,
		"builds", p->builds, "runs", p->runs));
}

/* Each step of the agent: a journal line, and the job's progress that
 * kfixctl job and the API show while it runs. */
static void progress(void *ud, const char *step, const char *msg)
{
	struct job_ctx *ctx = ud;
	_cleanup_free_ char *esc = str_escape(msg, strlen(msg), 300), *line = NULL;

	log_info("repair %s: %s", step, esc ? esc : "");
	if (asprintf(&line, "%s: %s", step, esc ? esc : "") >= 0 &&
	    store_job_progress(ctx->store, ctx->job->id, ctx->owner, line) < 0)
		log_debug("job progress not recorded: %s", store_errmsg(ctx->store));
}

/* A new version: what changed since the one before, in changes.txt. */
static int write_changes(struct pipeline *p, struct llm *llm, const struct iterate *it,
			 const char *diff)
{
	_cleanup_free_ char *text = NULL, *path = NULL;
	int r = iterate_changes(llm, it, p->prompts_dir, diff, &text);

	if (r >= 0)
		r = job_file(p, "changes.txt", &path);
	if (r >= 0)
		r = write_file_atomic(path, text, strlen(text), 0644);
	return r;
}

/* A rerun (kfixctl rerun): the earlier job's trajectory replays up to
 * the step in the job's arguments; *ret_args keeps the strings the
 * parameters point into. */
static int load_rerun(struct pipeline *p, json_t **ret_args, json_t **ret_events)
{
	_cleanup_json_ json_t *args = NULL, *ev = NULL;
	_cleanup_free_ char *dir = NULL, *path = NULL;
	json_error_t jerr;
	int64_t of;
	int r;

	if (!p->ctx->job->args ||
	    json_parse_bounded(p->ctx->job->args, strlen(p->ctx->job->args), 16384, &args, &jerr) < 0 ||
	    (of = json_get_int(args, "rerun_of", 0)) <= 0)
		return 0;
	r = pipeline_job_dir(p->ctx, of, &dir);
	if (r >= 0 && asprintf(&path, "%s/trajectory.jsonl", dir) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = trajectory_load(path, &ev);
	if (r < 0 || json_array_size(ev) == 0) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, r < 0 ? r : -ENOENT, "rerun of job %lld: its trajectory: %s",
				(long long)of, r < 0 ? strerror(-r) : "no events");
	}
	p->params.rerun_events = ev;
	p->params.rerun_from = json_get_str(args, "from") ?: "run";
	p->params.directive = json_get_str(args, "directive");
	*ret_events = TAKE_PTR(ev);
	*ret_args = TAKE_PTR(args);
	return 0;
}

static int repair(struct pipeline *p, const struct iterate *it)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_(llm_freep) struct llm *llm = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *sum = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_json_ json_t *rerun_args = NULL, *rerun_events = NULL;
	struct llm_usage u = {};
	struct budget_left left;
	struct slot *slot = NULL;
	int r;

	if (!streq(p->bug->state, "repairing")) {
		ctx->permanent = true;
		return job_fail(ctx, -EPERM, "bug %lld is %s, not repairing", (long long)p->bug->id,
				p->bug->state);
	}
	r = budget_job_gate(ctx, &left);
	if (r >= 0) {
		cap_to_budget(p, &left);
		r = load_base(p);
	}
	if (r >= 0 && !it)
		r = load_rerun(p, &rerun_args, &rerun_events);
	if (r >= 0)
		r = make_llm(p, it != NULL, &llm);
	if (r < 0)
		return pipeline_fail_bug(p, r);
	/* one conversation with the model per LLM slot; taken before the
	 * tree, like every job: slots in one order, no deadlock */
	r = job_slot_acquire(ctx, "llm", &slot);
	if (r < 0)
		return job_fail(ctx, r, "no LLM slot: %s", strerror(-r));
	if (it)
		p->params.review = it->prompt;
	r = pipeline_prepare(p, p->bug->base_commit);
	if (r < 0) {
		slot_release(slot);
		return pipeline_fail_bug(p, r);
	}
	p->params.kb_path = p->knowledge_base;
	p->params.syzbot_id = streq_ptr(p->bug->source, "syzbot") ? p->bug->source_id : NULL;
	p->params.title = p->title;
	p->params.progress = progress;
	p->params.progress_ud = ctx;
	struct llm_stats ls = { .store = ctx->store, .model = llm_model(llm), .bug = p->bug->id,
				.job = ctx->job->id };

	llm_set_observer(llm, on_llm_call, &ls);
	r = repair_run(&p->params, pipeline_ops(p), llm, &sum, &err);
	slot_release(slot);
	llm_get_usage(llm, &u);
	if (r < 0) {
		_cleanup_free_ char *esc = str_escape(err ? err : strerror(-r),
						      strlen(err ? err : strerror(-r)), 500);

		job_fail(ctx, r, "repair: %s (%u LLM calls, %llu+%llu tokens)", esc ? esc : "",
			 u.calls, (unsigned long long)u.input_tokens,
			 (unsigned long long)u.output_tokens);
		return pipeline_fail_bug(p, r);
	}
	if (it && sum->result == REPAIR_VALIDATED) {
		r = write_changes(p, llm, it, sum->diff ? sum->diff : "");
		if (r < 0)
			return job_fail(ctx, r, "the changes since v%d: %s", it->previous_version,
					strerror(-r));
		llm_get_usage(llm, &u);
	}
	r = save_outcome(p, sum, &u, llm_model(llm));
	if (r >= 0)
		r = job_step_done(ctx, STEP_REPAIRED);
	if (r < 0)
		return job_fail(ctx, r, "saving the outcome: %s", strerror(-r));
	log_info("repair ended: %s", repair_result_name(sum->result));
	return 0;
}

/* A text of the engine's explanation.json, without its trailing newlines. */
static char *expl_text(const json_t *e, const char *name)
{
	const char *s = json_get_str(e, name);
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '\n')
		n--;
	return strndup(s, n);
}

/* The mail's evidence: the model's, then what the probes printed. */
static char *expl_evidence(const json_t *e)
{
	const char *ev = json_get_str(e, "evidence"), *probes = json_get_str(e, "probe_output");
	char *out;

	if (!ev && !probes)
		return NULL;
	if (asprintf(&out, "%s%sProbe output:\n\n%s\n", ev ?: "", ev && *ev ? "\n\n" : "",
		     probes ?: "") < 0)
		return NULL;
	return out;
}

/* The reproduction runs as the mail's table: "base <short commit>" and
 * "patched", each "crashed N of M: title" or "survived N of M". */
static json_t *repro_table(const json_t *e)
{
	const json_t *rows = json_object_get(e, "reproduction"), *row;
	json_t *a = json_array();
	size_t i;

	json_array_foreach(rows, i, row) {
		const char *kernel = json_get_str(row, "kernel"), *title = json_get_str(row, "title");
		json_int_t runs = json_integer_value(json_object_get(row, "runs"));
		json_int_t crashed = json_integer_value(json_object_get(row, "crashed"));
		json_int_t survived = json_integer_value(json_object_get(row, "survived"));
		_cleanup_free_ char *k = NULL, *res = NULL;

		if (!a || !kernel)
			continue;
		/* "base <40 hex>" reads better with the short commit id */
		k = strndup(kernel, startswith(kernel, "base ") ? 17 : strlen(kernel));
		if (crashed > 0 ? asprintf(&res, "crashed %lld of %lld: %s", (long long)crashed,
					   (long long)runs, title ?: "-") < 0 :
				  asprintf(&res, "survived %lld of %lld", (long long)survived,
					   (long long)runs) < 0)
			res = NULL;
		if (!k || !res)
			return json_decref(a), NULL;
		json_array_append_new(a, json_pack("{s:s, s:s}", "kernel", k, "result", res));
	}
	return a;
}

/* explanation.json, written by the engine beside explanation.md.  A job
 * directory left by a kfix without it gives NULL: the patch is recorded
 * with the Markdown alone. */
static json_t *read_explanation(const struct pipeline *p)
{
	_cleanup_free_ char *text = NULL;
	json_error_t jerr;
	json_t *e = NULL;

	if (read_job_file(p, "explanation.json", &text) < 0 ||
	    json_parse_bounded(text, strlen(text), TEXT_MAX, &e, &jerr) < 0)
		return NULL;
	return e;
}

static int add_patch(struct pipeline *p, const json_t *outcome, const struct iterate *it,
		     int64_t *ret_id)
{
	_cleanup_free_ char *changes = NULL;
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *diff = NULL, *msg = NULL, *md = NULL, *subject = NULL;
	_cleanup_free_ char *root = NULL, *evid = NULL, *nt = NULL, *ev_text = NULL, *traj = NULL;
	_cleanup_free_ char *tested = NULL;
	_cleanup_free_ char *expl = NULL;
	_cleanup_json_ json_t *ev = NULL, *e = NULL;
	struct store_patch patch = {};
	int version = 0;
	int r;

	r = read_job_file(p, "fix.diff", &diff);
	if (r >= 0)
		r = read_job_file(p, "commit-message.txt", &msg);
	if (r >= 0)
		r = read_job_file(p, "explanation.md", &md);
	if (r < 0)
		return job_fail(ctx, r, "the repair's output in %s: %s", p->dir, strerror(-r));
	subject = strndup(msg, strcspn(msg, "\n"));
	e = read_explanation(p);
	if (e) {
		root = expl_text(e, "root_cause");
		evid = expl_evidence(e);
		nt = expl_text(e, "not_tested");
		tested = expl_text(e, "tested");
	}
	if (job_file(p, "trajectory.jsonl", &traj) < 0 || job_file(p, "explanation.md", &expl) < 0)
		return -ENOMEM;
	if (it && read_job_file(p, "changes.txt", &changes) < 0)
		changes = NULL;
	ev = json_pack("{s:o, s:s?, s:s?, s:s?, s:s?, s:I, s:s, s:s, s:O?, s:s?, s:I}", "table",
		       e ? repro_table(e) : json_array(), "evidence", evid, "patch_type",
		       e ? json_get_str(e, "patch_type") : NULL, "tested", tested, "not_tested", nt, "job",
		       (json_int_t)ctx->job->id,
		       "trajectory", traj, "explanation_file", expl, "llm",
		       json_object_get(outcome, "llm"), "changes", changes, "previous",
		       (json_int_t)(it ? it->previous : 0));
	ev_text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	if (!subject || !ev_text)
		return -ENOMEM;
	patch = (struct store_patch){
		.bug_id = p->bug->id, .subject = subject, .message = msg, .diff = diff,
		.explanation = root ? root : md, .evidence = ev_text,
		.base_commit = (char *)json_get_str(outcome, "base"),
	};
	r = store_patch_add(ctx->store, &patch, ret_id, &version);
	if (r >= 0)
		log_info("patch %lld (v%d) added", (long long)*ret_id, version);
	return r;
}

static int record(struct pipeline *p, const struct iterate *it)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *path = NULL, *text = NULL, *why = NULL;
	_cleanup_json_ json_t *o = NULL;
	json_error_t jerr;
	const char *result, *state;
	int64_t patch = 0;
	int r;

	r = job_file(p, "outcome.json", &path);
	if (r >= 0)
		r = read_file_bounded(path, TEXT_MAX, &text, NULL);
	if (r >= 0 && json_parse_bounded(text, strlen(text), TEXT_MAX, &o, &jerr) < 0)
		r = -EBADMSG;
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", path ? path : "outcome.json", strerror(-r));
	result = json_get_str(o, "result");
	if (!result)
		return job_fail(ctx, -EBADMSG, "%s: no result", path);
	state = streq(result, "validated") ? "validated" :
		streq(result, "already-fixed") ? "already-fixed" :
		/* no better version: the published one stands */
		it ? iterate_return_state(ctx->store, p->bug->id) : "gave-up";
	if (asprintf(&why, "repair %s: %s", result, json_get_str(o, "reason") ?: "") < 0)
		return -ENOMEM;
	r = store_begin(ctx->store);
	if (r < 0)
		return r;
	r = store_bug_set_state(ctx->store, p->bug->id, state, why);
	if (r >= 0 && streq(state, "validated"))
		r = add_patch(p, o, it, &patch);
	if (r >= 0 && it)
		r = store_event_add(ctx->store, p->bug->id, ctx->job->id, "iterate.result", why);
	if (r >= 0 && patch > 0)
		r = publish_queue(ctx->store, patch, "moderation", NULL);
	if (r >= 0)
		r = job_step_done(ctx, STEP_RECORDED);
	/* the result file before the commit: a resumed job finds it */
	if (r >= 0) {
		free(path);
		path = NULL;
		json_object_set_new(o, "patch", patch > 0 ? json_integer(patch) : json_null());
		json_object_set_new(o, "dir", json_string(p->dir));
		r = job_file(p, "result.json", &path);
		if (r >= 0)
			r = pipeline_write_json(path, json_incref(o));
	}
	if (r < 0) {
		store_rollback(ctx->store);
		return ctx->error ? r : job_fail(ctx, r, "recording the repair: %s",
						 store_errmsg(ctx->store));
	}
	return store_commit(ctx->store);
}

/* The last failure of an iterate job (whatever step it came from): the
 * bug goes back to its published patch instead of staying repairing. */
static void iterate_fail(struct job_ctx *ctx, int r)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;

	if (store_bug_get(ctx->store, ctx->job->bug_id, &b) < 0 || !streq(b->state, "repairing"))
		return;
	(void)store_bug_set_state(ctx->store, b->id, iterate_return_state(ctx->store, b->id),
				  ctx->error ? ctx->error : strerror(-r));
}

static int run(struct job_ctx *ctx, bool iterating)
{
	_cleanup_(pipeline_clear) struct pipeline p = {};
	_cleanup_(iterate_clear) struct iterate it = {};
	_cleanup_free_ char *res = NULL;
	int r;

	r = pipeline_open(ctx, &p);
	if (r >= 0 && iterating) {
		r = iterate_load(ctx, p.prompts_dir, &it);
		/* a failure leaves the bug where it was, with its patch */
		p.fail_state = it.return_state;
	}
	if (r >= 0 && !job_step_passed(ctx, STEP_REPAIRED))
		r = repair(&p, iterating ? &it : NULL);
	if (r >= 0 && !job_step_passed(ctx, STEP_RECORDED))
		r = record(&p, iterating ? &it : NULL);
	if (r >= 0 && job_file(&p, "result.json", &res) >= 0)
		r = pipeline_read_json(res, &ctx->result);
	if (r < 0 && iterating && (ctx->permanent || ctx->job->attempts >= ctx->job->max_attempts))
		iterate_fail(ctx, r);
	return r;
}

static int job_repair_run(struct job_ctx *ctx)
{
	return run(ctx, false);
}

static int job_iterate_run(struct job_ctx *ctx)
{
	return run(ctx, true);
}

const struct job_kind job_kind_repair = {
	.name = "repair",
	.run = job_repair_run,
	.doc = "runs the repair agent with the configured model; a validated patch "
		"becomes a patch row and a publish job for moderation",
};

const struct job_kind job_kind_iterate = {
	.name = "iterate",
	.run = job_iterate_run,
	.doc = "makes a new version of a published patch: the repair agent with the "
		"earlier version and the reviewers' comments in its prompts; a "
		"validated result becomes kfix/<bug>/v<N+1> with a changelog, else the "
		"bug keeps its patch",
};
