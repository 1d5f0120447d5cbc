/* The shared part of the reproduce, repair and retest jobs; see
 * pipeline.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "agent/toolstack.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/slot.h"
#include "common/strutil.h"
#include "bisect.h"
#include "fetch.h"
#include "jobs.h"
#include "pipeline.h"
#include "repro/report.h"
#include "stats.h"
#include "store.h"

#define REPORT_MAX (16u << 20)
#define REPRO_MAX (1u << 20)
#define KCONFIG_MAX (4u << 20)
#define OUTCOME_MAX (16u << 20)

int pipeline_job_dir(const struct job_ctx *ctx, int64_t job_id, char **ret)
{
	char sub[48];

	snprintf(sub, sizeof(sub), "jobs/%lld", (long long)job_id);
	return config_state_path(ctx->cfg, sub, ret);
}

static int input_fail(struct pipeline *p, int r, const char *what, const char *value,
		      const char *why)
{
	_cleanup_free_ char *esc = value ? str_escape(value, strlen(value), 200) : NULL;

	p->ctx->permanent = true;
	if (!value)
		return job_fail(p->ctx, r, "bug %lld has no %s", (long long)p->bug->id, what);
	return job_fail(p->ctx, r, "bug %lld: the %s '%s' %s", (long long)p->bug->id, what,
			esc ? esc : "?", why);
}

/* The contract with intake: text inputs are downloaded to local files
 * before a bug is handed over, so anything else is a broken bug row. */
static int local_file(struct pipeline *p, const char *what, const char *value, size_t max,
		      char **ret_data, size_t *ret_len)
{
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!value || !*value)
		return input_fail(p, -ENOENT, what, NULL, NULL);
	if (value[0] != '/')
		return input_fail(p, -EINVAL, what, value, "is not an absolute local file path");
	r = read_file_bounded(value, max, &data, &len);
	if (r < 0) {
		_cleanup_free_ char *why = NULL;

		if (asprintf(&why, "is not a readable local file: %s", strerror(-r)) < 0)
			return -ENOMEM;
		return input_fail(p, r, what, value, why);
	}
	if (ret_data) {
		*ret_data = data;
		if (ret_len)
			*ret_len = len;
	} else
		free(data);
	return 0;
}

/* Links (from a syzbot mail or relay) become local files first. */
static int fetch_links(struct pipeline *p)
{
	_cleanup_free_ char *err = NULL;
	int n = 0, r;

	r = fetch_bug_texts(p->ctx->cfg, p->ctx->store, p->bug, &n, &err);
	if (r < 0) {
		p->ctx->permanent = r != -EAGAIN;
		return job_fail(p->ctx, r, "bug %lld: fetching its texts: %s", (long long)p->bug->id,
				err ? err : strerror(-r));
	}
	if (n == 0)
		return 0;
	store_bug_free(p->bug);
	p->bug = NULL;
	r = store_bug_get(p->ctx->store, p->ctx->job->bug_id, &p->bug);
	return r < 0 ? job_fail(p->ctx, r, "bug %lld: %s", (long long)p->ctx->job->bug_id,
				strerror(-r)) : 0;
}

static int load_params(struct pipeline *p)
{
	struct config *cfg = p->ctx->cfg;

	repair_params_default(&p->params);
	if (repair_params_from_config(cfg, &p->params) < 0) {
		p->ctx->permanent = true;
		return job_fail(p->ctx, -EINVAL, "invalid [agent] settings");
	}
	/* $KFIX_PROMPTS_DIR wins over [agent] prompts-dir (tests) */
	if (!getenv("KFIX_PROMPTS_DIR"))
		(void)config_get_path(cfg, "agent", NULL, "prompts-dir", &p->prompts_dir);
	p->params.prompts_dir = p->prompts_dir;
	if (config_get_path(cfg, "agent", NULL, "knowledge-base", &p->knowledge_base) < 0 &&
	    config_state_path(cfg, STATE_KNOWLEDGE, &p->knowledge_base) < 0)
		p->knowledge_base = NULL;
	(void)config_get_string(cfg, "mail", NULL, "from", &p->mail_from);
	return jobs_conf_from_config(cfg, &p->jobs);
}

