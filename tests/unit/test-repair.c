/* The repair engine's logic with a scripted toolstack and a scripted
 * model: probes, hypotheses, a cheating patch rejected by a gate, a wrong
 * patch failing validation and reflected on, the right one validated,
 * minimised and explained; the guards that end a hopeless search; the
 * search tree, knowledge base, trajectory and wrapping helpers. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/diagnose.h"
#include "agent/edits.h"
#include "agent/kb.h"
#include "agent/llm.h"
#include "agent/repair-internal.h"
#include "agent/repair.h"
#include "agent/search.h"
#include "agent/toolstack.h"
#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "repro/report.h"

static char tree[] = "/tmp/kfix-test-repair.XXXXXX";
#define SERVER_TMPDIR tree
#include "llm-server.h"

static const char foo_c[] =
	"// SPDX-License-Identifier: GPL-2.0\n"
	"#include <linux/slab.h>\n"
	"\n"
	"static int foo_count(struct foo *f)\n"
	"{\n"
	"\treturn f->n;\n"
	"}\n"
	"\n"
	"int foo_release(struct foo *f)\n"
	"{\n"
	"\tstruct foo_item *it;\n"
	"\tint n;\n"
	"\n"
	"\tWARN_ON(!f->owner);\n"
	"\tit = f->items;\n"
	"\tn = foo_count(f);\n"
	"\twhile (it) {\n"
	"\t\tstruct foo_item *next = it->next;\n"
	"\n"
	"\t\tkfree(it);\n"
	"\t\tit = next;\n"
	"\t}\n"
	"\treturn n;\n"
	"}\n";

#define TITLE "KASAN: slab-use-after-free Read in foo_release"
static const char report[] =
	"Reported-by: syzbot+0123456789abcdef01234567@syzkaller.appspotmail.com\n"
	"BUG: KASAN: slab-use-after-free in foo_release+0x1a/0x80 net/foo/foo.c:17\n"
	"Read of size 8 at addr ffff888012345678 by task syz-executor/1234\n"
	"\n"
	"CPU: 0 PID: 1234 Comm: syz-executor Not tainted 6.1.0 #1\n"
	"Call Trace:\n"
	" <TASK>\n"
	" __dump_stack lib/dump_stack.c:88 [inline]\n"
	" dump_stack_lvl+0x10/0x20 lib/dump_stack.c:106\n"
	" kasan_report+0x10/0x20 mm/kasan/report.c:588\n"
	" foo_release+0x1a/0x80 net/foo/foo.c:17\n"
	" foo_put+0x10/0x20 net/foo/foo.c:30\n"
	" </TASK>\n";

/* --- scripted toolstack ------------------------------------------------- */

struct ts {
	char *built;	/* diff of the last build, NULL for base */
	int builds, runs, probes;
	int base_builds;	/* builds without a diff */
	bool always_crash;
};

static int ts_read(void *ud, const char *path, char **ret, size_t *ret_len)
{
	char full[512];

	snprintf(full, sizeof(full), "%s/%s", tree, path);
	return read_file_bounded(full, 1 << 24, ret, ret_len);
}

static int ts_apply(void *ud, const json_t *edits, char **ret_diff, char **ret_error)
{
	return edits_apply(tree, edits, ret_diff, ret_error);
}

static int ts_build(void *ud, const char *diff, char **ret_log)
{
	struct ts *t = ud;

	t->builds++;
	t->base_builds += !diff;
	free(t->built);
	t->built = diff ? strdup(diff) : NULL;
	if (diff && strstr(diff, "BROKEN")) {
		*ret_log = strdup("net/foo/foo.c:12:2: error: 'BROKEN' undeclared");
		return -ENOEXEC;
	}
	*ret_log = strdup("  CC      net/foo/foo.o\n  LD      vmlinux\n");
	return 0;
}

static int ts_run(void *ud, unsigned runs, struct repair_outcome *ret)
{
	struct ts *t = ud;
	bool fixed = t->built && strstr(t->built, "+\tf->items = NULL;") && !t->always_crash;

	t->runs++;
	ret->runs = runs;
	if (fixed) {
		ret->survived = runs;
		ret->log = strdup("syz-executor: all runs finished\n");
		return 0;
	}
	ret->crashed = runs;
	ret->title = strdup(TITLE);
	if (t->built && strstr(t->built, "kfix-probe")) {
		t->probes++;
		/* a printk line with a pr_fmt prefix, a trace line read back and
		 * one an oops dumped: the model is shown each without what varies */
		ret->log = strdup("[ 5.1] kfix-probe f=ffff8880 items=ffff8881 (second call)\n"
				  "[ 5.1] foo: kfix-probe pfx=1\n"
				  "  kfix-rep-52   [000] .....   4.801234: foo_release: kfix-probe rb=1\n"
				  "[ 5.2] <...>-49 0..... 140009us : foo_release: kfix-probe dump=1\n"
				  "[ 5.2] BUG: KASAN: slab-use-after-free in foo_release\n");
	} else
		ret->log = strdup(report);
	return 0;
}

static int ts_fixes(void *ud, const char *file, unsigned line, char **ret, char **ret_how)
{
	assert_true(streq(file, "net/foo/foo.c") || streq(file, "net/foo/bar.c"));
	*ret = strdup("Fixes: 0123456789ab (\"net: foo: add foo_release()\")");
	*ret_how = strdup("found by bisection: 3 revisions tested");
	return 0;
}

static int ts_fixed(void *ud, const char *needle, char **ret_commit)
{
	assert_non_null(strstr(needle, "syzbot+0123456789abcdef01234567@"));
	return 0;
}

static const struct repair_toolstack toolstack = {
	.read_file = ts_read, .apply = ts_apply, .build = ts_build, .run = ts_run,
	.fixes_tag = ts_fixes, .already_fixed = ts_fixed,
};

/* --- scripted model -------------------------------------------------------- */

enum plan { PLAN_STORY, PLAN_HOPELESS, PLAN_SAME_PATCH, PLAN_SECOND_HYPOTHESIS,
	    PLAN_REVIEW_REJECTS, PLAN_LOCATIONS, PLAN_WRONG_FILE };

struct model {
	enum plan plan;
	int locations, patches, reflections, distils, reviews;
	int tokens;
	bool reject_minimised;	/* the review rejects the patch without the comment hunk */
	int saw_review_in_feedback;
	const char *knowledge;	/* text every system prompt must hold */
	int saw_knowledge;
	/* PLAN_LOCATIONS: the places each patch was asked at, and whether
	 * the last refinement was shown the patch it rolled back to */
	char asked[64];
	bool refined_best;
	/* every main tool the model was asked for, in order (one letter each:
	 * l localise, p probes, h hypotheses, r rank, P patch, v review, ...) */
	char calls[256];
};

static json_t *tool(const char *name, json_t *args, int tokens)
{
	return json_pack("{s:[{s:s, s:s, s:o}], s:i, s:i}", "tool_calls", "id", "c1",
			 "name", name, "arguments", args, "input_tokens", tokens,
			 "output_tokens", tokens / 10);
}

static json_t *edit(const char *before, const char *after)
{
	return json_pack("[{s:s, s:s, s:s, s:s}]", "file", "net/foo/foo.c", "before", before,
			 "after", after, "why", "test");
}

static json_t *patch_for(struct model *m)
{
	int n = ++m->patches;

	if (m->plan == PLAN_SECOND_HYPOTHESIS && n == 1)	/* under the first: wrong */
		return edit("\tn = foo_count(f);\n", "\tn = foo_count(f);\n\tif (!n)\n\t\treturn 0;\n");
	if (m->plan == PLAN_SECOND_HYPOTHESIS)	/* under the second: the fix */
		return edit("\t\tit = next;\n\t}\n", "\t\tit = next;\n\t}\n\tf->items = NULL;\n");
	if (m->plan == PLAN_REVIEW_REJECTS && n == 1)	/* stops the crash, breaks the count */
		return edit("\t\tit = next;\n\t}\n\treturn n;\n",
			    "\t\tit = next;\n\t}\n\tf->items = NULL;\n\treturn 0;\n");
	if (m->plan == PLAN_REVIEW_REJECTS)
		return edit("\t\tit = next;\n\t}\n", "\t\tit = next;\n\t}\n\tf->items = NULL;\n");
	if (m->plan == PLAN_SAME_PATCH)
		return edit("\tn = foo_count(f);\n", "\tn = foo_count(f);\n\tif (!n)\n\t\treturn 0;\n");
	if (m->plan == PLAN_HOPELESS) {
		char after[128];

		snprintf(after, sizeof(after), "\tn = foo_count(f);\n\tn += %d;\n", n);
		return edit("\tn = foo_count(f);\n", after);
	}
	switch (n) {
	case 1: /* the cheat: silence the warning */
		return edit("\tWARN_ON(!f->owner);\n", "");
	case 2: /* plausible but wrong */
		return edit("\tn = foo_count(f);\n", "\tn = foo_count(f);\n\tif (!n)\n\t\treturn 0;\n");
	default: { /* the fix plus a hunk it does not need */
		json_t *e = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]",
			"file", "net/foo/foo.c", "before", "\treturn f->n;\n",
			"after", "\treturn f->n; /* number of items */\n",
			"file", "net/foo/foo.c", "before", "\t\tit = next;\n\t}\n",
			"after", "\t\tit = next;\n\t}\n\tf->items = NULL;\n");
		return e;
	}
	}
}

/* Two places: foo_release(), where the list is freed, and foo_count().
 * Round 1 asks a candidate at each: at the first the count check (same
 * crash), at the second one that does not build; the selector keeps the
 * first line.  Its refinement does not build either, so the next one
 * rolls back to the count check, and the fix validates. */
