/* The explanation of a validated repair: commit message with kfix's
 * trailers, the patch file and a report for the maintainer. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"
#include "repair-internal.h"
#include "udiff-internal.h"

#define SUBJECT_MAX 72
#define BODY_WIDTH 75

char *repair_wrap(const char *text, unsigned width)
{
	_cleanup_buf_ struct buf b = BUF_INIT(256 * 1024);
	unsigned col = 0;

	for (const char *p = text; *p;) {
		size_t n;

		if (*p == '\n') {
			/* keep paragraph breaks, join wrapped lines */
			if (p[1] == '\n') {
				(void)buf_puts(&b, "\n\n");
				col = 0;
				p += 2;
				while (*p == '\n')
					p++;
				continue;
			}
			if (p[1] == ' ' || p[1] == '\t' || p[1] == '-' || p[1] == '*') {
				(void)buf_puts(&b, "\n");
				col = 0;
			} else if (col > 0) {
				(void)buf_puts(&b, " ");
				col++;
			}
			p++;
			continue;
		}
		if (*p == ' ' && col == 0 && (b.len == 0 || b.data[b.len - 1] != '\n')) {
			p++;
			continue;
		}
		n = strcspn(p, " \n");
		if (n == 0) {
			p++;
			if (col > 0 && col < width) {
				(void)buf_puts(&b, " ");
				col++;
			}
			continue;
		}
		if (col > 0 && col + n > width) {
			while (b.len > 0 && b.data[b.len - 1] == ' ')
				b.data[--b.len] = '\0';
			(void)buf_puts(&b, "\n");
			col = 0;
		}
		(void)buf_append(&b, p, n);
		col += (unsigned)n;
		p += n;
	}
	while (b.len > 0 && (b.data[b.len - 1] == ' ' || b.data[b.len - 1] == '\n'))
		b.data[--b.len] = '\0';
	return buf_steal(&b, NULL) ?: strdup("");
}

static char *clean_subject(const char *s)
{
	_cleanup_free_ char *one = strndup(s, strcspn(s, "\n"));
	size_t n;

	if (!one)
		return NULL;
	if (startswith(one, "[PATCH] "))
		memmove(one, one + 8, strlen(one + 8) + 1);
	n = strlen(one);
	while (n > 0 && (one[n - 1] == '.' || isspace((unsigned char)one[n - 1])))
		one[--n] = '\0';
	if (n > SUBJECT_MAX) {
		/* cut at a word boundary */
		n = SUBJECT_MAX;
		while (n > 20 && one[n] != ' ')
			n--;
		one[n] = '\0';
	}
	return TAKE_PTR(one);
}

/* The line of the base the patch changes first (for blame). */
static int first_changed_line(const char *diff, char **ret_file, unsigned *ret_line)
{
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;
	const struct udiff_hunk *h;
	unsigned line;

	if (udiff_parse(diff, strlen(diff), &d, &err) < 0 || d->files[0].n_hunks == 0)
		return -ENOENT;
	h = &d->files[0].hunks[0];
	line = h->old_start;
	for (size_t i = 0; i < h->n_lines; i++) {
		if (h->lines[i].kind != ' ')
			break;
		line++;
	}
	*ret_file = strdup(udiff_file_path(&d->files[0]));
	*ret_line = h->lines[0].kind == '+' && line > 1 ? line - 1 : line;
	return *ret_file ? 0 : -ENOMEM;
}

static int commit_message(struct repair_ctx *c, const char *subject, const char *body,
			  const char *diff, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(256 * 1024);
	_cleanup_free_ char *subj = clean_subject(subject), *wrapped = repair_wrap(body, BODY_WIDTH);
	_cleanup_free_ char *file = NULL, *fixes = NULL;
	unsigned line = 0;

	if (!subj || !wrapped)
		return -ENOMEM;
	(void)buf_printf(&b, "%s\n\n%s\n\n", subj, wrapped);
	free(c->fixes_how);
	c->fixes_how = NULL;
	if (c->ts->fixes_tag && first_changed_line(diff, &file, &line) >= 0 &&
	    c->ts->fixes_tag(c->ts->ud, file, line, &fixes, &c->fixes_how) >= 0 &&
	    startswith(fixes, "Fixes: "))
		(void)buf_printf(&b, "%s\n", fixes);
	if (c->extid) {
		(void)buf_printf(&b, "Reported-by: syzbot+%s@syzkaller.appspotmail.com\n", c->extid);
		(void)buf_printf(&b, "Closes: https://syzkaller.appspot.com/bug?extid=%s\n", c->extid);
	}
	(void)buf_printf(&b, "Assisted-by: kfix:%s\n", llm_model(c->llm));
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static int write_out(struct repair_ctx *c, const char *name, const char *text)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/%s", c->p->out_dir, name) < 0)
		return -ENOMEM;
	return write_file_atomic(path, text, strlen(text), 0644);
}