int pipeline_open(struct job_ctx *ctx, struct pipeline *p)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	_cleanup_free_ char *repro = NULL, *err = NULL;
	size_t repro_len = 0;
	bool syz;
	int r;

	*p = (struct pipeline){ .ctx = ctx };
	if (ctx->job->bug_id <= 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "%s job without a bug", ctx->job->kind);
	}
	r = store_bug_get(ctx->store, ctx->job->bug_id, &p->bug);
	if (r < 0)
		return job_fail(ctx, r, "bug %lld: %s", (long long)ctx->job->bug_id, strerror(-r));
	r = fetch_links(p);
	if (r < 0)
		return r;
	if (!p->bug->tree)
		return input_fail(p, -ENOENT, "tree", NULL, NULL);
	if (source_configured(ctx->cfg, p->bug->tree) < 0)
		return input_fail(p, -ENOENT, "tree", p->bug->tree,
				  "is not configured (no [tree] section with a url or path)");
	r = tree_conf_from_config(ctx->cfg, p->bug->tree, &p->tree, &err);
	if (r < 0)
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	r = local_file(p, "report", p->bug->report, REPORT_MAX, &p->report, &p->report_len);
	if (r < 0)
		return r;
	/* a C reproducer when there is one; a syz program needs syzkaller's
	 * tools, which the scheduler checked before it queued the job */
	syz = !p->bug->repro_c || !*p->bug->repro_c;
	r = local_file(p, syz ? "syz reproducer" : "C reproducer",
		       syz ? p->bug->repro_syz : p->bug->repro_c, REPRO_MAX, &repro, &repro_len);
	if (r < 0)
		return r;
	if (p->bug->kernel_config)
		p->kconfig = strdup(p->bug->kernel_config);
	else if (p->tree.config)
		p->kconfig = strdup(p->tree.config);
	else
		return input_fail(p, -ENOENT, "kernel config (nor has its [tree] a config)", NULL, NULL);
	if (!p->kconfig)
		return -ENOMEM;
	r = local_file(p, "kernel config", p->kconfig, KCONFIG_MAX, NULL, NULL);
	if (r < 0)
		return r;
	if (report_parse(p->report, p->report_len, &rep) < 0 || !report_title(rep))
		return input_fail(p, -EINVAL, "report", p->bug->report, "holds no crash report");
	/* syzbot's title is the crash to reproduce; elsewhere the report's */
	if (streq_ptr(p->bug->source, "syzbot") && p->bug->title && p->bug->title[0])
		p->title = strdup(p->bug->title);
	else
		p->title = strdup(report_title(rep));
	r = pipeline_job_dir(ctx, ctx->job->id, &p->dir);
	if (r >= 0)
		r = mkdir_p(p->dir, 0755);
	/* the toolstack tells a C reproducer (compiled) from a syz program
	 * (replayed) by the name; the copy also keeps the input next to the
	 * job's outputs */
	if (r >= 0 && asprintf(&p->repro, "%s/repro.%s", p->dir, syz ? "syz" : "c") < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = write_file_atomic(p->repro, repro, repro_len, 0644);
	if (r < 0 || !p->title)
		return job_fail(ctx, r < 0 ? r : -ENOMEM, "job folder %s: %s", p->dir ? p->dir : "?",
				strerror(r < 0 ? -r : ENOMEM));
	return load_params(p);
}

/* --- the toolstack with slots ------------------------------------------- */

static int w_read(void *ud, const char *path, char **ret, size_t *ret_len)
{
	struct pipeline *p = ud;

	return p->inner->read_file(p->inner->ud, path, ret, ret_len);
}

static int w_apply(void *ud, const json_t *edits, char **ret_diff, char **ret_error)
{
	struct pipeline *p = ud;

	return p->inner->apply(p->inner->ud, edits, ret_diff, ret_error);
}

static double mono_seconds(void)
{
	return (double)clock_mono_usec() / 1e6;
}

/* The metrics' outcome of one call of the toolstack's run. */
static const char *run_outcome_name(int r, const struct repair_outcome *o)
{
	if (r < 0)
		return "infra-error";
	if (o->crashed > 0)
		return "crashed";
	return o->survived > 0 ? "no-crash" : "infra-error";
}

/* A VM run for /metrics; none was made when nothing can run one. */
static void count_vm_run(struct pipeline *p, int r, const struct repair_outcome *o, double t0)
{
	if (r != -ENOSYS)
		(void)stats_vm_run(p->ctx->store, run_outcome_name(r, o), mono_seconds() - t0);
}