static bool locations_plan(struct model *m, const char *name, const char *user, int tok,
			   json_t **ret)
{
	if (streq(name, "propose_location")) {
		if (m->locations++ == 2) {
			*ret = tool("no_more_locations", json_pack("{s:s}", "reason", "none"), tok);
			return true;
		}
		*ret = tool("propose_location", m->locations == 1 ?
			json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", "net/foo/foo.c", "function",
				  "foo_release", "start_line", 9, "end_line", 24, "reason", "frees") :
			json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", "net/foo/foo.c", "function",
				  "foo_count", "start_line", 4, "end_line", 7, "reason", "counts"), tok);
		return true;
	}
	if (streq(name, "state_hypotheses")) {
		*ret = tool("state_hypotheses", json_pack("{s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, {s:s, s:s, s:i}]}",
			"hypotheses",
			"root_cause", "the list head stays pointing at freed items", "evidence",
			"the probe shows items set after the free",
			"location", 1,
			"root_cause", "the count is read from freed memory", "evidence",
			"the report reads f->n",
			"location", 2,
			"root_cause", "the owner is not checked", "evidence", "none", "location", 1), tok);
		return true;
	}
	if (streq(name, "propose_patch")) {
		size_t n = strlen(m->asked);
		json_t *e;

		snprintf(m->asked + n, sizeof(m->asked) - n, "%s",
			 strstr(user, "at location 2: net/foo/foo.c: foo_count() lines 4-7") ? "2" :
			 strstr(user, "at location 1: net/foo/foo.c: foo_release() lines 9-24") ? "1" : "?");
		switch (++m->patches) {
		case 1:
			e = edit("\tn = foo_count(f);\n", "\tn = foo_count(f);\n\tif (!n)\n\t\treturn 0;\n");
			break;
		case 2:
			e = edit("\treturn f->n;\n", "\treturn f->n + BROKEN;\n");
			break;
		case 3:
			assert_non_null(strstr(user, "Refine this earlier patch, which ended same-crash"));
			e = edit("\tn = foo_count(f);\n", "\tn = foo_count(f);\n\tif (!n)\n\t\treturn BROKEN;\n");
			break;
		default: {
			/* the patch shown to refine, up to the code that follows it */
			const char *r = strstr(user, "Refine this earlier patch, which ended same-crash");
			const char *end = r ? strstr(r, "\nCode:\n") : NULL;
			_cleanup_free_ char *shown = end ? strndup(r, (size_t)(end - r)) : NULL;

			m->refined_best = shown && strstr(shown, "+\t\treturn 0;") &&
					  !strstr(shown, "BROKEN");
		}
			e = edit("\t\tit = next;\n\t}\n", "\t\tit = next;\n\t}\n\tf->items = NULL;\n");
		}
		*ret = tool("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
							"edits", e), tok);
		return true;
	}
	if (streq(name, "reflect")) {
		m->reflections++;
		*ret = tool("reflect", json_pack("{s:s, s:[], s:s}", "analysis", "not yet",
						 "lessons", "next", "refine"), tok);
		return true;
	}
	return false;
}

/* The fix belongs in net/foo/bar.c, where foo_put() must clear the list
 * after foo_release(); the model keeps to foo.c until a directive names
 * bar.c. */
static const char bar_c[] =
	"// SPDX-License-Identifier: GPL-2.0\n"
	"#include <linux/slab.h>\n"
	"\n"
	"void foo_put(struct foo *f)\n"
	"{\n"
	"\tfoo_release(f);\n"
	"}\n";

static bool wrong_file_plan(struct model *m, const char *name, const char *user, int tok,
			    json_t **ret)
{
	bool told = strstr(user, "The fix is expected in net/foo/bar.c") != NULL;

	if (streq(name, "propose_location")) {
		if (m->locations++ == 1) {
			*ret = tool("no_more_locations", json_pack("{s:s}", "reason", "none"), tok);
			return true;
		}
		*ret = tool("propose_location", told ?
			json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", "net/foo/bar.c", "function",
				  "foo_put", "start_line", 4, "end_line", 7, "reason", "releases") :
			json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", "net/foo/foo.c", "function",
				  "foo_count", "start_line", 4, "end_line", 7, "reason", "counts"), tok);
		return true;
	}
	if (streq(name, "propose_patch")) {
		char after[128];

		m->patches++;
		if (told || strstr(user, "net/foo/bar.c")) {
			*ret = tool("propose_patch", json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}]}", "patch_type",
				"root-cause fix", "edits", "file", "net/foo/bar.c", "before", "\tfoo_release(f);\n",
				"after", "\tfoo_release(f);\n\tf->items = NULL;\n", "why", "the directive"), tok);
			return true;
		}
		snprintf(after, sizeof(after), "\treturn f->n + %d;\n", m->patches);
		*ret = tool("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
						       "edits", edit("\treturn f->n;\n", after)), tok);
		return true;
	}
	return false;
}

static int model_fn(void *ud, const json_t *req, json_t **ret)
{
	struct model *m = ud;
	const char *name = json_get_str(json_array_get(json_object_get(req, "tools"), 0), "name");
	const char *user = json_get_str(json_array_get(json_object_get(req, "messages"), 0), "content");
	int tok = m->tokens;

	assert_non_null(name);
	assert_non_null(strstr(json_get_str(req, "system"), "kernel"));
	if (m->knowledge && strstr(json_get_str(req, "system"), m->knowledge))
		m->saw_knowledge++;
	{
		size_t n = strlen(m->calls);

		if (n + 1 < sizeof(m->calls))
			m->calls[n] = streq(name, "propose_location") ? 'l' : streq(name, "request_probes") ? 'p' :
				      streq(name, "state_hypotheses") ? 'h' : streq(name, "rank_hypotheses") ? 'r' :
				      streq(name, "propose_patch") ? 'P' : streq(name, "review_patch") ? 'v' : '.';
	}
	if (m->plan == PLAN_LOCATIONS && locations_plan(m, name, user, tok, ret))
		return 0;
	if (m->plan == PLAN_WRONG_FILE && wrong_file_plan(m, name, user, tok, ret))
		return 0;
	if (streq(name, "propose_location")) {
		/* the model is told the earlier locations */
		if (m->locations++ == 0) {
			assert_non_null(strstr(user, "(none yet)"));
			assert_non_null(strstr(user, "== net/foo/foo.c: foo_release"));
		} else
			assert_non_null(strstr(user, "1. net/foo/foo.c: foo_release()"));
		*ret = tool("propose_location", json_pack("{s:s, s:s, s:i, s:i, s:s}",
			"file", "net/foo/foo.c", "function", "foo_release", "start_line", 9,
			"end_line", 24, "reason", "the freed list stays reachable"), tok);
	} else if (streq(name, "request_probes")) {
		*ret = tool("request_probes", json_pack("{s:s, s:o}", "why", "is it called twice?",
			"edits", edit("\tit = f->items;\n",
				      "\tit = f->items;\n\tpr_info(\"kfix-probe f=%p items=%p\\n\", f, it);\n")), tok);
	} else if (streq(name, "state_hypotheses")) {
		assert_non_null(strstr(user, "kfix-probe f=ffff8880"));
		assert_non_null(strstr(user, "\n[ 5.1] foo: kfix-probe pfx=1\n"));
		assert_non_null(strstr(user, "\nfoo_release: kfix-probe rb=1\n"));
		assert_non_null(strstr(user, "\nfoo_release: kfix-probe dump=1\n"));
		*ret = tool("state_hypotheses", json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s}]}",
			"hypotheses",
			"root_cause", "foo_release() frees the items but leaves f->items pointing at them",
			"evidence", "probe: items=ffff8881 on the second call", "fix_idea", "clear f->items",
			"root_cause", "the count is wrong", "evidence", "none"), tok);
	} else if (streq(name, "rank_hypotheses")) {
		*ret = tool("rank_hypotheses", json_pack("{s:[i, i], s:s}", "order", 0, 1,
							 "reason", "the probe shows it"), tok);
	} else if (streq(name, "review_patch")) {
		bool breaks;

		/* it judges the diff it was shown, with what the gates said */
		m->reviews++;
		assert_non_null(strstr(user, "+\tf->items = NULL;"));
		assert_non_null(strstr(user, "passed: scope"));
		breaks = strstr(user, "+\treturn 0;") ||
			 (m->reject_minimised && !strstr(user, "number of items"));
		*ret = tool("review_patch", json_pack("{s:s, s:s, s:[s]}", "verdict",
			breaks ? "behaviour-changes" : "correct", "findings", breaks ?
			"foo_put() returns what foo_release() returns: the number of items freed.\n"
			"With the patch it is always 0." :
			"foo_put() is the only caller and gets the same count;\nf->items is not read after the release.",
			"callers_checked", "foo_put"), tok);
	} else if (streq(name, "propose_patch")) {
		if (strstr(user, "the review found that the change alters"))
			m->saw_review_in_feedback++;
		*ret = tool("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
							"edits", patch_for(m)), tok);
	} else if (streq(name, "reflect")) {
		m->reflections++;
		*ret = tool("reflect", json_pack("{s:s, s:[s], s:s}", "analysis",
			"the early return does not stop the second free",
			"lessons", "clear the pointer after freeing", "next",
			m->plan == PLAN_SECOND_HYPOTHESIS ? "new_hypothesis" : "new_patch"), tok);
	} else if (streq(name, "distil_lessons")) {
		m->distils++;
		*ret = tool("distil_lessons", json_pack("{s:[s], s:s}", "lessons",
			"do not touch the count", "fix_shape", "reset the list head"), tok);
	} else if (streq(name, "write_explanation")) {
		*ret = tool("write_explanation", json_pack("{s:s, s:s, s:s}",
			"subject", "net: foo: clear the item list after freeing it in foo_release() so that a second release does not walk freed memory.",
			"body", "foo_release() frees every item of f->items but leaves the list head pointing at the first freed item. When the last reference is dropped again, foo_release() walks the freed list a second time, which KASAN reports as a use-after-free.\n\nClear the list head after freeing the items.",
			"root_cause", "stale list head"), tok);
	} else
		fail_msg("unexpected tool %s", name);
	return 0;
}

/* --- helpers ------------------------------------------------------------------ */

static void params(struct repair_params *p, const char *out)
{
	repair_params_default(p);
	p->report = report;
	p->report_len = strlen(report);
	p->src_dir = tree;
	p->base_commit = "fedcba9876543210fedcba9876543210fedcba98";
	p->out_dir = out;
	p->gates.checkpatch = false;
	p->base_runs = 2;
	p->validate_runs = 3;
	p->locations = 3;
}

