/* The compare job: once the fix the developers landed for a bug kfix
 * patched is known (syzbot's fix commit, or the bug's syzbot id in the
 * watched branch's log), it is compared with kfix's newest patch version
 * (agent/fixcompare.h), the result is recorded as an event "upstream.fix"
 * with the bug, the bug becomes already-fixed, and the knowledge base
 * learns the real fix as the bug's lesson.  Not finding the fix yet is a
 * result too ({"found": false}): the next check looks again. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/fixcompare.h"
#include "agent/kb.h"
#include "common/buf.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "jobs.h"
#include "source.h"
#include "store.h"

#define STEP_DONE "recorded"
#define COMPARE_FETCH_TIMEOUT (600ull * 1000000)
#define COMPARE_WALK_MAX 200000 /* commits of the branch searched for the id */
#define COMPARE_ROOT_CAUSE_MAX 600

struct fix {
	char oid[TREE_OID_HEX];
	char *subject, *author, *body;
	char *diff;
};

static void fix_clear(struct fix *f)
{
	free(f->subject);
	free(f->author);
	free(f->body);
	free(f->diff);
}

struct old_reader {
	struct tree *t;
	const char *rev;
};

static int read_old(void *ud, const char *path, char **ret, size_t *ret_len)
{
	const struct old_reader *o = ud;

	return o->rev && *o->rev ? tree_read_file(o->t, o->rev, path, 0, ret, ret_len) : -ENOENT;
}

static int on_commit(const struct tree_commit_info *ci, void *userdata)
{
	struct fix *f = userdata;
	const char *body = ci->message ? strchr(ci->message, '\n') : NULL, *end;

	f->subject = strdup(ci->subject ? ci->subject : "");
	if (asprintf(&f->author, "%s <%s>", ci->author_name ? ci->author_name : "",
		     ci->author_email ? ci->author_email : "") < 0)
		f->author = NULL;
	/* the explanation: the body's first paragraph */
	body = body ? body + strspn(body, "\n") : "";
	end = strstr(body, "\n\n");
	f->body = strndup(body, MIN(end ? (size_t)(end - body) : strlen(body),
				    (size_t)COMPARE_ROOT_CAUSE_MAX));
	return 1;
}

static int fix_load(struct tree *t, struct fix *f)
{
	int r = tree_commit_show(t, f->oid, on_commit, f);

	if (r < 0)
		return r;
	if (!f->subject || !f->author || !f->body)
		return -ENOMEM;
	return tree_diff_commits(t, NULL, f->oid, 0, &f->diff, NULL);
}

/* Looks for the fix: the commit syzbot named, else a commit of the
 * watched branch that names the bug's syzbot id (Reported-by, Closes). */
static int fix_find(struct tree *t, const struct store_bug *b, const char *commit,
		    const char *head, struct fix *f)
{
	int r;

	/* syzbot's commit may be in another tree: then the log may still
	 * hold a commit naming the bug */
	if (commit) {
		r = tree_resolve(t, commit, f->oid);
		if (r != -ENOENT)
			return r < 0 ? r : 1;
	}
	if (!b->source || !streq(b->source, "syzbot") || !b->source_id || !*b->source_id)
		return 0;
	return tree_log_grep(t, head, b->source_id, COMPARE_WALK_MAX, f->oid);
}

static int open_tree(struct job_ctx *ctx, const struct store_bug *b, const struct tree_conf *tc,
		     struct tree **ret_t, const char **ret_head)
{
	_cleanup_free_ char *err = NULL;
	int r;

	r = source_open_tree(ctx->cfg, b->tree, ret_t, &err);
	if (r < 0) {
		ctx->permanent = r == -ENOENT || r == -ENOTSUP;
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	}
	if (tc->path) {
		*ret_head = "HEAD";
		return 0;
	}
	*ret_head = tc->branch;
	r = tree_fetch(*ret_t, NULL, COMPARE_FETCH_TIMEOUT, NULL, NULL);
	return r < 0 ? job_fail(ctx, r, "tree %s: fetch: %s", b->tree, tree_error(*ret_t)) : 0;
}