static int w_build(void *ud, const char *diff, char **ret_log)
{
	struct pipeline *p = ud;
	struct slot *s = NULL;
	double t0;
	int r;

	if (!diff && p->cache_state == 1) {
		p->cache_state = 2;
		*ret_log = strdup("the base kernel was built and tested by the reproduce job");
		return *ret_log ? 0 : -ENOMEM;
	}
	p->cache_state = 0;
	r = job_slot_acquire(p->ctx, "build", &s);
	if (r < 0)
		return r;
	t0 = mono_seconds();
	r = p->inner->build(p->inner->ud, diff, ret_log);
	slot_release(s);
	p->builds++;
	if (r != -ENOSYS) /* nothing to build with: not a build */
		(void)stats_build(p->ctx->store,
				  r >= 0 ? "ok" : r == -ENOEXEC ? "build-error" : "infra-error",
				  mono_seconds() - t0);
	return r;
}

static int outcome_copy(const struct repair_outcome *o, struct repair_outcome *ret)
{
	char **const fields[] = { &ret->title, &ret->log, &ret->behaviour, &ret->leaks,
				  &ret->selftests, &ret->regressions, &ret->selftest_note };

	*ret = *o;
	/* every string its own copy: both outcomes are cleared */
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		*fields[i] = NULL;
	ret->title = strdup_safe(o->title);
	ret->log = strdup_safe(o->log);
	ret->behaviour = strdup_safe(o->behaviour);
	ret->leaks = strdup_safe(o->leaks);
	ret->selftests = strdup_safe(o->selftests);
	ret->regressions = strdup_safe(o->regressions);
	ret->selftest_note = strdup_safe(o->selftest_note);
	if ((o->title && !ret->title) || (o->log && !ret->log) ||
	    (o->behaviour && !ret->behaviour) || (o->leaks && !ret->leaks) ||
	    (o->selftests && !ret->selftests) || (o->regressions && !ret->regressions) ||
	    (o->selftest_note && !ret->selftest_note)) {
		repair_outcome_clear(ret);
		return -ENOMEM;
	}
	return 0;
}

static int w_run(void *ud, unsigned runs, struct repair_outcome *ret)
{
	struct pipeline *p = ud;
	struct slot *s = NULL;
	double t0;
	int r;

	if (p->cache_state == 2) {
		p->cache_state = 0;
		return outcome_copy(&p->cached, ret);
	}
	p->cache_state = 0;
	r = job_slot_acquire(p->ctx, "vm", &s);
	if (r < 0)
		return r;
	t0 = mono_seconds();
	r = p->inner->run(p->inner->ud, runs, ret);
	slot_release(s);
	p->runs++;
	count_vm_run(p, r, ret, t0);
	return r;
}

static int w_probe(void *ud, const char *diff, struct repair_outcome *ret)
{
	struct pipeline *p = ud;
	struct slot *b = NULL, *v = NULL;
	int r;

	p->cache_state = 0;
	/* the same order as everywhere: build slot before VM slot */
	r = job_slot_acquire(p->ctx, "build", &b);
	if (r < 0)
		return r;
	r = job_slot_acquire(p->ctx, "vm", &v);
	if (r >= 0) {
		double t0 = mono_seconds();

		r = p->inner->probe(p->inner->ud, diff, ret);
		slot_release(v);
		count_vm_run(p, r, ret, t0);
	}
	slot_release(b);
	return r;
}

static int w_selftests(void *ud, const char *diff, struct repair_outcome *ret)
{
	struct pipeline *p = ud;
	struct slot *b = NULL, *v = NULL;
	int r;

	/* they may build (the tests, the base kernel) and boot guests */
	r = job_slot_acquire(p->ctx, "build", &b);
	if (r < 0)
		return r;
	r = job_slot_acquire(p->ctx, "vm", &v);
	if (r >= 0) {
		r = p->inner->selftests(p->inner->ud, diff, ret);
		slot_release(v);
	}
	slot_release(b);
	return r;
}

/* "found by bisection: ..." with the figures a maintainer weighs it by. */
static int bisect_how(const json_t *j, char **ret)
{
	const json_t *tests = json_object_get(j, "tests");
	size_t i, skipped = 0;
	json_t *t;

	json_array_foreach(tests, i, t)
		skipped += streq_ptr(json_get_str(t, "verdict"), "skip");
	return asprintf(ret, "found by bisection with the reproducer: the first commit that "
			"crashes, between %s and the base (%lld commits); %zu revisions "
			"tested (%zu skipped), each run %lld times", json_get_str(j, "good_from") ?:
			"a good revision", (long long)json_get_int(j, "range", 0),
			json_array_size(tests), skipped,
			(long long)json_get_int(j, "runs_per_revision", 0)) < 0 ? -ENOMEM : 0;
}