static json_t *events(const char *out)
{
	char path[1024];
	json_t *ev = NULL;

	snprintf(path, sizeof(path), "%s/trajectory.jsonl", out);
	assert_int_equal(trajectory_load(path, &ev), 0);
	return ev;
}

static int count(const json_t *ev, const char *kind, const char *verdict)
{
	json_t *e;
	size_t i;
	int n = 0;

	json_array_foreach(ev, i, e)
		if (streq_ptr(json_get_str(e, "kind"), kind) &&
		    (!verdict || streq_ptr(json_get_str(e, "verdict"), verdict)))
			n++;
	return n;
}

static void test_story(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL, *patch = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .plan = PLAN_STORY, .tokens = 1000 };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512], path[1024];
	json_t *e;
	size_t i;
	int order = 0;

	snprintf(out, sizeof(out), "%s/out-story", tree);
	params(&p, out);
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("scripted-model", model_fn, &m, &l), 0);
	if (repair_run(&p, &ts, l, &s, &err) < 0)
		fail_msg("repair failed: %s", err);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	/* round 1: a candidate per hypothesis (the cheat, the wrong one);
	 * the selector keeps the second, whose next candidate is the fix */
	assert_int_equal(m.patches, 3);
	assert_int_equal(m.reflections, 1);
	assert_int_equal(m.distils, 0);
	assert_int_equal(t.probes, 1);
	/* the validated patch and its minimised form were both reviewed */
	assert_int_equal(m.reviews, 2);

	/* minimised: the comment hunk went, the fix stayed */
	assert_non_null(strstr(s->diff, "+\tf->items = NULL;"));
	assert_null(strstr(s->diff, "number of items"));

	/* commit message fields */
	assert_non_null(strstr(s->commit_message,
		"\nFixes: 0123456789ab (\"net: foo: add foo_release()\")\n"));
	assert_non_null(strstr(s->commit_message,
		"\nReported-by: syzbot+0123456789abcdef01234567@syzkaller.appspotmail.com\n"));
	assert_non_null(strstr(s->commit_message,
		"\nCloses: https://syzkaller.appspot.com/bug?extid=0123456789abcdef01234567\n"));
	assert_non_null(strstr(s->commit_message, "\nAssisted-by: kfix:scripted-model\n"));
	assert_null(strstr(s->commit_message, "Signed-off-by"));
	assert_true(strcspn(s->commit_message, "\n") <= 72);
	for (const char *l2 = s->commit_message; l2; l2 = strchr(l2, '\n') ? strchr(l2, '\n') + 1 : NULL)
		assert_true(strcspn(l2, "\n") <= 75 || startswith(l2, "Closes:") ||
			    startswith(l2, "Reported-by:"));
	{
		_cleanup_free_ char *md = NULL;

		/* the explanation says what ran and what did not */
		snprintf(path, sizeof(path), "%s/explanation.md", out);
		assert_int_equal(read_file_bounded(path, 1 << 20, &md, NULL), 0);
		assert_non_null(strstr(md, "## Tested\n\n- reproducer: the base kernel crashed in 2 of 2"));
		assert_non_null(strstr(md, "- integrity gates passed: scope, size, probes, checks, "
					   "silence, amputation, resources"));
		assert_non_null(strstr(md, "## Not tested\n\n- kmemleak: the kernel under test has none"));
		assert_non_null(strstr(md, "\n- review: asked to find a correct caller whose behaviour "
					   "the change alters, the model found none: foo_put() is the "
					   "only caller and gets the same count; f->items is not read"));
		assert_null(strstr(md, "no review of the change"));
		/* how the Fixes: tag was found, as the toolstack said */
		assert_non_null(strstr(md, "\n- Fixes: found by bisection: 3 revisions tested\n"));
		assert_null(strstr(md, "not bisected"));
	}
	{
		_cleanup_json_ json_t *xj = NULL;
		json_error_t jerr;
		const json_t *rows;

		/* the same, as data for kfixd */
		snprintf(path, sizeof(path), "%s/explanation.json", out);
		xj = json_load_file(path, 0, &jerr);
		assert_non_null(xj);
		rows = json_object_get(xj, "reproduction");
		assert_int_equal(json_array_size(rows), 2);
		assert_string_equal(json_get_str(json_array_get(rows, 0), "kernel"),
				    "base fedcba9876543210fedcba9876543210fedcba98");
		assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "crashed")), 2);
		assert_string_equal(json_get_str(json_array_get(rows, 1), "kernel"), "patched");
		assert_true(startswith(json_get_str(xj, "tested"), "- reproducer: the base kernel crashed in 2 of 2"));
		assert_true(startswith(json_get_str(xj, "not_tested"), "- kmemleak: the kernel under test has none"));
		assert_non_null(json_get_str(xj, "root_cause"));
	}
	snprintf(path, sizeof(path), "%s/0001-fix.patch", out);
	assert_int_equal(read_file_bounded(path, 1 << 20, &patch, NULL), 0);
	assert_non_null(strstr(patch, "Subject: [PATCH] net: foo: clear the item list"));
	assert_non_null(strstr(patch, "\nbase-commit: fedcba9876543210fedcba9876543210fedcba98\n"));

	/* the trajectory tells the story in order */
	ev = events(out);
	assert_int_equal(count(ev, "run.start", NULL), 1);
	assert_int_equal(count(ev, "run.end", "validated"), 1);
	assert_int_equal(count(ev, "tool.probe", "crashed"), 1);
	assert_int_equal(count(ev, "reflection", "new_patch"), 1);
	assert_int_equal(count(ev, "plan", "selected"), 1);
	assert_int_equal(count(ev, "plan", "merged"), 1);
	assert_int_equal(count(ev, "plan", "hunk not needed"), 1);
	json_array_foreach(ev, i, e) {
		const char *k = json_get_str(e, "kind"), *v = json_get_str(e, "verdict");

		assert_true(json_get_int(e, "id", 0) == (json_int_t)i + 1);
		if (json_get_int(e, "id", 0) > 1)
			assert_int_equal(json_get_int(e, "parent", 0), 1);
		if (!streq_ptr(k, "gate") && !streq_ptr(k, "observation"))
			continue;
		if (order == 0 && streq_ptr(v, "rejected")) {
			_cleanup_free_ char *o = json_dumps(json_object_get(e, "output"), 0);

			assert_non_null(strstr(o, "WARN_ON"));
			order = 1;
		} else if (order == 1 && streq_ptr(v, "same-crash"))
			order = 2;
		else if (order == 2 && streq_ptr(v, "validated"))
			order = 3;
	}
	assert_int_equal(order, 3);
	{
		_cleanup_json_ json_t *sum = trajectory_summary(ev);

		assert_int_equal(json_get_int(sum, "llm_calls", 0), (json_int_t)s->llm_calls);
		assert_int_equal(json_get_int(sum, "tokens_in", 0), (json_int_t)s->tokens_in);
	}
	free(t.built);
}

/* The scripted model's answers of the story, as server script steps. */
static char *story_script(void)
{
	static const char *const order[] = { "propose_location", "propose_location",
		"request_probes", "state_hypotheses", "rank_hypotheses", "propose_patch",
		"propose_patch", "reflect", "propose_patch", "review_patch", "review_patch",
		"write_explanation" };
	struct model m = { .plan = PLAN_STORY, .tokens = 700, .locations = 1 };
	_cleanup_json_ json_t *steps = json_array();
	_cleanup_json_ json_t *req = json_pack("{s:s, s:[{s:s}], s:[{s:s}]}", "system", "kernel",
		"messages", "content", "(none yet) == net/foo/foo.c: foo_release kfix-probe f=ffff8880 "
		"\n[ 5.1] foo: kfix-probe pfx=1\nfoo_release: kfix-probe rb=1\n"
		"foo_release: kfix-probe dump=1\n 1. net/foo/foo.c: foo_release() +\tf->items = NULL; passed: scope", "tools", "name", "");

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		_cleanup_json_ json_t *r = NULL;
		json_t *call;

		json_object_set_new(json_array_get(json_object_get(req, "tools"), 0), "name",
				    json_string(order[i]));
		assert_int_equal(model_fn(&m, req, &r), 0);
		call = json_array_get(json_object_get(r, "tool_calls"), 0);
		json_array_append_new(steps, json_pack("{s:s, s:O, s:[i, i]}", "tool", order[i],
			"args", json_object_get(call, "arguments"), "usage", 700, 70));
	}
	return json_dumps(steps, JSON_COMPACT);
}

/* The whole story through the real OpenAI-compatible provider over HTTP,
 * recorded; then replayed from the cassette with no server at all. */
static void test_story_over_http_and_replay(void **state)
{
	_cleanup_free_ char *script = story_script(), *err = NULL, *cassette = NULL;
	_cleanup_(llm_freep) struct llm *l = NULL, *r = NULL, *d = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL, *s2 = NULL, *s3 = NULL;
	struct llm_settings st = { .provider = "openai", .model = "http-model", .max_tokens = 2000,
				   .timeout_usec = 10000000, .retries = 1, .backoff_usec = 10000,
				   .price_input = 1.0, .price_output = 2.0 };
	struct repair_toolstack ts = toolstack;
	struct ts t = {};
	struct repair_params p;
	struct server srv;
	char out[512];

	if (system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
		skip();
	ts.ud = &t;
	assert_true(asprintf(&cassette, "%s/story.cassette", tree) > 0);
	server_start(&srv, script);
	st.url = srv.url;
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_record(l, cassette), 0);
	snprintf(out, sizeof(out), "%s/out-http", tree);
	params(&p, out);
	if (repair_run(&p, &ts, l, &s, &err) < 0)
		fail_msg("repair over http failed: %s", err);
	server_stop(&srv);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_int_equal(s->llm_calls, 12);
	assert_int_equal(s->tokens_in, 12 * 700);
	/* 12 x (700 x 1 + 70 x 2) per million */
	assert_true(s->cost > 0.01007 && s->cost < 0.01009);
	assert_non_null(strstr(s->commit_message, "Assisted-by: kfix:http-model"));

	/* replay: same decisions, no network */
	assert_int_equal(llm_new_for_replay(cassette, &r), 0);
	assert_string_equal(llm_model(r), "http-model");
	snprintf(out, sizeof(out), "%s/out-replay", tree);
	params(&p, out);
	if (repair_run(&p, &ts, r, &s2, &err) < 0)
		fail_msg("replay failed: %s", err);
	assert_int_equal(s2->result, REPAIR_VALIDATED);
	assert_string_equal(s2->diff, s->diff);
	assert_string_equal(s2->commit_message, s->commit_message);

	/* a different bug diverges from the recording at the first call */
	assert_int_equal(llm_new_for_replay(cassette, &d), 0);
	snprintf(out, sizeof(out), "%s/out-diverge", tree);
	params(&p, out);
	p.validate_runs = 4;
	p.locations = 1;
	free(err);
	err = NULL;
	p.gates.max_hunks = 4;
	assert_int_equal(repair_run(&p, &ts, d, &s3, &err), -ENOMSG);
	assert_non_null(strstr(err, "diverges"));
	free(t.built);
}

