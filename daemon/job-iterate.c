#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm.h"
#include "agent/prompt.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "iterate.h"
#include "jobs.h"
#include "store.h"

#define CHANGES_LINES_MAX 8
#define CHANGES_LINE_MAX 300

static bool job_active(struct store *s, int64_t bug)
{
	static const char *const kinds[] = { "reproduce", "repair", "iterate", "publish",
					     "retest", NULL };

	/* an error counts as busy */
	return store_job_busy(s, bug, kinds) != 0;
}

/* The bug's newest finished reproduce job, or 0. */
static int last_reproduce_job(struct store *s, int64_t bug)
{
	struct store_job **jobs = NULL;
	int64_t id = 0;
	size_t n = 0;

	if (store_job_list(s, "done", bug, 0, &jobs, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (streq(jobs[i]->kind, "reproduce") && jobs[i]->id > id)
			id = jobs[i]->id;
	store_job_list_free(jobs, n);
	return id > INT32_MAX ? 0 : (int)id;
}

int iterate_queue(struct store *s, int64_t bug, const char *reason, const char *by,
		  int priority, int max_attempts)
{
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	_cleanup_free_ char *args = NULL, *why = NULL;
	struct store_patch **ps = NULL;
	int64_t patch = 0, job = 0;
	int version = 0, claimed = 0;
	size_t n = 0;
	json_t *j;
	int r;

	r = store_bug_get(s, bug, &b);
	if (r < 0)
		return r;
	if (!streq(b->state, "awaiting-approval") && !streq(b->state, "sent"))
		return -ENOENT;
	if (job_active(s, bug))
		return -EBUSY;
	r = store_patch_list(s, NULL, bug, 0, &ps, &n);
	if (r >= 0 && n > 0) {
		patch = ps[n - 1]->id;
		version = ps[n - 1]->version;
	}
	store_patch_list_free(ps, n);
	if (r < 0)
		return r;
	if (patch == 0)
		return -ENOENT;
	j = json_pack("{s:I, s:s, s:s, s:s?}", "patch", (json_int_t)patch, "return_state",
		      b->state, "reason", reason, "by", by);
	/* the base outcome measured for the first repair serves again */
	if (j && (r = last_reproduce_job(s, bug)) > 0)
		json_object_set_new(j, "reproduce-job", json_integer(r));
	args = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!args || asprintf(&why, "a new version of v%d (%s)", version, reason) < 0)
		return -ENOMEM;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = store_job_add(s, bug, "iterate", args, priority, max_attempts, &job);
	if (r >= 0)
		r = store_review_claim(s, bug, job, &claimed);
	if (r >= 0)
		r = store_bug_set_state(s, bug, "repairing", why);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	return store_commit(s);
}

const char *iterate_return_state(struct store *s, int64_t bug)
{
	struct store_patch **ps = NULL;
	const char *state = "awaiting-approval";
	bool sent = false, open = false;
	size_t n = 0;

	if (store_patch_list(s, NULL, bug, 0, &ps, &n) >= 0)
		for (size_t i = 0; i < n; i++) {
			sent |= streq(ps[i]->state, "sent");
			open |= streq(ps[i]->state, "awaiting-approval") ||
				streq(ps[i]->state, "approved") || streq(ps[i]->state, "held");
		}
	store_patch_list_free(ps, n);
	if (sent && !open)
		state = "sent";
	return state;
}

void iterate_clear(struct iterate *it)
{
	free(it->previous_diff);
	free(it->return_state);
	free(it->comments);
	free(it->reviewers);
	free(it->prompt);
}

/* The comments the job took, oldest first, each under its author. */
static int comments_load(struct job_ctx *ctx, struct iterate *it)
{
	_cleanup_buf_ struct buf b = BUF_INIT(ITERATE_COMMENTS_MAX);
	_cleanup_buf_ struct buf who = BUF_INIT(4096);
	struct store_review **vs = NULL;
	size_t n = 0;
	int r = store_review_list(ctx->store, 0, 0, ctx->job->id, &vs, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (!vs[i]->comments)
			continue;
		/* what does not fit waits for no one: the newest are cut */
		if (buf_printf(&b, "From %s:\n%s\n", vs[i]->author, vs[i]->comments) < 0)
			break;
		if (!strstr(who.data ? who.data : "", vs[i]->author))
			(void)buf_printf(&who, "%s%s", who.len ? ", " : "", vs[i]->author);
	}
	store_review_list_free(vs, n);
	if (r < 0)
		return r;
	it->comments = b.len ? buf_steal(&b, NULL) : strdup("(none)");
	it->reviewers = who.len ? buf_steal(&who, NULL) : strdup("");
	return it->comments && it->reviewers ? 0 : -ENOMEM;
}

int iterate_load(struct job_ctx *ctx, const char *prompts_dir, struct iterate *ret)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_json_ json_t *args = NULL, *vars = NULL;
	_cleanup_free_ char *request = NULL;
	struct iterate it = {};
	json_error_t jerr;
	const char *by, *reason;
	char v[16], pv[16];
	int r;

	if (!ctx->job->args ||
	    json_parse_bounded(ctx->job->args, strlen(ctx->job->args), 4096, &args, &jerr) < 0 ||
	    (it.previous = json_get_int(args, "patch", 0)) <= 0) {
		ctx->permanent = true;
		return job_fail(ctx, -EINVAL, "iterate job without {\"patch\"}");
	}
	r = store_patch_get(ctx->store, it.previous, &p);
	if (r < 0)
		return job_fail(ctx, r, "patch %lld: %s", (long long)it.previous, strerror(-r));
	it.previous_version = p->version;
	it.previous_diff = strdup(p->diff);
	it.return_state = strdup(iterate_return_state(ctx->store, p->bug_id));
	r = it.previous_diff && it.return_state ? comments_load(ctx, &it) : -ENOMEM;
	by = json_get_str(args, "by");
	reason = json_get_str(args, "reason") ?: "review";
	if (r >= 0 && streq(reason, "request") &&
	    asprintf(&request, "%s asked for a new version (#kfix repair).\n", by ?: "A moderator") < 0)
		r = -ENOMEM;
	if (r >= 0 && streq(reason, "request") && !*it.reviewers) {
		free(it.reviewers);
		it.reviewers = strdup(by ?: "a moderator");
	}
	snprintf(v, sizeof(v), "%d", p->version + 1);
	snprintf(pv, sizeof(pv), "%d", p->version);
	vars = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "version", v, "previous_version", pv,
			 "request", request ?: "", "previous_diff", p->diff, "previous_message",
			 p->message ?: "", "comments", it.comments ?: "");
	if (r >= 0 && !vars)
		r = -ENOMEM;
	if (r >= 0)
		r = prompt_render(prompts_dir, "iterate", vars, &it.prompt);
	/* on failure too: the caller puts the bug back (return_state) */
	*ret = it;
	if (r < 0)
		return job_fail(ctx, r, "preparing the new version: %s", strerror(-r));
	return 0;
}