static int newest_patch(struct store *s, int64_t bug, struct store_patch **ret)
{
	struct store_patch **ps = NULL;
	size_t n = 0, best = 0;
	int r = store_patch_list(s, NULL, bug, 0, &ps, &n);

	if (r >= 0 && n == 0)
		r = -ENOENT;
	if (r >= 0) {
		for (size_t i = 1; i < n; i++)
			if (ps[i]->version > ps[best]->version)
				best = i;
		*ret = ps[best];
		ps[best] = NULL;
	}
	store_patch_list_free(ps, n);
	return r;
}

static void join_names(struct buf *b, const json_t *a)
{
	size_t i, n = json_array_size(a);
	json_t *v;

	if (n == 0) {
		(void)buf_puts(b, "nothing kfix could place");
		return;
	}
	json_array_foreach(a, i, v) {
		if (i == 4) {
			(void)buf_printf(b, " and %zu more", n - i);
			break;
		}
		(void)buf_printf(b, "%s%s", i ? ", " : "", json_string_value(v));
	}
}

static char *lesson_text(const struct fix *f, const json_t *cmp)
{
	_cleanup_buf_ struct buf b = BUF_INIT(4096);
	const json_t *funcs = json_object_get(cmp, "functions");
	const char *v = json_get_str(cmp, "verdict");

	(void)buf_printf(&b, "The fix that landed, %.12s (\"%s\"), changes ", f->oid, f->subject);
	join_names(&b, json_object_get(funcs, "developer"));
	(void)buf_printf(&b, "; kfix's patch changed ");
	join_names(&b, json_object_get(funcs, "kfix"));
	(void)buf_printf(&b, " (%s, similarity %.2f).", v ? v : "?",
			 json_real_value(json_object_get(cmp, "similarity")));
	if (*f->body)
		(void)buf_printf(&b, " The developers' reason: %s", f->body);
	return buf_steal(&b, NULL);
}

/* [agent] knowledge-base, else the one in the state folder. */
static int compare_kb_from_config(const struct config *cfg, char **ret)
{
	if (config_get_path(cfg, "agent", NULL, "knowledge-base", ret) >= 0)
		return 0;
	return config_state_path(cfg, STATE_KNOWLEDGE, ret) < 0 ? -ENOMEM : 0;
}

static int learn(const char *kb, const struct store_bug *b, const struct fix *f,
		 const json_t *cmp)
{
	_cleanup_free_ char *lesson = lesson_text(f, cmp), *sub = NULL;
	_cleanup_json_ json_t *up = NULL, *fallback = NULL;
	const json_t *dev_files = json_object_get(json_object_get(cmp, "files"), "developer");

	sub = kb_subsystem_of(json_string_value(json_array_get(dev_files, 0)));
	up = json_pack("{s:s, s:s, s:O?, s:O?, s:O?, s:O?}", "commit", f->oid, "subject", f->subject,
		       "verdict", json_object_get(cmp, "verdict"), "similarity",
		       json_object_get(cmp, "similarity"), "files", dev_files, "functions",
		       json_object_get(json_object_get(cmp, "functions"), "developer"));
	fallback = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s}", "time", (json_int_t)time(NULL),
			     "title", b->title, "type", "", "subsystem", sub ? sub : "", "outcome",
			     "fixed-upstream", "root_cause", f->body);
	if (!lesson || !up || !fallback)
		return -ENOMEM;
	return kb_amend(kb, b->title, up, lesson, fallback);
}

static int record(struct job_ctx *ctx, const struct store_bug *b, json_t *detail)
{
	static const char *const open_states[] = { "validated", "awaiting-approval", "sent", NULL };
	_cleanup_free_ char *why = NULL;
	int r;

	if (asprintf(&why, "its fix landed: %.12s (%s)", json_get_str(detail, "commit"),
		     json_get_str(detail, "subject")) < 0)
		return -ENOMEM;
	r = store_begin(ctx->store);
	if (r < 0)
		return r;
	r = store_event_add_json(ctx->store, b->id, ctx->job->id, "upstream.fix", json_incref(detail));
	if (r >= 0 && strv_contains((char *const *)open_states, b->state))
		r = store_bug_set_state(ctx->store, b->id, "already-fixed", why);
	if (r >= 0)
		r = job_step_done(ctx, STEP_DONE);
	if (r < 0) {
		store_rollback(ctx->store);
		return job_fail(ctx, r, "recording the comparison: %s", store_errmsg(ctx->store));
	}
	return store_commit(ctx->store);
}