/* The explanation and the knowledge base take the root cause of the
 * hypothesis whose patch was validated, not the first one's. */
static void test_explained_by_the_validated_hypothesis(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL, *expl = NULL, *kb = NULL;
	struct model m = { .plan = PLAN_SECOND_HYPOTHESIS, .tokens = 100 };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512], path[1024], kbp[1024];

	(void)state;
	snprintf(out, sizeof(out), "%s/out-second", tree);
	snprintf(kbp, sizeof(kbp), "%s/kb-second.jsonl", tree);
	params(&p, out);
	p.kb_path = kbp;
	p.minimise = false;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	if (repair_run(&p, &ts, l, &s, &err) < 0)
		fail_msg("repair failed: %s", err);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_int_equal(m.patches, 2);
	snprintf(path, sizeof(path), "%s/explanation.md", out);
	assert_int_equal(read_file_bounded(path, 1 << 20, &expl, NULL), 0);
	/* the evidence is the second hypothesis's, not the first's */
	assert_non_null(strstr(expl, "## Evidence\n\nnone\n"));
	assert_null(strstr(expl, "probe: items=ffff8881 on the second call"));
	assert_int_equal(read_file_bounded(kbp, 1 << 20, &kb, NULL), 0);
	assert_non_null(strstr(kb, "the count is wrong"));
	assert_null(strstr(kb, "leaves f->items pointing at them"));
	free(t.built);

	/* the next bug of that type in that subsystem is told the lesson:
	 * in the system prompt of every model call */
	{
		_cleanup_(llm_freep) struct llm *l2 = NULL;
		_cleanup_(repair_summary_freep) struct repair_summary *s2 = NULL;
		struct model m2 = { .plan = PLAN_STORY, .tokens = 100,
				    .knowledge = "* " TITLE " (root-cause fix): the count is wrong" };
		struct ts t2 = {};

		snprintf(out, sizeof(out), "%s/out-second-next", tree);
		params(&p, out);
		p.kb_path = kbp;
		ts.ud = &t2;
		assert_int_equal(llm_new_scripted("m", model_fn, &m2, &l2), 0);
		if (repair_run(&p, &ts, l2, &s2, &err) < 0)
			fail_msg("repair failed: %s", err);
		assert_true(m2.saw_knowledge > 0);
		assert_int_equal(m2.saw_knowledge, (int)s2->llm_calls);
		free(t2.built);
	}
}

/* A candidate per place, the better half kept, a worse refinement
 * rolled back: PhoenixRepair's multi-location search. */
static void test_search_locations(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL, *expl = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .plan = PLAN_LOCATIONS, .tokens = 100 };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512], path[1024];
	json_t *e, *sel = NULL, *rb = NULL, *plan = NULL;
	size_t i;

	(void)state;
	snprintf(out, sizeof(out), "%s/out-locations", tree);
	params(&p, out);
	p.minimise = false;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	if (repair_run(&p, &ts, l, &s, &err) < 0)
		fail_msg("repair failed: %s", err);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	/* round 1 at both places (the third hypothesis shares the first
	 * place: no line of its own), then the first line twice */
	assert_string_equal(m.asked, "1211");
	assert_int_equal(m.patches, 4);
	assert_int_equal(m.reflections, 2);
	assert_true(m.refined_best);
	ev = events(out);
	json_array_foreach(ev, i, e) {
		const char *v = json_get_str(e, "verdict");

		if (streq_ptr(v, "selected"))
			sel = e;
		else if (streq_ptr(v, "rollback"))
			rb = e;
		else if (streq_ptr(v, "candidate lines"))
			plan = e;
	}
	assert_non_null(plan);
	assert_int_equal(json_get_int(json_object_get(plan, "output"), "lines", 0), 2);
	assert_non_null(sel);
	assert_int_equal(json_get_int(json_object_get(sel, "input"), "round", 0), 1);
	e = json_object_get(sel, "output");
	assert_int_equal(json_array_size(json_object_get(e, "kept")), 1);
	assert_int_equal(json_get_int(json_array_get(json_object_get(e, "kept"), 0), "location", 0), 1);
	assert_string_equal(json_get_str(json_array_get(json_object_get(e, "kept"), 0), "best"),
			    "same-crash");
	assert_int_equal(json_get_int(json_array_get(json_object_get(e, "dropped"), 0), "location", 0), 2);
	assert_string_equal(json_get_str(json_array_get(json_object_get(e, "dropped"), 0), "best"),
			    "build-error");
	/* rolled back from the refinement that did not build to the
	 * candidate it refined */
	assert_non_null(rb);
	assert_true(json_get_int(json_object_get(rb, "input"), "to", 0) <
		    json_get_int(json_object_get(rb, "input"), "from", 0));
	/* explained by the hypothesis of the line that found it */
	snprintf(path, sizeof(path), "%s/explanation.md", out);
	assert_int_equal(read_file_bounded(path, 1 << 20, &expl, NULL), 0);
	assert_non_null(strstr(expl, "## Evidence\n\nthe probe shows items set after the free\n"));
	free(t.built);
}

/* The hopeless run's own trajectory, diagnosed: every candidate ran and
 * still crashed; with the developers' fix known to be in another file,
 * the cause moves up to the localisation, which never looked there. */
static void diagnosed_hopeless(const json_t *ev)
{
	char *fix[] = { (char *)"net/bar/bar.c", NULL };
	struct diagnosis *d = NULL;

	assert_int_equal(diagnose_trajectory(ev, NULL, &d), 0);
	assert_int_equal(d->family, DIAG_VALIDATION);
	assert_string_equal(d->from, "hypotheses");
	assert_non_null(strstr(d->evidence, "still crashes"));
	diagnosis_free(d);
	assert_int_equal(diagnose_trajectory(ev, fix, &d), 0);
	assert_int_equal(d->family, DIAG_LOCALISATION);
	assert_string_equal(d->step, "localise");
	assert_true(d->event > 0);
	assert_non_null(strstr(d->evidence, "net/foo/foo.c"));
	assert_non_null(strstr(d->directive, "net/bar/bar.c"));
	diagnosis_free(d);
}

static void test_hopeless_search_stops(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .plan = PLAN_HOPELESS, .tokens = 100 };
	struct ts t = { .always_crash = true };
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512];

	snprintf(out, sizeof(out), "%s/out-hopeless", tree);
	params(&p, out);
	p.limits.max_iterations = 4;
	p.limits.stagnation = 100;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
	assert_int_equal(s->result, REPAIR_GAVE_UP);
	assert_non_null(strstr(s->reason, "iteration limit"));
	/* four attempts, then one distilled final attempt */
	assert_int_equal(m.patches, 5);
	assert_int_equal(m.distils, 1);
	assert_null(s->diff);
	ev = events(out);
	assert_int_equal(count(ev, "run.end", "gave-up"), 1);
	diagnosed_hopeless(ev);
	free(t.built);
}

static int first_index(const json_t *ev, const char *step)
{
	json_t *e;
	size_t i;

	json_array_foreach(ev, i, e)
		if (streq_ptr(json_get_str(e, "step"), step))
			return (int)i;
	return -1;
}

static int count_before(const json_t *ev, const char *kind, int end)
{
	int n = 0;

	for (int i = 0; i < end; i++)
		n += streq_ptr(json_get_str(json_array_get(ev, (size_t)i), "kind"), kind);
	return n;
}

static const json_t *rerun_live_event(const json_t *ev)
{
	json_t *e;
	size_t i;

	json_array_foreach(ev, i, e)
		if (streq_ptr(json_get_str(e, "kind"), "rerun.live"))
			return e;
	return NULL;
}

/* A repair that fails because localisation never leaves foo.c, while the
 * fix belongs in bar.c: diagnose puts it on the localisation step; a
 * rerun from that step with diagnose's directive validates, its prefix
 * (the base kernel's build and runs) taken from the record, not rerun.
 * A rerun from a later step answers the earlier steps' model calls from
 * the record: the model is never asked them.  A record that does not
 * fit the run stops the rerun. */