static int write_patch(struct repair_ctx *c, const char *msg, const char *diff)
{
	_cleanup_buf_ struct buf b = BUF_INIT(8 * 1024 * 1024);
	const char *nl = strchr(msg, '\n');

	(void)buf_printf(&b, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
			 "From: kfix <kfix@localhost>\nSubject: [PATCH] %.*s\n%s---\n%s",
			 (int)(nl ? nl - msg : (long)strlen(msg)), msg, nl ? nl + 1 : "\n", diff);
	if (c->p->base_commit)
		(void)buf_printf(&b, "\nbase-commit: %s\n", c->p->base_commit);
	if (b.truncated || !b.data)
		return -E2BIG;
	return write_out(c, "0001-fix.patch", b.data);
}

/* What ran and passed, and what did not run, said plainly: the mail's
 * "Tested" and "Not tested" sections come from here, as lines "- ...". */
static void put_tested(struct buf *b, const struct repair_ctx *c, const struct repair_outcome *base,
		       const struct repair_outcome *patched)
{
	(void)buf_printf(b, "- reproducer: the base kernel crashed in %u of %u runs "
			 "(%s); the patched kernel ran %u of %u without a crash, and the "
			 "reproducer ended without a failure in every run\n",
			 base->crashed, base->runs, base->title ?: "-", patched->survived,
			 patched->runs);
	if (patched->leak_checked)
		(void)buf_printf(b, "- kmemleak: no leak after %u of %u runs on the patched "
				 "kernel\n", patched->leak_checked, patched->runs);
	if (patched->selftests) {
		(void)buf_puts(b, "- kselftests covering the change, on the base and on the patched "
			       "kernel:\n");
		for (const char *l = patched->selftests; *l;) {
			size_t n = strcspn(l, "\n");

			(void)buf_printf(b, "  - %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
	}
	if (c->gates_passed)
		(void)buf_printf(b, "- integrity gates %s\n", c->gates_passed);
	if (c->fixes_how && startswith(c->fixes_how, "found by bisection"))
		(void)buf_printf(b, "- Fixes: %s\n", c->fixes_how);
	if (c->review)
		(void)buf_printf(b, "- review: asked to find a correct caller whose behaviour the "
				 "change alters, the model found none: %s\n", c->review);
}

static void put_not_tested(struct buf *b, const struct repair_ctx *c,
			   const struct repair_outcome *patched)
{
	if (c->fixes_how && !startswith(c->fixes_how, "found by bisection"))
		(void)buf_printf(b, "- Fixes: not bisected; %s\n", c->fixes_how);
	if (!c->review)
		(void)buf_puts(b, "- no review of the change against its callers "
				  "([agent] patch-review = no)\n");
	if (!patched->leak_checked)
		(void)buf_puts(b, "- kmemleak: the kernel under test has none (CONFIG_DEBUG_KMEMLEAK)\n");
	if (!patched->selftests)
		(void)buf_printf(b, "- no kselftests were run: %s\n",
				 patched->selftest_note ?: "none configured");
	(void)buf_puts(b, "- no KUnit suites were run\n"
			  "- no other configurations or architectures\n");
}

static json_t *run_row(const char *kernel, const struct repair_outcome *o)
{
	return json_pack("{s:s, s:i, s:i, s:i, s:s?}", "kernel", kernel, "runs", o->runs,
			 "crashed", o->crashed, "survived", o->survived, "title", o->title);
}

/* The explanation as data, for kfixd's patch record and mail (the
 * Markdown is for people: a title or a model's text with "|" or "## " in
 * it does not survive being read back from it). */
static int write_explanation_json(struct repair_ctx *c, const char *root_cause,
				  const char *evidence, const char *patch_type,
				  const struct repair_outcome *base,
				  const struct repair_outcome *patched, const char *tested,
				  const char *not_tested)
{
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *text = NULL, *bk = NULL;

	if (asprintf(&bk, "base %s", c->p->base_commit ?: "") < 0)
		return -ENOMEM;
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[o, o], s:s, s:s}", "title", c->title,
		      "root_cause", root_cause, "evidence", evidence, "probe_output",
		      c->probe_output ?: "(no probes were run)", "patch_type", patch_type,
		      "reproduction", run_row(bk, base), run_row("patched", patched),
		      "tested", tested, "not_tested", not_tested);
	text = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
	if (!text)
		return -ENOMEM;
	return write_out(c, "explanation.json", text);
}