static int compare(struct job_ctx *ctx, const char *kb, struct tree *t,
		   const struct store_bug *b, const struct store_patch *p, struct fix *f,
		   const char *by)
{
	struct old_reader ko = { t, p->base_commit }, dO = { t, NULL };
	_cleanup_free_ char *parent = NULL, *err = NULL;
	_cleanup_json_ json_t *cmp = NULL, *what = NULL;
	struct fixcompare_side ks = { .diff = p->diff, .read_old = read_old, .ud = &ko };
	struct fixcompare_side ds = { .diff = f->diff, .read_old = read_old, .ud = &dO };
	int r;

	if (asprintf(&parent, "%s^", f->oid) < 0)
		return -ENOMEM;
	dO.rev = parent;
	r = fixcompare_diffs(&ks, &ds, &cmp, &err);
	if (r < 0)
		return job_fail(ctx, r, "comparing with %.12s: %s", f->oid, err ? err : strerror(-r));
	what = json_pack("{s:s, s:s, s:s, s:s, s:I, s:i}", "commit", f->oid, "subject", f->subject,
			 "author", f->author, "found_by", by, "patch", (json_int_t)p->id, "version",
			 p->version);
	if (!what || json_object_update(cmp, what) < 0)
		return -ENOMEM;
	log_info("bug %lld: the fix that landed, %.12s, against patch v%d: %s", (long long)b->id,
		 f->oid, p->version, json_get_str(cmp, "verdict"));
	r = learn(kb, b, f, cmp);
	if (r < 0)
		return job_fail(ctx, r, "amending the knowledge base: %s", strerror(-r));
	r = record(ctx, b, cmp);
	if (r < 0)
		return r;
	ctx->result = json_dumps(cmp, JSON_COMPACT);
	return ctx->result ? 0 : -ENOMEM;
}

static int job_compare_run(struct job_ctx *ctx)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_(fix_clear) struct fix f = {};
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_json_ json_t *args = NULL;
	_cleanup_free_ char *err = NULL, *kb = NULL;
	const char *head = NULL, *by;
	json_error_t jerr;
	int r;

	if (ctx->job->args &&
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 65536, &args, &jerr) < 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "compare job with bad arguments");
	}
	by = json_get_str(args, "by") ?: "request";
	r = store_bug_get(ctx->store, ctx->job->bug_id, &b);
	if (r >= 0)
		r = newest_patch(ctx->store, b->id, &p);
	if (r < 0) {
		ctx->permanent = r == -ENOENT;
		return job_fail(ctx, r, "bug %lld: %s", (long long)ctx->job->bug_id,
				r == -ENOENT ? "no kfix patch to compare" : strerror(-r));
	}
	if (job_step_passed(ctx, STEP_DONE))
		return (ctx->result = strdup("{\"recorded\": true}")) ? 0 : -ENOMEM;
	r = tree_conf_from_config(ctx->cfg, b->tree, &tc, &err);
	if (r >= 0)
		r = compare_kb_from_config(ctx->cfg, &kb);
	if (r < 0)
		return job_fail(ctx, r, "%s", err ? err : strerror(-r));
	r = open_tree(ctx, b, &tc, &t, &head);
	if (r < 0)
		return r;
	r = fix_find(t, b, json_get_str(args, "commit"), head, &f);
	if (r < 0)
		return job_fail(ctx, r, "looking for the fix: %s", tree_error(t));
	if (r == 0) {
		_cleanup_json_ json_t *none = json_pack("{s:b, s:s}", "found", 0, "searched", head);

		ctx->result = none ? json_dumps(none, JSON_COMPACT) : NULL;
		return ctx->result ? 0 : -ENOMEM;
	}
	r = fix_load(t, &f);
	if (r < 0)
		return job_fail(ctx, r, "reading %.12s: %s", f.oid, tree_error(t));
	return compare(ctx, kb, t, b, p, &f, by);
}

const struct job_kind job_kind_compare = {
	.name = "compare",
	.run = job_compare_run,
	.doc = "compares kfix's patch with the fix that landed for the bug and learns it "
		"(event upstream.fix, knowledge base)",
};