static void test_rerun_from_localisation(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL, *l2 = NULL, *l3 = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL, *s2 = NULL, *s3 = NULL;
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	_cleanup_free_ char *err = NULL, *err2 = NULL, *err3 = NULL, *err4 = NULL;
	_cleanup_json_ json_t *ev = NULL, *ev2 = NULL, *ev3 = NULL, *bad = NULL;
	char *fix[] = { (char *)"net/foo/bar.c", NULL };
	struct model m = { .plan = PLAN_WRONG_FILE, .tokens = 100 };
	struct model m2 = { .plan = PLAN_WRONG_FILE, .tokens = 100 };
	struct model m3 = { .plan = PLAN_WRONG_FILE, .tokens = 100 };
	struct ts t = {}, t2 = {}, t3 = {};
	struct repair_toolstack ts = toolstack, ts2 = toolstack, ts3 = toolstack;
	struct repair_params p, p2, p3, p4;
	char out[512], out2[512], out3[512], out4[512], path[512];
	const json_t *live;
	int hyp;

	(void)state;
	snprintf(path, sizeof(path), "%s/net/foo/bar.c", tree);
	assert_int_equal(write_file_atomic(path, bar_c, strlen(bar_c), 0644), 0);
	snprintf(out, sizeof(out), "%s/out-wrong-file", tree);
	params(&p, out);
	p.limits.max_iterations = 2;
	p.limits.stagnation = 100;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
	assert_int_equal(s->result, REPAIR_GAVE_UP);
	ev = events(out);

	assert_int_equal(diagnose_trajectory(ev, fix, &d), 0);
	assert_int_equal(d->family, DIAG_LOCALISATION);
	assert_string_equal(d->from, "localise");
	assert_non_null(strstr(d->directive, "net/foo/bar.c"));

	/* rerun from localise with the directive */
	snprintf(out2, sizeof(out2), "%s/out-rerun", tree);
	params(&p2, out2);
	p2.rerun_events = ev;
	p2.rerun_from = d->from;
	p2.directive = d->directive;
	ts2.ud = &t2;
	assert_int_equal(llm_new_scripted("m", model_fn, &m2, &l2), 0);
	if (repair_run(&p2, &ts2, l2, &s2, &err2) < 0)
		fail_msg("rerun failed: %s", err2);
	assert_int_equal(s2->result, REPAIR_VALIDATED);
	assert_non_null(strstr(s2->diff, "net/foo/bar.c"));
	/* the base was not built again: its build and runs are the record's */
	assert_int_equal(t.base_builds, 1);
	assert_int_equal(t2.base_builds, 0);
	ev2 = events(out2);
	live = rerun_live_event(ev2);
	assert_non_null(live);
	assert_string_equal(json_get_str(live, "step"), "localise");
	assert_int_equal(json_get_int(json_object_get(json_object_get(live, "output"), "replayed"),
				      "tool.build", -1), 1);
	assert_int_equal(json_get_int(json_object_get(json_object_get(live, "output"), "replayed"),
				      "tool.run", -1), 1);
	/* the directive was in the prompts from the localisation on */
	assert_true(t2.builds >= 1 && t2.built && strstr(t2.built, "bar.c"));
	assert_int_equal(m2.calls[0], 'l');

	/* from the hypotheses: localisation and probes come from the record */
	hyp = first_index(ev, "hypotheses");
	assert_true(hyp > 0);
	snprintf(out3, sizeof(out3), "%s/out-rerun-hyp", tree);
	params(&p3, out3);
	p3.limits.max_iterations = 1;
	p3.limits.stagnation = 100;
	p3.rerun_events = ev;
	p3.rerun_from = "hypotheses";
	ts3.ud = &t3;
	assert_int_equal(llm_new_scripted("m", model_fn, &m3, &l3), 0);
	if (repair_run(&p3, &ts3, l3, &s3, &err3) < 0)
		fail_msg("rerun from hypotheses failed: %s", err3);
	assert_null(strchr(m3.calls, 'l'));
	assert_null(strchr(m3.calls, 'p'));
	assert_int_equal(m3.calls[0], 'h');
	ev3 = events(out3);
	live = rerun_live_event(ev3);
	assert_non_null(live);
	assert_int_equal(json_get_int(json_object_get(json_object_get(live, "output"), "replayed"),
				      "llm.call", -1), count_before(ev, "llm.call", hyp));
	assert_true(count_before(ev, "llm.call", hyp) >= 2);
	/* the probe's build and run were the record's too */
	assert_int_equal(t3.probes, 0);
	assert_int_equal(t3.base_builds, 0);
	assert_true(t3.builds >= 1);

	/* a step that acts through no model call or tool (the pre-checks):
	 * live from the first step the record had not reached */
	{
		_cleanup_(llm_freep) struct llm *l5 = NULL;
		_cleanup_(repair_summary_freep) struct repair_summary *s5 = NULL;
		_cleanup_free_ char *err5 = NULL;
		_cleanup_json_ json_t *ev5 = NULL;
		struct model m5 = { .plan = PLAN_WRONG_FILE, .tokens = 100 };
		struct ts t5 = {};
		struct repair_toolstack ts5 = toolstack;
		struct repair_params p5;
		char out5[512];

		snprintf(out5, sizeof(out5), "%s/out-rerun-precheck", tree);
		params(&p5, out5);
		p5.limits.max_iterations = 1;
		p5.limits.stagnation = 100;
		p5.rerun_events = ev;
		p5.rerun_from = "precheck";
		ts5.ud = &t5;
		assert_int_equal(llm_new_scripted("m", model_fn, &m5, &l5), 0);
		assert_int_equal(repair_run(&p5, &ts5, l5, &s5, &err5), 0);
		assert_int_equal(t5.base_builds, 1);
		ev5 = events(out5);
		assert_string_equal(json_get_str(rerun_live_event(ev5), "step"), "reproduce");
		free(t5.built);
	}

	/* a record whose base build was of another diff does not fit */
	bad = json_deep_copy(ev);
	for (size_t i = 0; i < json_array_size(bad); i++) {
		json_t *e = json_array_get(bad, i);

		if (streq_ptr(json_get_str(e, "kind"), "tool.build")) {
			json_object_set_new(json_object_get(e, "input"), "diff", json_string("something else"));
			break;
		}
	}
	snprintf(out4, sizeof(out4), "%s/out-rerun-bad", tree);
	params(&p4, out4);
	p4.rerun_events = bad;
	p4.rerun_from = "localise";
	assert_int_equal(repair_run(&p4, &ts2, l2, &s, &err4) == -ESTALE, true);
	assert_non_null(strstr(err4, "built another diff"));
	p4.rerun_from = "nowhere";
	free(err4);
	err4 = NULL;
	assert_int_equal(repair_run(&p4, &ts2, l2, &s, &err4), -ENOENT);
	assert_non_null(strstr(err4, "never reached step nowhere"));

	free(t.built);
	free(t2.built);
	free(t3.built);
	unlink(path);
}

static void test_same_patch_and_budget(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL, *l2 = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL, *s2 = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .plan = PLAN_SAME_PATCH, .tokens = 100 };
	struct model m2 = { .plan = PLAN_HOPELESS, .tokens = 100000 };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512];

	snprintf(out, sizeof(out), "%s/out-same", tree);
	params(&p, out);
	p.limits.stagnation = 3;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
	assert_int_equal(s->result, REPAIR_GAVE_UP);
	assert_non_null(strstr(s->reason, "stagnation"));
	ev = events(out);
	assert_true(count(ev, "guardrail", "duplicate patch") >= 2);
	/* the identical patch was built once only */
	assert_int_equal(count(ev, "gate", NULL), 1);

	snprintf(out, sizeof(out), "%s/out-budget", tree);
	params(&p, out);
	p.limits.max_tokens = 500000;
	assert_int_equal(llm_new_scripted("m", model_fn, &m2, &l2), 0);
	assert_int_equal(repair_run(&p, &ts, l2, &s2, &err), 0);
	assert_int_equal(s2->result, REPAIR_GAVE_UP);
	assert_non_null(strstr(s2->reason, "token budget"));
	/* a spent budget allows no final round */
	assert_int_equal(m2.distils, 0);
	free(t.built);
}

static int ts_run_clean(void *ud, unsigned runs, struct repair_outcome *ret)
{
	ret->runs = ret->survived = runs;
	return 0;
}

static void test_not_reproduced(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL;
	struct model m = { .plan = PLAN_STORY };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512];

	snprintf(out, sizeof(out), "%s/out-norepro", tree);
	params(&p, out);
	ts.ud = &t;
	ts.run = ts_run_clean;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
	assert_int_equal(s->result, REPAIR_NOT_REPRODUCED);
	/* no patch without reproduction: the model was never asked */
	assert_int_equal(s->llm_calls, 0);
	free(t.built);
}

/* The crash to fix is syzbot's title when the bug came with one: a base
 * crash of another title is not a reproduction, while syzbot's duplicate
 * counter or a syscall prefix does not make another crash. */
static void test_expected_title(void **state)
{
	static const struct {
		const char *title;
		bool reproduced;
	} cases[] = {
		{ "KASAN: slab-use-after-free Read in foo_put", false },
		{ "KASAN: slab-use-after-free Write in foo_release", false },
		{ TITLE " (2)", true },
		{ "KASAN: slab-use-after-free Read in __x64_sys_foo_release", true },
		{ "KASAN: slab-use-after-free Read in foo_release_one", false },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(llm_freep) struct llm *l = NULL;
		_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
		_cleanup_free_ char *err = NULL;
		struct model m = { .plan = PLAN_STORY };
		struct ts t = {};
		struct repair_toolstack ts = toolstack;
		struct repair_params p;
		char out[512];

		snprintf(out, sizeof(out), "%s/out-title-%zu", tree, i);
		params(&p, out);
		p.title = cases[i].title;
		ts.ud = &t;
		assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
		assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
		if (cases[i].reproduced) {
			assert_int_not_equal(s->result, REPAIR_NOT_REPRODUCED);
		} else {
			assert_int_equal(s->result, REPAIR_NOT_REPRODUCED);
			assert_non_null(strstr(s->reason, "crashed differently: " TITLE));
			assert_non_null(strstr(s->reason, cases[i].title));
			assert_int_equal(s->llm_calls, 0);
		}
		free(t.built);
	}
}

/* A report without source lines (a console log as a mail or a user gives
 * it) gives way to the crash reproduced on the base, which the toolstack
 * symbolised: the localisation then finds the function's code by its
 * file (the model's script asserts it), and the trajectory says so.  A
 * report that names its lines (every other test's) is kept. */