static int w_fixes(void *ud, const char *file, unsigned line, char **ret, char **ret_how)
{
	struct pipeline *p = ud;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_free_ char *err = NULL;
	const char *culprit;

	/* a bisected culprit wins over blame, while it is below the base */
	if (p->src.base[0] && bisect_found(p->ctx->store, p->bug->id, &j) >= 0 &&
	    (culprit = json_get_str(j, "culprit")) &&
	    source_open_tree(p->ctx->cfg, p->bug->tree, &t, &err) >= 0 &&
	    tree_is_ancestor(t, culprit, p->src.base) == 1) {
		if (asprintf(ret, "Fixes: %.12s (\"%s\")", culprit,
			     json_get_str(j, "subject") ?: "") < 0)
			return -ENOMEM;
		return bisect_how(j, ret_how);
	}
	return p->inner->fixes_tag(p->inner->ud, file, line, ret, ret_how);
}

static int w_fixed(void *ud, const char *needle, char **ret_commit)
{
	struct pipeline *p = ud;

	return p->inner->already_fixed(p->inner->ud, needle, ret_commit);
}

static int w_recent(void *ud, const char *file, char **ret)
{
	struct pipeline *p = ud;

	return p->inner->recent_subjects(p->inner->ud, file, ret);
}

static int w_compile(void *ud, const char *diff, char **ret_log)
{
	struct pipeline *p = ud;

	return p->inner->compile(p->inner->ud, diff, ret_log);
}

static int w_explore(void *ud, const char *name, const json_t *args, char **ret)
{
	struct pipeline *p = ud;

	return p->inner->explore(p->inner->ud, name, args, ret);
}

int pipeline_prepare(struct pipeline *p, const char *rev)
{
	struct job_ctx *ctx = p->ctx;
	_cleanup_free_ char *err = NULL;
	struct toolstack_opts to;
	int r;

	r = source_lock(ctx->cfg, p->bug->tree, p->jobs.job_timeout_usec, &p->tree_lock);
	if (r < 0)
		return job_fail(ctx, r, "tree %s stayed busy: %s", p->bug->tree, strerror(-r));
	r = source_checkout(ctx->cfg, p->bug->tree, rev, &p->src, &err);
	if (r < 0) {
		ctx->permanent = r == -ENOENT;
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	}
	if (asprintf(&p->scratch, "%s/scratch", p->dir) < 0)
		return -ENOMEM;
	r = mkdir_p(p->scratch, 0755);
	if (r < 0)
		return job_fail(ctx, r, "%s: %s", p->scratch, strerror(-r));
	to = (struct toolstack_opts){ .src = p->src.dir, .commit = p->src.base[0] ? p->src.base : NULL,
				      .scratch = p->scratch, .kconfig = p->kconfig, .repro = p->repro,
				      .cfg = ctx->cfg, .tree = p->bug->tree, .title = p->title };
	r = toolstack_new(&to, &p->ts, &err);
	if (r < 0)
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	p->inner = toolstack_ops(p->ts);
	p->ops = (struct repair_toolstack){
		.ud = p, .read_file = w_read, .apply = w_apply, .build = w_build, .run = w_run,
		.probe = p->inner->probe ? w_probe : NULL,
		.fixes_tag = p->inner->fixes_tag ? w_fixes : NULL,
		.already_fixed = p->inner->already_fixed ? w_fixed : NULL,
		.recent_subjects = p->inner->recent_subjects ? w_recent : NULL,
		.explore = p->inner->explore ? w_explore : NULL,
		.compile = p->inner->compile ? w_compile : NULL,
		.selftests = p->inner->selftests ? w_selftests : NULL,
	};
	p->params.report = p->report;
	p->params.report_len = p->report_len;
	p->params.src_dir = p->src.dir;
	p->params.base_commit = p->src.base[0] ? p->src.base : NULL;
	p->params.have_reproducer = true;
	p->params.out_dir = p->dir;
	return 0;
}

void pipeline_clear(struct pipeline *p)
{
	toolstack_free(p->ts);
	if (p->tree_lock)
		slot_release(p->tree_lock);
	source_clear(&p->src);
	tree_conf_done(&p->tree);
	repair_outcome_clear(&p->cached);
	store_bug_free(p->bug);
	free(p->dir);
	free(p->scratch);
	free(p->report);
	free(p->title);
	free(p->repro);
	free(p->kconfig);
	free(p->prompts_dir);
	free(p->knowledge_base);
}

