/* kfixctl diagnose: why a job's repair failed, from its trajectory; and
 * kfixctl rerun: the recovery, as a new job. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diagnose.h"
#include "agent/llm.h"
#include "agent/repair.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "scrub.h"
#include "store.h"

#define FIX_MAX (4u * 1024 * 1024)

/* The files the developers' fix changes, from a patch file. */
static int fix_files(const char *path, char ***ret)
{
	_cleanup_strv_ char **files = NULL;
	_cleanup_free_ char *text = NULL;
	size_t n;
	int r;

	r = read_file_bounded(path, FIX_MAX, &text, &n);
	if (r < 0) {
		ctl_err("diagnose: cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = diagnose_diff_files(text, &files);
	if (r < 0)
		return r;
	if (!files[0]) {
		ctl_err("diagnose: %s changes no file (not a unified diff?)", path);
		return -EINVAL;
	}
	*ret = TAKE_PTR(files);
	return 0;
}

static void print(int64_t id, const struct diagnosis *d)
{
	char event[32];

	printf("%-10s %lld\n", "Job:", (long long)id);
	printf("%-10s %s\n", "Failure:", diag_family_name(d->family));
	ctl_print_escaped("Why:", d->why);
	snprintf(event, sizeof(event), " (event %lld)", (long long)d->event);
	printf("%-10s %s%s\n", "Step:", d->step, d->event ? event : "");
	ctl_print_escaped("Evidence:", d->evidence);
	ctl_print_escaped("Rerun from:", d->from);
	ctl_print_escaped("Directive:", d->directive);
}

struct diagnose_args {
	const char *fix, *llm;
	int64_t job;
};

static int parse_diagnose(int argc, char **argv, struct diagnose_args *a)
{
	const char *v[2];
	int r = ctl_parse_option_id("diagnose", "[--fix PATCH] [--llm NAME] JOB", argc, argv,
				    (const char *const[]){ "fix", "llm", NULL }, v, &a->job);

	if (r >= 0) {
		a->fix = v[0];
		a->llm = v[1];
	}
	return r;
}

/* What the model is shown: the run scrubbed as a bundle is (secrets,
 * credentials, addresses), and the rules' diagnosis of that. */
static int scrubbed(const struct config *cfg, const json_t *events, char *const *files,
		    json_t **ret_events, struct diagnosis **ret_d)
{
	_cleanup_(scrub_freep) struct scrub *sc = NULL;
	_cleanup_strv_ char **secrets = NULL;
	_cleanup_json_ json_t *copy = json_deep_copy(events);
	int r;

	if (!copy)
		return -ENOMEM;
	r = ctl_known_secrets(cfg, &secrets);
	if (r >= 0)
		r = scrub_new(secrets, &sc);
	if (r >= 0)
		r = scrub_json(sc, copy);
	if (r >= 0)
		r = diagnose_trajectory(copy, files, ret_d);
	if (r < 0)
		return r;
	*ret_events = TAKE_PTR(copy);
	return 0;
}

/* --llm: the model's pass; its diagnosis replaces the rules' only when
 * it holds up, and either way the output says what became of it. */
static int model_pass(struct ctl *c, const char *name, const json_t *events, char *const *files,
		      struct diagnosis **d, char **ret_refusal)
{
	_cleanup_(diagnosis_freep) struct diagnosis *shown_d = NULL;
	_cleanup_json_ json_t *shown = NULL;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_free_ char *err = NULL;
	struct diagnosis *md = NULL;
	struct config *cfg;
	int r;

	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	r = scrubbed(cfg, events, files, &shown, &shown_d);
	if (r < 0) {
		ctl_err("diagnose: scrubbing the run: %s", strerror(-r));
		return r;
	}
	r = llm_new_from_config(cfg, name, &l, &err);
	if (r >= 0)
		r = diagnose_with_model(l, shown, shown_d, &md, ret_refusal, &err);
	if (r < 0) {
		ctl_err("diagnose: the model: %s", err ? err : strerror(-r));
		return r;
	}
	if (md) {
		diagnosis_free(*d);
		*d = md;
	}
	return 0;
}

int ctl_diagnose(struct ctl *c, int argc, char **argv)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	_cleanup_json_ json_t *events = NULL;
	_cleanup_strv_ char **files = NULL;
	_cleanup_free_ char *refusal = NULL;
	struct diagnose_args a = {};
	int r;

	if (parse_diagnose(argc, argv, &a) < 0)
		return 2;
	if (a.fix && fix_files(a.fix, &files) < 0)
		return 2;
	r = ctl_job_trajectory(c, a.job, &events);
	if (r < 0) {
		ctl_err("diagnose: job %lld: cannot read its trajectory: %s", (long long)a.job,
			strerror(-r));
		return 1;
	}
	if (json_array_size(events) == 0) {
		ctl_err("diagnose: job %lld left no trajectory (not a repair, or not started)",
			(long long)a.job);
		return 1;
	}
	r = diagnose_trajectory(events, files, &d);
	if (r < 0) {
		ctl_err("diagnose: %s", strerror(-r));
		return 1;
	}
	if (a.llm && model_pass(c, a.llm, events, files, &d, &refusal) < 0)
		return 1;
	if (c->json) {
		json_t *j = diagnosis_json(d);

		if (j && a.llm)
			json_object_set_new(j, "model", json_pack("{s:b, s:s?}", "accepted", !refusal,
								   "refusal", refusal));
		return ctl_print_json(j);
	}
	print(a.job, d);
	if (a.llm) {
		_cleanup_free_ char *m = refusal ? strdup_printf("refused (%s): the rules' diagnosis stands",
								 refusal) : NULL;

		ctl_print_escaped("Model:", m ? m : "its diagnosis, checked against the events");
	}
	return 0;
}

/* kfixctl rerun: a new repair job for the job's bug that replays the job
 * up to a step and goes on live from there, with a directive for the
 * model.  Without --from, the diagnosis's recovery: its step and, unless
 * --directive says otherwise, its directive. */
#define RERUN_DIRECTIVE_MAX 4096

struct rerun_args {
	const char *from, *directive;
	int64_t job;
};

static int parse_rerun(int argc, char **argv, struct rerun_args *a)
{
	const char *v[2];
	int r = ctl_parse_option_id("rerun", "[--from STEP|EVENT] [--directive TEXT] JOB", argc, argv,
				    (const char *const[]){ "from", "directive", NULL }, v, &a->job);

	if (r < 0)
		return r;
	a->from = v[0];
	a->directive = v[1];
	if (a->directive && strlen(a->directive) > RERUN_DIRECTIVE_MAX) {
		ctl_err("rerun: the directive is longer than %d bytes", RERUN_DIRECTIVE_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The step to go live from and the directive: given, else diagnosed. */
static int rerun_plan(const struct rerun_args *a, const json_t *events, char **ret_step,
		      char **ret_directive)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	_cleanup_free_ char *err = NULL;
	const char *from = a->from, *directive = a->directive;
	int r;

	if (!from || !directive) {
		r = diagnose_trajectory(events, NULL, &d);
		if (r < 0)
			return r;
		if (!from)
			from = d->from;
		if (!directive && !a->from)
			directive = d->directive;
	}
	r = repair_rerun_resolve(events, from ? from : "run", ret_step, &err);
	if (r < 0) {
		ctl_err("rerun: --from: %s", err ? err : strerror(-r));
		return r;
	}
	*ret_directive = directive ? strdup(directive) : NULL;
	return directive && !*ret_directive ? -ENOMEM : 0;
}

/* The job, and the bug back to repairing (which a repair job needs), in
 * one transaction; not while another job works on the bug. */
static int queue_rerun(struct store *s, const struct store_job *j, const char *args, int64_t of,
		       const char *step, int64_t *ret_id)
{
	static const char *const kinds[] = { "reproduce", "repair", "iterate", "publish", "retest",
					     "bisect", NULL };
	_cleanup_free_ char *why = strdup_printf("a rerun of job %lld from step %s", (long long)of, step);
	int r;

	if (!why)
		return -ENOMEM;
	r = store_job_busy(s, j->bug_id, kinds);
	if (r != 0)
		return r > 0 ? -EBUSY : r;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_job_add(s, j->bug_id, "repair", args, j->priority, j->max_attempts, ret_id);
	if (r >= 0)
		r = store_bug_set_state(s, j->bug_id, "repairing", why);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

int ctl_rerun(struct ctl *c, int argc, char **argv)
{
	_cleanup_(store_job_freep) struct store_job *j = NULL;
	_cleanup_json_ json_t *events = NULL, *args = NULL;
	_cleanup_free_ char *step = NULL, *directive = NULL, *text = NULL;
	struct rerun_args a = {};
	struct store *s;
	int64_t id;
	int r;

	if (parse_rerun(argc, argv, &a) < 0)
		return 2;
	if (ctl_store(c, &s) < 0)
		return 1;
	r = store_job_get(s, a.job, &j);
	if (r < 0) {
		ctl_err("rerun: job %lld: %s", (long long)a.job, r == -ENOENT ? "no such job" : strerror(-r));
		return 1;
	}
	if (!streq(j->kind, "repair") || !j->bug_id) {
		ctl_err("rerun: job %lld is a %s job; only repair jobs are rerun", (long long)a.job, j->kind);
		return 1;
	}
	r = ctl_job_trajectory(c, a.job, &events);
	if (r < 0 || json_array_size(events) == 0) {
		ctl_err("rerun: job %lld left no trajectory to rerun from", (long long)a.job);
		return 1;
	}
	if (rerun_plan(&a, events, &step, &directive) < 0)
		return 1;
	args = json_pack("{s:I, s:s, s:s?}", "rerun_of", (json_int_t)a.job, "from", step,
			 "directive", directive);
	text = args ? json_dumps(args, JSON_COMPACT) : NULL;
	if (!text)
		return 1;
	r = queue_rerun(s, j, text, a.job, step, &id);
	if (r == -EBUSY) {
		ctl_err("rerun: a job is already working on bug %lld", (long long)j->bug_id);
		return 1;
	}
	if (r == -EPERM) {
		ctl_err("rerun: bug %lld cannot go back to repairing from where it is (kfixctl bug %lld)",
			(long long)j->bug_id, (long long)j->bug_id);
		return 1;
	}
	if (r < 0) {
		ctl_err("rerun: %s", store_errmsg(s));
		return 1;
	}
	if (c->json)
		return ctl_print_json(json_pack("{s:I, s:I, s:s, s:s?}", "job", (json_int_t)id, "rerun_of",
						(json_int_t)a.job, "from", step, "directive", directive));
	printf("job %lld queued: a rerun of job %lld, live from step %s\n", (long long)id,
	       (long long)a.job, step);
	if (directive)
		ctl_print_escaped("directive:", directive);
	return 0;
}