static void test_reproduced_report_read(void **state)
{
	static const char raw[] =
		"[   12.345678] BUG: KASAN: slab-use-after-free in foo_release+0x1a/0x80\n"
		"[   12.345679] Read of size 8 at addr ffff888012345678 by task syz-executor/1234\n"
		"[   12.345680] Call Trace:\n"
		"[   12.345681]  <TASK>\n"
		"[   12.345682]  foo_release+0x1a/0x80\n"
		"[   12.345683]  foo_put+0x10/0x20\n"
		"[   12.345684]  </TASK>\n";
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_json_ json_t *ev = NULL, *story = NULL;
	struct model m = { .plan = PLAN_STORY };
	struct ts t = {};
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512];
	const char *seen;
	json_t *e;
	size_t i;

	(void)state;
	assert_false(report_symbolised(raw, strlen(raw)));
	assert_true(report_symbolised(report, strlen(report)));
	snprintf(out, sizeof(out), "%s/out-rawreport", tree);
	params(&p, out);
	p.report = raw;
	p.report_len = strlen(raw);
	p.read_reproduced = true;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	if (repair_run(&p, &ts, l, &s, &err) < 0)
		fail_msg("repair failed: %s", err);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	ev = events(out);
	assert_int_equal(count(ev, "observation", "symbolised-report"), 1);
	json_array_foreach(ev, i, e)
		if (streq_ptr(json_get_str(e, "verdict"), "symbolised-report")) {
			seen = json_get_str(json_object_get(e, "output"), "report");
			assert_non_null(seen);
			assert_non_null(strstr(seen, "foo_release+0x1a/0x80 net/foo/foo.c:17"));
		}
	free(t.built);

	snprintf(out, sizeof(out), "%s/out-story", tree);
	story = events(out);
	assert_int_equal(count(story, "observation", "symbolised-report"), 0);
}

/* The validation's strictness, with the scripted toolstack bending the
 * runs of the builds it is told to. */
enum bend { BEND_FEWER_ONCE, BEND_FEWER_ALWAYS, BEND_NO_BOOT, BEND_HANG, BEND_EXIT, BEND_LEAK };

struct bent {
	struct ts t;
	enum bend how;
	int fewer;	/* short series given */
};

static bool is_fix(const struct ts *t)
{
	return t->built && strstr(t->built, "+\tf->items = NULL;");
}

static int ts_run_bent(void *ud, unsigned runs, struct repair_outcome *ret)
{
	struct bent *b = ud;
	bool fix = is_fix(&b->t), other = b->t.built && !fix && !strstr(b->t.built, "kfix-probe");

	switch (b->how) {
	case BEND_FEWER_ONCE:
	case BEND_FEWER_ALWAYS:
		if (fix && (b->how == BEND_FEWER_ALWAYS || b->fewer == 0)) {
			b->fewer++;
			ret->runs = ret->survived = runs - 1;
			ret->infra = 1;
			return 0;
		}
		break;
	case BEND_NO_BOOT:
	case BEND_HANG:
		if (other) {
			b->t.runs++;
			ret->infra = runs;
			ret->boot_error = b->how == BEND_NO_BOOT;
			ret->hung = b->how == BEND_HANG;
			ret->log = strdup("[    1.2] Kernel panic - not syncing: VFS: Unable to mount root fs\n");
			return 0;
		}
		break;
	case BEND_EXIT:
	case BEND_LEAK:
		if (fix) {
			int r = ts_run(&b->t, runs, ret);

			if (b->how == BEND_EXIT) {
				ret->failed_exits = runs;
				ret->behaviour = strdup("exit status 1\nhostname: want kfix-test, got kfix\n");
			} else {
				ret->leak_checked = ret->leaked = runs;
				ret->leaks = strdup("unreferenced object 0xffff888004a3c000 (size 64):\n"
						    "  backtrace:\n    kmalloc_trace+0x26/0x60\n"
						    "    foo_alloc+0x1c/0x40\n");
			}
			return r;
		}
		break;
	}
	return ts_run(&b->t, runs, ret);
}

static int has_result(const json_t *ev, const char *needle)
{
	json_t *e;
	size_t i;
	int n = 0;

	json_array_foreach(ev, i, e) {
		const char *r = json_get_str(json_object_get(e, "output"), "result");

		n += streq_ptr(json_get_str(e, "kind"), "observation") && r && strstr(r, needle);
	}
	return n;
}

static void run_bent(enum bend how, const char *name, struct bent *b, struct repair_summary **ret,
		     json_t **ret_ev, int *ret_r)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_free_ char *err = NULL;
	struct model m = { .plan = PLAN_STORY, .tokens = 1000 };
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	char out[512];

	snprintf(out, sizeof(out), "%s/out-%s", tree, name);
	params(&p, out);
	*b = (struct bent){ .how = how };
	ts.ud = b;
	ts.run = ts_run_bent;
	assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
	*ret_r = repair_run(&p, &ts, l, ret, &err);
	*ret_ev = events(out);
}

/* Exactly the runs asked for: a short series is retried, never a verdict. */
static void test_validation_counts_every_run(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL, *s2 = NULL;
	_cleanup_json_ json_t *ev = NULL, *ev2 = NULL;
	struct bent b, b2;
	int r;

	run_bent(BEND_FEWER_ONCE, "fewer-once", &b, &s, &ev, &r);
	assert_int_equal(r, 0);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_true(b.fewer == 1);
	assert_true(count(ev, "tool.run", "no crash in 2/2") >= 1);
	free(b.t.built);

	run_bent(BEND_FEWER_ALWAYS, "fewer-always", &b2, &s2, &ev2, &r);
	assert_true(r < 0 || s2->result != REPAIR_VALIDATED);
	assert_int_equal(has_result(ev2, "no crash in"), 0);
	free(b2.t.built);
}

/* A patched kernel that does not boot or hangs is a failed attempt the
 * search goes on from, with the console for the model. */
static void test_patched_kernel_down_is_an_attempt(void **state)
{
	for (int i = 0; i < 2; i++) {
		_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
		_cleanup_json_ json_t *ev = NULL;
		struct bent b;
		int r;

		run_bent(i ? BEND_HANG : BEND_NO_BOOT, i ? "hang" : "no-boot", &b, &s, &ev, &r);
		assert_int_equal(r, 0);
		assert_int_equal(s->result, REPAIR_VALIDATED);
		assert_int_equal(has_result(ev, i ? "the patched kernel hangs" :
					    "the patched kernel does not boot"), 1);
		free(b.t.built);
	}
}

/* Crash gone is not fixed: a reproducer that fails on the patched kernel,
 * or a leak kmemleak finds, is fed back and never validated. */
static void test_behaviour_changed_is_not_fixed(void **state)
{
	for (int i = 0; i < 2; i++) {
		_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
		_cleanup_json_ json_t *ev = NULL;
		struct bent b;
		int r;

		run_bent(i ? BEND_LEAK : BEND_EXIT, i ? "leak" : "exit", &b, &s, &ev, &r);
		assert_int_equal(r, 0);
		assert_int_not_equal(s->result, REPAIR_VALIDATED);
		assert_true(has_result(ev, i ? "kmemleak found memory the reproducer leaked" :
				       "the behaviour changed: the reproducer failed in 3/3 runs "
				       "(exit status 1)") >= 1);
		free(b.t.built);
	}
}

/* The kernel's own tests: a kselftest that passes on the base and not on
 * the patched kernel fails the attempt, its output fed back; tests that
 * pass are listed in the explanation's "Tested" section. */
struct st_ts {
	struct ts t;
	bool regress;
	int calls;
};

static int ts_selftests_scripted(void *ud, const char *diff, struct repair_outcome *ret)
{
	struct st_ts *st = ud;

	st->calls++;
	assert_non_null(strstr(diff, "+++ b/"));
	ret->selftests = strdup(st->regress ? "timers:nanosleep: pass on the base, fail on the patch\n"
					    : "timers:nanosleep: pass on the base, pass on the patch\n");
	if (st->regress) {
		ret->selftest_regressions = 1;
		ret->regressions = strdup("selftest timers:nanosleep passed on the base kernel and "
					  "failed on the patched kernel (exit status 1)\nits output:\n"
					  "not ok 2 CLOCK_MONOTONIC\n");
	}
	return 0;
}

static int ts_run_st(void *ud, unsigned runs, struct repair_outcome *ret)
{
	return ts_run(&((struct st_ts *)ud)->t, runs, ret);
}

static int ts_build_st(void *ud, const char *diff, char **ret_log)
{
	return ts_build(&((struct st_ts *)ud)->t, diff, ret_log);
}

static void test_selftest_regression_is_not_fixed(void **state)
{
	for (int i = 0; i < 3; i++) {
		_cleanup_(llm_freep) struct llm *l = NULL;
		_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
		_cleanup_json_ json_t *ev = NULL;
		_cleanup_free_ char *err = NULL, *md = NULL;
		struct model m = { .plan = PLAN_STORY, .tokens = 1000 };
		struct repair_toolstack ts = toolstack;
		struct st_ts st = { .regress = i == 0 };
		struct repair_params p;
		char out[512], path[1024];

		(void)state;
		snprintf(out, sizeof(out), "%s/out-selftests-%d", tree, i);
		params(&p, out);
		ts.ud = &st;
		ts.run = ts_run_st;
		ts.build = ts_build_st;
		ts.selftests = i < 2 ? ts_selftests_scripted : NULL;
		assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
		assert_int_equal(repair_run(&p, &ts, l, &s, &err), 0);
		ev = events(out);
		if (i == 0) {
			assert_int_not_equal(s->result, REPAIR_VALIDATED);
			assert_true(has_result(ev, "the crash is gone but 1 kselftest(s) that pass on "
					       "the base kernel do not on the patched kernel") >= 1);
			assert_true(count(ev, "tool.selftests", "regressed") >= 1);
			free(st.t.built);
			continue;
		}
		assert_int_equal(s->result, REPAIR_VALIDATED);
		if (i == 2)
			assert_int_equal(st.calls, 0);
		snprintf(path, sizeof(path), "%s/explanation.md", out);
		assert_int_equal(read_file_bounded(path, 1 << 20, &md, NULL), 0);
		if (i == 1) {
			assert_true(st.calls >= 1);
			assert_non_null(strstr(md, "- kselftests covering the change, on the base and on "
						   "the patched kernel:\n  - timers:nanosleep: pass on the "
						   "base, pass on the patch\n"));
			assert_null(strstr(md, "no kselftests were run"));
		} else
			assert_non_null(strstr(md, "- no kselftests were run: none configured\n"));
		free(st.t.built);
	}
}