const struct repair_toolstack *pipeline_ops(struct pipeline *p)
{
	return &p->ops;
}

int pipeline_cache_base(struct pipeline *p, const struct repair_outcome *o)
{
	int r;

	repair_outcome_clear(&p->cached);
	r = outcome_copy(o, &p->cached);
	if (r >= 0)
		p->cache_state = 1;
	return r;
}

int pipeline_test(struct pipeline *p, const char *diff, unsigned runs,
		  struct repair_outcome *ret, bool *ret_built, char **ret_log)
{
	char *log = NULL;
	int r;

	r = p->ops.build(p, diff, &log);
	if (r == -ENOEXEC) {
		*ret_built = false;
		*ret_log = log;
		return 0;
	}
	if (r < 0) {
		_cleanup_free_ char *esc = log ? str_escape(log, strlen(log), 400) : NULL;

		free(log);
		/* no [build]/[vm] or no compiler: a configuration problem */
		p->ctx->permanent = r == -ENOSYS;
		return job_fail(p->ctx, r, "build: %s", esc ? esc : strerror(-r));
	}
	free(log);
	r = p->ops.run(p, runs, ret);
	if (r < 0) {
		p->ctx->permanent = r == -ENOSYS;
		return job_fail(p->ctx, r, "run: %s", strerror(-r));
	}
	*ret_built = true;
	*ret_log = NULL;
	return 0;
}

int pipeline_fail_bug(struct pipeline *p, int r)
{
	struct job_ctx *ctx = p->ctx;

	if (ctx->permanent || ctx->job->attempts >= ctx->job->max_attempts)
		(void)store_bug_set_state(ctx->store, p->bug->id,
					  p->fail_state ? p->fail_state : "gave-up",
					  ctx->error ? ctx->error : strerror(-r));
	return r;
}

bool pipeline_same_crash(const struct pipeline *p, const char *title)
{
	/* the engine's rule: the title syzkaller gives the report, as syzbot
	 * matches titles */
	return report_titles_same(title, p->title);
}

int pipeline_write_json(const char *path, json_t *j)
{
	_cleanup_free_ char *text = NULL;

	if (!j)
		return -ENOMEM;
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		return -ENOMEM;
	return write_file_atomic(path, text, strlen(text), 0644);
}

int pipeline_read_json(const char *path, char **ret)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t jerr;
	size_t len = 0;
	int r;

	r = read_file_bounded(path, OUTCOME_MAX, &text, &len);
	if (r < 0)
		return r;
	if (json_parse_bounded(text, len, OUTCOME_MAX, &j, &jerr) < 0)
		return -EBADMSG;
	*ret = json_dumps(j, JSON_COMPACT);
	return *ret ? 0 : -ENOMEM;
}

int pipeline_outcome_save(const char *path, const struct repair_outcome *o, const char *base)
{
	return pipeline_write_json(path, json_pack("{s:i, s:i, s:i, s:i, s:s?, s:s?, s:s?}",
		"runs", o->runs, "crashed", o->crashed, "survived", o->survived, "infra", o->infra,
		"title", o->title, "base", base && *base ? base : NULL, "log", o->log));
}

int pipeline_outcome_load(const char *path, struct repair_outcome *ret)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct repair_outcome o = {};
	json_error_t jerr;
	size_t len = 0;
	int r;

	r = read_file_bounded(path, OUTCOME_MAX, &text, &len);
	if (r < 0)
		return r;
	if (json_parse_bounded(text, len, OUTCOME_MAX, &j, &jerr) < 0 || !json_is_object(j))
		return -EBADMSG;
	o.runs = (unsigned)json_get_int(j, "runs", 0);
	o.crashed = (unsigned)json_get_int(j, "crashed", 0);
	o.survived = (unsigned)json_get_int(j, "survived", 0);
	o.infra = (unsigned)json_get_int(j, "infra", 0);
	o.title = strdup_safe(json_get_str(j, "title"));
	o.log = strdup_safe(json_get_str(j, "log"));
	*ret = o;
	return 0;
}

char *pipeline_outcome_text(const struct repair_outcome *o)
{
	char *s = NULL;

	if (o->crashed > 0) {
		_cleanup_free_ char *t = o->title ? str_escape(o->title, strlen(o->title), 200) : NULL;

		if (asprintf(&s, "crashed %u of %u: %s", o->crashed, o->runs, t ? t : "?") < 0)
			s = NULL;
	} else if (asprintf(&s, "survived %u of %u", o->survived, o->runs) < 0)
		s = NULL;
	return s;
}