static int write_explanation(struct repair_ctx *c, const char *msg, const json_t *args,
			     const json_t *hyp, const char *patch_type,
			     const struct repair_outcome *base, const struct repair_outcome *patched,
			     const char *diff)
{
	_cleanup_buf_ struct buf b = BUF_INIT(1024 * 1024), t = BUF_INIT(64 * 1024),
				 nt = BUF_INIT(16 * 1024);
	const char *root = json_get_str(args, "root_cause") ?: json_get_str(hyp, "root_cause") ?: "";
	const char *evidence = json_get_str(hyp, "evidence") ?: "";
	int r;

	put_tested(&t, c, base, patched);
	put_not_tested(&nt, c, patched);
	if (!t.data || !nt.data || t.truncated || nt.truncated)
		return -E2BIG;
	(void)buf_printf(&b, "# %s\n\n## Root cause\n\n%s\n\n", c->title, root);
	(void)buf_printf(&b, "## Evidence\n\n%s\n\nProbe output:\n\n```\n%s\n```\n\n", evidence,
			 c->probe_output ?: "(no probes were run)");
	(void)buf_printf(&b, "## Patch type\n\n%s\n\n", patch_type);
	(void)buf_printf(&b, "## Reproduction\n\n| kernel | runs | crashed | survived | title |\n"
			 "| --- | --- | --- | --- | --- |\n");
	(void)buf_printf(&b, "| base %s | %u | %u | %u | %s |\n", c->p->base_commit ?: "",
			 base->runs, base->crashed, base->survived, base->title ?: "-");
	(void)buf_printf(&b, "| patched | %u | %u | %u | %s |\n\n", patched->runs,
			 patched->crashed, patched->survived, patched->title ?: "-");
	(void)buf_printf(&b, "## Tested\n\n%s\n## Not tested\n\n%s\n", t.data, nt.data);
	(void)buf_printf(&b, "## Commit message\n\n```\n%s```\n\n## Diff\n\n```diff\n%s```\n", msg,
			 diff);
	if (b.truncated || !b.data)
		return -E2BIG;
	r = write_out(c, "explanation.md", b.data);
	if (r < 0)
		return r;
	return write_explanation_json(c, root, evidence, patch_type, base, patched, t.data, nt.data);
}

int repair_explain(struct repair_ctx *c, const char *diff, const json_t *hyp,
		   const char *patch_type, const struct repair_outcome *base,
		   const struct repair_outcome *patched, char **ret_error)
{
	static const char *const tools[] = { "write_explanation", NULL };
	_cleanup_free_ char *tool = NULL, *msg = NULL, *file = NULL, *style = NULL;
	_cleanup_json_ json_t *args = NULL;
	unsigned line;
	int r;

	if (c->ts->recent_subjects && first_changed_line(diff, &file, &line) >= 0)
		(void)c->ts->recent_subjects(c->ts->ud, file, &style);
	repair_set_var(c, "style", style ?: "(no history available)");
	repair_set_var(c, "diff", diff);
	r = repair_ask(c, "explain", "explain", tools, &tool, &args, ret_error);
	if (r < 0)
		return r;
	if (!json_get_str(args, "subject") || !json_get_str(args, "body")) {
		*ret_error = strdup_printf("the explanation lacks a subject or body");
		return -EBADMSG;
	}
	r = commit_message(c, json_get_str(args, "subject"), json_get_str(args, "body"), diff, &msg);
	if (r < 0)
		return r;
	repair_event(c, "explain", "observation", 0, NULL, json_pack("{s:s}", "commit_message", msg),
		     NULL, NULL);
	if ((r = write_out(c, "commit-message.txt", msg)) < 0 ||
	    (r = write_patch(c, msg, diff)) < 0 ||
	    (r = write_explanation(c, msg, args, hyp, patch_type, base, patched, diff)) < 0)
		return r;
	c->sum->commit_message = TAKE_PTR(msg);
	return 0;
}