/* The adversarial review: a patch that stops the crash but changes what
 * a correct caller gets is a failed attempt, its findings fed back; a
 * minimised patch the review rejects leaves the reviewed full one; with
 * [agent] patch-review = no, nothing is reviewed and the mail says so. */
static void run_reviewed(struct model *m, const char *name, bool critique,
			 struct repair_summary **ret, json_t **ret_ev, char **ret_md)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_free_ char *err = NULL;
	struct repair_toolstack ts = toolstack;
	struct repair_params p;
	struct ts t = {};
	char out[512], path[1024];

	snprintf(out, sizeof(out), "%s/out-%s", tree, name);
	params(&p, out);
	p.critique = critique;
	ts.ud = &t;
	assert_int_equal(llm_new_scripted("m", model_fn, m, &l), 0);
	if (repair_run(&p, &ts, l, ret, &err) < 0)
		fail_msg("repair failed: %s", err);
	*ret_ev = events(out);
	snprintf(path, sizeof(path), "%s/explanation.md", out);
	if (read_file_bounded(path, 1 << 20, ret_md, NULL) < 0)
		*ret_md = NULL;
	free(t.built);
}

/* A review that finds a changed caller fails the attempt; its findings
 * reach the next patch, which the review accepts. */
static void test_review_rejects(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_json_ json_t *ev = NULL;
	_cleanup_free_ char *md = NULL;
	struct model m = { .plan = PLAN_REVIEW_REJECTS, .tokens = 100 };

	(void)state;
	run_reviewed(&m, "review-rejects", true, &s, &ev, &md);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_int_equal(m.patches, 2);
	assert_int_equal(m.reviews, 2);
	assert_int_equal(count(ev, "review", "behaviour-changes"), 1);
	assert_int_equal(count(ev, "review", "correct"), 1);
	assert_int_equal(has_result(ev, "the crash is gone but the review found that the "
				    "change alters what correct callers get: foo_put() "
				    "returns what foo_release() returns"), 1);
	/* the findings reached the reflection and the next patch */
	assert_int_equal(m.saw_review_in_feedback, 1);
	assert_null(strstr(s->diff, "return 0;"));
	assert_non_null(md);
	assert_non_null(strstr(md, "- review: asked to find a correct caller"));
}

/* A smaller patch the review rejects leaves the reviewed full one. */
static void test_review_minimised(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_json_ json_t *ev = NULL;
	_cleanup_free_ char *md = NULL;
	struct model m = { .plan = PLAN_STORY, .tokens = 100, .reject_minimised = true };

	(void)state;
	run_reviewed(&m, "review-minimised", true, &s, &ev, &md);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_int_equal(count(ev, "plan", "hunk not needed"), 1);
	assert_int_equal(count(ev, "plan", "the review rejected the smaller patch: the "
			       "full one stays"), 1);
	/* the full reviewed patch, both hunks */
	assert_non_null(strstr(s->diff, "number of items"));
	assert_non_null(strstr(s->diff, "+\tf->items = NULL;"));
}

/* [agent] patch-review = no: no review, and the mail says so. */
static void test_review_off(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_json_ json_t *ev = NULL;
	_cleanup_free_ char *md = NULL;
	struct model m = { .plan = PLAN_STORY, .tokens = 100 };

	(void)state;
	run_reviewed(&m, "review-off", false, &s, &ev, &md);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_int_equal(m.reviews, 0);
	assert_int_equal(count(ev, "review", NULL), 0);
	assert_non_null(md);
	assert_non_null(strstr(md, "## Not tested\n"));
	assert_non_null(strstr(md, "- no review of the change against its callers "
				   "([agent] patch-review = no)"));
	assert_null(strstr(md, "- review:"));
}

static void test_search_tree(void **state)
{
	_cleanup_(search_freep) struct search *s = NULL;
	struct search_limits l = SEARCH_LIMITS_DEFAULT;
	int a, b, c, dup = 0;

	l.depth = 2;
	l.stagnation = 2;
	assert_int_equal(search_new(&l, 0, &s), 0);
	a = search_add(s, 0, 0, "+x\n", NULL);
	assert_true(a > 0);
	assert_true(search_score(s, a, SCORE_SAME_CRASH));
	/* whitespace and context do not make a patch new */
	assert_int_equal(search_add(s, 0, 1, " ctx\n+ x\n", &dup), -EEXIST);
	assert_int_equal(dup, a);
	b = search_add(s, a, 0, "+y\n", NULL);
	assert_int_equal(search_node_depth(s, b), 2);
	assert_int_equal(search_add(s, b, 0, "+z\n", NULL), -ELOOP);
	assert_false(search_score(s, b, SCORE_BUILD_ERROR));
	assert_null(search_should_stop(s, 1));
	c = search_add(s, 0, 0, "+w\n", NULL);
	assert_false(search_score(s, c, SCORE_REJECTED));
	assert_non_null(strstr(search_should_stop(s, 1), "stagnation"));
	/* the best node is kept */
	assert_int_equal(search_best(s), a);
}

/* Each guard stops the search on its own, with its reason. */
static void test_search_guards(void **state)
{
	struct search_limits l = SEARCH_LIMITS_DEFAULT;
	int n;

	(void)state;
	{
		_cleanup_(search_freep) struct search *s = NULL;

		l.max_iterations = 2;
		assert_int_equal(search_new(&l, 0, &s), 0);
		assert_true(search_score(s, search_add(s, 0, 0, "+a\n", NULL), SCORE_BUILD_ERROR));
		assert_null(search_should_stop(s, 1));
		/* the crash moved: progress, but the iterations are spent */
		assert_true(search_score(s, search_add(s, 0, 0, "+b\n", NULL), SCORE_OTHER_CRASH));
		assert_string_equal(search_should_stop(s, 1), "iteration limit reached");
		assert_int_equal(search_node_score(s, search_best(s)), SCORE_OTHER_CRASH);
	}
	l = SEARCH_LIMITS_DEFAULT;
	{
		_cleanup_(search_freep) struct search *s = NULL;

		l.max_tokens = 1000;
		assert_int_equal(search_new(&l, 0, &s), 0);
		search_spend(s, 999, 0);
		assert_null(search_should_stop(s, 1));
		search_spend(s, 1, 0);
		assert_string_equal(search_should_stop(s, 1), "token budget spent");
	}
	l = SEARCH_LIMITS_DEFAULT;
	{
		_cleanup_(search_freep) struct search *s = NULL;

		l.max_cost = 0.5;
		assert_int_equal(search_new(&l, 0, &s), 0);
		search_spend(s, 10, 0.25);
		assert_null(search_should_stop(s, 1));
		search_spend(s, 10, 0.25);
		assert_string_equal(search_should_stop(s, 1), "cost budget spent");
	}
	l = SEARCH_LIMITS_DEFAULT;
	{
		_cleanup_(search_freep) struct search *s = NULL;

		l.wall_usec = 60 * 1000000ull;
		assert_int_equal(search_new(&l, 1000000, &s), 0);
		assert_null(search_should_stop(s, 60 * 1000000ull));
		assert_string_equal(search_should_stop(s, 61 * 1000000ull), "wall-clock limit reached");
	}
	l = SEARCH_LIMITS_DEFAULT;
	{
		_cleanup_(search_freep) struct search *s = NULL;

		assert_int_equal(search_new(&l, 0, &s), 0);
		n = search_add(s, 0, 0, "+a\n", NULL);
		assert_true(search_score(s, n, SCORE_VALIDATED));
		/* a worse attempt later does not replace the best node */
		assert_false(search_score(s, search_add(s, 0, 0, "+b\n", NULL), SCORE_SAME_CRASH));
		assert_string_equal(search_should_stop(s, 1), "validated");
		assert_int_equal(search_best(s), n);
	}
}

/* The code shown for the crashing frames stops at the context budget:
 * closest frame first, never a part of a function. */
static void test_context_budget(void **state)
{
	static const size_t budgets[] = { 400, 48 * 1024 };
	static const int functions[] = { 1, 2 };

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(budgets); k++) {
		_cleanup_(llm_freep) struct llm *l = NULL;
		_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
		_cleanup_free_ char *err = NULL;
		_cleanup_json_ json_t *ev = NULL;
		struct model m = { .plan = PLAN_STORY, .tokens = 10 };
		struct ts t = {};
		struct repair_toolstack ts = toolstack;
		struct repair_params p;
		char out[512];
		json_t *e;
		size_t i;
		bool seen = false;

		snprintf(out, sizeof(out), "%s/out-context-%zu", tree, k);
		params(&p, out);
		p.context_budget = budgets[k];
		p.minimise = false;
		ts.ud = &t;
		assert_int_equal(llm_new_scripted("m", model_fn, &m, &l), 0);
		if (repair_run(&p, &ts, l, &s, &err) < 0)
			fail_msg("repair failed: %s", err);
		ev = events(out);
		json_array_foreach(ev, i, e) {
			json_t *o = json_object_get(e, "output");

			if (!streq_ptr(json_get_str(e, "step"), "localise") ||
			    !streq_ptr(json_get_str(e, "kind"), "observation"))
				continue;
			seen = true;
			assert_int_equal(json_get_int(o, "functions", 0), functions[k]);
			assert_true((size_t)json_get_int(o, "bytes", 0) <= budgets[k]);
			assert_true(json_get_int(o, "bytes", 0) > 0);
		}
		assert_true(seen);
		free(t.built);
	}
}

/* Where the wall time went: a probe is a span around its build and run,
 * counted once; what no tool or model call covers is the agent's. */