/* The model's "- " lines, bounded, one line of text each. */
static int changes_from_text(const char *text, struct buf *out)
{
	unsigned lines = 0;

	for (const char *l = text; l && *l && lines < CHANGES_LINES_MAX;) {
		size_t n = strcspn(l, "\n");

		while (n > 0 && (l[n - 1] == ' ' || l[n - 1] == '\r'))
			n--;
		if (n > 2 && startswith(l, "- ")) {
			char line[CHANGES_LINE_MAX + 1];

			snprintf(line, sizeof(line), "%.*s", (int)n, l);
			for (char *c = line; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = ' ';
			if (buf_printf(out, "%s\n", line) < 0)
				return -E2BIG;
			lines++;
		}
		l += strcspn(l, "\n");
		if (*l)
			l++;
	}
	return (int)lines;
}

int iterate_changes(struct llm *llm, const struct iterate *it, const char *prompts_dir,
		    const char *diff, char **ret)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_json_ json_t *vars = NULL, *req = NULL;
	_cleanup_free_ char *prompt = NULL, *err = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(16 * 1024);
	char v[16], pv[16];
	int r, n = 0;

	snprintf(v, sizeof(v), "%d", it->previous_version + 1);
	snprintf(pv, sizeof(pv), "%d", it->previous_version);
	vars = json_pack("{s:s, s:s, s:s, s:s, s:s}", "version", v, "previous_version", pv,
			 "previous_diff", it->previous_diff, "diff", diff, "comments", it->comments);
	if (!vars)
		return -ENOMEM;
	r = prompt_render(prompts_dir, "changes", vars, &prompt);
	if (r < 0)
		return r;
	req = json_pack("{s:[{s:s, s:s}]}", "messages", "role", "user", "content", prompt);
	if (!req)
		return -ENOMEM;
	/* a model that cannot answer leaves the derived lines: no failure */
	if (llm_chat(llm, req, &resp, &err) >= 0 && resp->text)
		n = changes_from_text(resp->text, &b);
	if (n < 0)
		return n;
	if (n == 0 && buf_printf(&b, "- Revised after the comments of %s on v%d.\n",
				 *it->reviewers ? it->reviewers : "the reviewers",
				 it->previous_version) < 0)
		return -E2BIG;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}