static void test_summary_time_shares(void **state)
{
	_cleanup_json_ json_t *ev = json_pack(
		"[{s:s, s:I, s:i}, {s:s, s:I, s:i}, {s:s, s:I, s:i}, {s:s, s:I, s:i}, {s:s, s:I, s:i}]",
		"kind", "tool.build", "start_us", (json_int_t)1000000, "duration_ms", 10000,
		"kind", "tool.run", "start_us", (json_int_t)11000000, "duration_ms", 5000,
		"kind", "tool.probe", "start_us", (json_int_t)1000000, "duration_ms", 15000,
		"kind", "llm.call", "start_us", (json_int_t)16000000, "duration_ms", 1000,
		"kind", "tool.run", "start_us", (json_int_t)20000000, "duration_ms", 2000);
	_cleanup_json_ json_t *sum = NULL;
	json_t *ms;

	(void)state;
	assert_non_null(ev);
	sum = trajectory_summary(ev);
	ms = json_object_get(sum, "ms");
	assert_int_equal(json_get_int(sum, "wall_ms", 0), 21000);
	assert_int_equal(json_get_int(ms, "build", 0), 10000);
	assert_int_equal(json_get_int(ms, "vm", 0), 7000);
	assert_int_equal(json_get_int(ms, "llm", 0), 1000);
	assert_int_equal(json_get_int(ms, "other", 0), 3000);
	assert_int_equal(json_get_int(sum, "llm_calls", 0), 1);
}

/* The timeline counts from the earliest start: run.end, a span written
 * last, starts a little before run.start and must not show "-0.0s". */
static void test_timeline_offsets(void **state)
{
	_cleanup_json_ json_t *ev = json_pack(
		"[{s:i, s:s, s:I, s:i}, {s:i, s:s, s:I, s:i}, {s:i, s:s, s:I, s:i}]",
		"id", 1, "kind", "run.start", "start_us", (json_int_t)5000040, "duration_ms", 0,
		"id", 2, "kind", "tool.build", "start_us", (json_int_t)7000040, "duration_ms", 1000,
		"id", 3, "kind", "run.end", "start_us", (json_int_t)5000000, "duration_ms", 3000);
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(ev);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	trajectory_print(ev, f);
	assert_int_equal(fclose(f), 0);
	assert_null(strstr(out, "-0.0s"));
	assert_non_null(strstr(out, "    3      0.0s  "));
	assert_non_null(strstr(out, "    2      2.0s  "));
}

static void test_kb_and_wrap(void **state)
{
	_cleanup_json_ json_t *hits = NULL;
	_cleanup_free_ char *kb = NULL, *w = NULL, *sub = kb_subsystem_of("net/sctp/socket.c");
	const char *entries[][3] = {
		{ "KASAN-USE-AFTER-FREE-READ", "net/sctp", "KASAN: use-after-free Read in sctp_outq_tail" },
		{ "WARNING", "fs/ext4", "WARNING in ext4_write_inode" },
		{ "KASAN-USE-AFTER-FREE-READ", "fs/ext4", "KASAN: use-after-free Read in ext4_xattr" },
	};

	assert_string_equal(sub, "net/sctp");
	assert_true(asprintf(&kb, "%s/kb.jsonl", tree) > 0);
	for (size_t i = 0; i < 3; i++) {
		_cleanup_json_ json_t *e = json_pack("{s:s, s:s, s:s}", "type", entries[i][0],
						     "subsystem", entries[i][1], "title", entries[i][2]);

		assert_int_equal(kb_add(kb, e), 0);
	}
	assert_int_equal(kb_query(kb, "KASAN-USE-AFTER-FREE-READ", "net/sctp",
				  "KASAN: use-after-free Read in sctp_packet_config", 2, &hits), 0);
	assert_int_equal(json_array_size(hits), 2);
	assert_string_equal(json_get_str(json_array_get(hits, 0), "subsystem"), "net/sctp");
	assert_string_equal(json_get_str(json_array_get(hits, 1), "subsystem"), "fs/ext4");

	/* the real fix lands for the ext4 bug: its entry learns it once, and
	 * is preferred over an equally close entry without one */
	{
		_cleanup_json_ json_t *up = json_pack("{s:s}", "commit", "abc"), *fb = json_object();
		_cleanup_json_ json_t *e = NULL, *h2 = NULL;

		for (int k = 0; k < 2; k++)
			assert_int_equal(kb_amend(kb, entries[2][2], up, "the real fix", fb), 0);
		assert_int_equal(kb_query(kb, "KASAN-USE-AFTER-FREE-READ", "fs/ext4",
					  "KASAN: use-after-free Read in ext4_xattr", 1, &h2), 0);
		e = json_incref(json_array_get(h2, 0));
		assert_string_equal(json_get_str(e, "title"), entries[2][2]);
		assert_int_equal(json_array_size(json_object_get(e, "lessons")), 1);
		assert_string_equal(json_string_value(json_array_get(json_object_get(e, "lessons"), 0)),
				    "the real fix");
		assert_string_equal(json_get_str(json_object_get(e, "upstream"), "commit"), "abc");
		/* appends after the rewrite land in the new file */
		assert_int_equal(kb_add(kb, fb), 0);
		json_decref(h2);
		h2 = NULL;
		assert_int_equal(kb_amend(kb, "a bug never repaired here before today", up, "only the fix", fb), 0);
		assert_int_equal(kb_query(kb, NULL, NULL, "a bug never repaired here before today", 5, &h2), 0);
		assert_int_equal(json_array_size(h2), 1);
		assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(h2, 0),
										    "lessons"), 0)),
				    "only the fix");
	}

	w = repair_wrap("one two three four five six seven eight nine ten\nsame paragraph\n\nnew", 20);
	assert_string_equal(w, "one two three four\nfive six seven eight\nnine ten same\nparagraph\n\nnew");
}

static int setup(void **state)
{
	char path[512];
	const char *top = getenv("top_srcdir") ?: ".";

	snprintf(path, sizeof(path), "%s/agent/prompts", top);
	setenv("KFIX_PROMPTS_DIR", path, 1);
	if (!mkdtemp(tree))
		return -1;
	snprintf(path, sizeof(path), "%s/net/foo", tree);
	if (mkdir_p(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/net/foo/foo.c", tree);
	return write_file_atomic(path, foo_c, strlen(foo_c), 0644);
}

static int teardown(void **state)
{
	return getenv("KFIX_KEEP_TEST") ? 0 : rm_rf(tree);
}

/* The schema's defaults are the ones the structs get for unset keys. */
static void test_conf_from_config(void **state)
{
	struct config *c = NULL;
	struct search_limits l, d = SEARCH_LIMITS_DEFAULT;
	_cleanup_(llm_agent_conf_free) struct llm_agent_conf ac = { 0 };
	_cleanup_(toolstack_conf_free) struct toolstack_conf tc = { 0 };

	(void)state;
	assert_int_equal(config_new_empty(&c), 0);
	assert_int_equal(search_limits_from_config(c, &l), 0);
	assert_memory_equal(&l, &d, sizeof(l));
	assert_int_equal(llm_agent_conf_from_config(c, &ac), 0);
	assert_null(ac.llm);
	assert_null(ac.iterate_llm);
	assert_false(ac.record);
	assert_int_equal(toolstack_conf_from_config(c, "net", &tc), 0);
	assert_null(tc.build);
	assert_null(tc.vm);
	assert_string_equal(tc.index_dir, "/var/cache/kfix/index");
	assert_string_equal(tc.selftests, "auto");
	assert_int_equal(tc.selftest_timeout_usec, 120 * 1000000ULL);
	toolstack_conf_free(&tc);
	llm_agent_conf_free(&ac);

	assert_int_equal(config_set(c, "agent", NULL, "max-cost", "lots"), 0);
	assert_int_equal(search_limits_from_config(c, &l), -EINVAL);
	assert_int_equal(config_set(c, "agent", NULL, "llm", "fast"), 0);
	assert_int_equal(config_set(c, "agent", NULL, "iterate-llm", "slow"), 0);
	assert_int_equal(config_set(c, "agent", NULL, "record", "true"), 0);
	assert_int_equal(llm_agent_conf_from_config(c, &ac), 0);
	assert_string_equal(ac.llm, "fast");
	assert_string_equal(ac.iterate_llm, "slow");
	assert_true(ac.record);
	assert_int_equal(config_set(c, "build", "b1", "jobs", "4"), 0);
	assert_int_equal(config_set(c, "vm", "v1", "count", "2"), 0);
	assert_int_equal(config_set(c, "tree", "net", "selftests", "net"), 0);
	assert_int_equal(config_set(c, "agent", NULL, "index-dir", "/srv/index"), 0);
	assert_int_equal(toolstack_conf_from_config(c, "net", &tc), 0);
	assert_string_equal(tc.build, "b1");
	assert_string_equal(tc.vm, "v1");
	assert_string_equal(tc.index_dir, "/srv/index");
	assert_string_equal(tc.selftests, "net");
	toolstack_conf_free(&tc);
	assert_int_equal(toolstack_conf_from_config(c, "mm", &tc), 0);
	assert_string_equal(tc.selftests, "auto");
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_tree),
		cmocka_unit_test(test_search_guards),
		cmocka_unit_test(test_context_budget),
		cmocka_unit_test(test_kb_and_wrap),
		cmocka_unit_test(test_summary_time_shares),
		cmocka_unit_test(test_story),
		cmocka_unit_test(test_timeline_offsets),
		cmocka_unit_test(test_story_over_http_and_replay),
		cmocka_unit_test(test_search_locations), cmocka_unit_test(test_hopeless_search_stops),
		cmocka_unit_test(test_rerun_from_localisation),
		cmocka_unit_test(test_explained_by_the_validated_hypothesis),
		cmocka_unit_test(test_same_patch_and_budget),
		cmocka_unit_test(test_not_reproduced),
		cmocka_unit_test(test_expected_title),
		cmocka_unit_test(test_reproduced_report_read),
		cmocka_unit_test(test_validation_counts_every_run),
		cmocka_unit_test(test_patched_kernel_down_is_an_attempt),
		cmocka_unit_test(test_behaviour_changed_is_not_fixed),
		cmocka_unit_test(test_selftest_regression_is_not_fixed),
		cmocka_unit_test(test_review_rejects),
		cmocka_unit_test(test_review_minimised),
		cmocka_unit_test(test_review_off),
		cmocka_unit_test(test_conf_from_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
