/* The repair agent's steps as conversations, with the real exploration
 * tools on a real git tree: a scripted model that finds a fix lying
 * outside every function on the crash stack only through the tools (it
 * builds its edit from a tool's answer), corrects an edit whose "before"
 * does not match, corrects a probe that does not compile, probes on top
 * of a candidate patch, hands a question to the code expert; and the
 * limits: turns per step, the loop judge, context compression.
 *
 * The model only uses what kfix showed it: every text it sends back is
 * cut out of a tool answer in the request it is answering. */
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

#include "agent/edits.h"
#include "agent/explore.h"
#include "agent/llm.h"
#include "agent/repair.h"
#include "agent/trajectory.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "repro/tree.h"

static char dir[] = "/tmp/kfix-test-agent-loop.XXXXXX";
static char base[TREE_OID_HEX];
static struct tree *gt;

/* The crash is in foo_release(); the bug is that foo_alloc(), in another
 * file and on no stack, never initialises the item list. */
static const char foo_c[] =
	"// SPDX-License-Identifier: GPL-2.0\n"
	"#include <linux/slab.h>\n"
	"#include \"foo.h\"\n"
	"\n"
	"void foo_release(struct foo *f)\n"
	"{\n"
	"\tstruct foo_item *it = f->items;\n"
	"\n"
	"\twhile (it) {\n"
	"\t\tstruct foo_item *next = it->next;\n"
	"\n"
	"\t\tkfree(it);\n"
	"\t\tit = next;\n"
	"\t}\n"
	"\tkfree(f);\n"
	"}\n";

static const char alloc_c[] =
	"// SPDX-License-Identifier: GPL-2.0\n"
	"#include <linux/slab.h>\n"
	"#include \"foo.h\"\n"
	"\n"
	"struct foo *foo_alloc(void)\n"
	"{\n"
	"\tstruct foo *f = kmalloc(sizeof(*f), GFP_KERNEL);\n"
	"\n"
	"\tif (!f)\n"
	"\t\treturn NULL;\n"
	"\tf->n = 0;\n"
	"\treturn f;\n"
	"}\n";

#define TITLE "KASAN: wild-memory-access Read in foo_release"
static const char report[] =
	"BUG: KASAN: wild-memory-access in foo_release+0x1a/0x80 net/foo/foo.c:10\n"
	"Read of size 8 at addr dead000000000100 by task syz-executor/1234\n"
	"\n"
	"Call Trace:\n"
	" <TASK>\n"
	" kasan_report+0x10/0x20 mm/kasan/report.c:588\n"
	" foo_release+0x1a/0x80 net/foo/foo.c:10\n"
	" foo_ioctl+0x10/0x20 net/foo/foo.c:40\n"
	" </TASK>\n";

/* --- toolstack: edits on the checkout, builds and runs scripted ------------- */

struct ts {
	char *built;
	unsigned builds, probe_builds, compiles;
};

static int ts_read(void *ud, const char *path, char **ret, size_t *ret_len)
{
	(void)ud;
	return tree_read_file(gt, base, path, 0, ret, ret_len);
}

static int ts_apply(void *ud, const json_t *edits, char **ret_diff, char **ret_error)
{
	(void)ud;
	return edits_apply(dir, edits, ret_diff, ret_error);
}

static int ts_build(void *ud, const char *diff, char **ret_log)
{
	struct ts *t = ud;

	t->builds++;
	if (diff && strstr(diff, "kfix-probe"))
		t->probe_builds++;
	free(t->built);
	t->built = diff ? strdup(diff) : NULL;
	if (diff && strstr(diff, "f->nn")) {
		*ret_log = strdup("  CC      net/foo/alloc.o\n"
				  "net/foo/alloc.c:12:30: error: 'struct foo' has no member named 'nn'; did you mean 'n'?\n"
				  "make[3]: *** [scripts/Makefile.build:250: net/foo/alloc.o] Error 1\n");
		return -ENOEXEC;
	}
	*ret_log = strdup("  CC      net/foo/alloc.o\n  LD      vmlinux\n");
	return 0;
}

static int ts_run(void *ud, unsigned runs, struct repair_outcome *ret)
{
	struct ts *t = ud;
	bool fixed = t->built && strstr(t->built, "+\tf->items = NULL;");

	ret->runs = runs;
	if (fixed) {
		ret->survived = runs;
		ret->log = strdup(t->built && strstr(t->built, "kfix-probe") ?
				  "[ 4.0] kfix-probe alloc items=0000000000000000\nall runs finished\n" :
				  "all runs finished\n");
		return 0;
	}
	ret->crashed = runs;
	ret->title = strdup(TITLE);
	ret->log = strdup(t->built && strstr(t->built, "kfix-probe") ?
			  "[ 4.0] kfix-probe alloc items=dead000000000100\n" :
			  report);
	return 0;
}

static int ts_compile(void *ud, const char *diff, char **ret_log)
{
	struct ts *t = ud;

	t->compiles++;
	if (strstr(diff, "f->nn")) {
		*ret_log = strdup("  CC      net/foo/alloc.o\n"
				  "net/foo/alloc.c:12:10: error: 'struct foo' has no member named 'nn'\n");
		return -ENOEXEC;
	}
	*ret_log = strdup("  CC      net/foo/alloc.o\n");
	return 0;
}

static int ts_explore(void *ud, const char *name, const json_t *args, char **ret)
{
	_cleanup_(explore_freep) struct explore *e = NULL;
	int r;

	(void)ud;
	r = explore_new(gt, base, &e);
	return r < 0 ? r : explore_call(e, name, args, ret);
}

static const struct repair_toolstack toolstack = {
	.read_file = ts_read, .apply = ts_apply, .build = ts_build, .run = ts_run,
	.explore = ts_explore, .compile = ts_compile,
};

/* --- the scripted model ------------------------------------------------------ */

enum mode { MODE_SOLVE, MODE_LOOPS, MODE_WANDERS, MODE_READS_A_LOT };

struct model {
	enum mode mode;
	unsigned calls, wander;
	bool saw_closest, saw_compiler, saw_patched_probe, saw_compile_error, saw_checkpatch;
	/* the hypotheses step asks the code expert first */
	bool expert, expert_offered_expert, saw_expert;
	char *fix_before;	/* what the edit's before was cut from */
};

static json_t *call1(const char *name, json_t *args)
{
	static unsigned n;
	char id[32];

	/* ids are unique, as the providers make them */
	snprintf(id, sizeof(id), "call_%u", ++n);
	return json_pack("{s:[{s:s, s:s, s:o}], s:i, s:i}", "tool_calls", "id", id, "name", name,
			 "arguments", args, "input_tokens", 500, "output_tokens", 50);
}

/* The content of the latest tool answer in the conversation. */
static const char *last_answer(const json_t *req)
{
	const json_t *msgs = json_object_get(req, "messages");

	for (size_t i = json_array_size(msgs); i-- > 0;) {
		const json_t *m = json_array_get(msgs, i);

		if (streq_ptr(json_get_str(m, "role"), "tool"))
			return json_get_str(m, "content");
		if (streq_ptr(json_get_str(m, "role"), "user") && i > 0)
			continue;
	}
	return NULL;
}

/* The answer to the latest call of tool in the conversation. */
static const char *last_answer_of(const json_t *req, const char *tool)
{
	const json_t *msgs = json_object_get(req, "messages"), *m, *call;
	const char *id = NULL, *found = NULL;
	size_t i, k;

	json_array_foreach(msgs, i, m) {
		json_array_foreach(json_object_get(m, "tool_calls"), k, call)
			if (streq_ptr(json_get_str(call, "name"), tool))
				id = json_get_str(call, "id");
		if (id && streq_ptr(json_get_str(m, "role"), "tool") &&
		    streq_ptr(json_get_str(m, "tool_call_id"), id))
			found = json_get_str(m, "content");
	}
	return found;
}

/* Turns of the step so far: the assistant messages. */
static unsigned turns(const json_t *req)
{
	const json_t *msgs = json_object_get(req, "messages"), *m;
	unsigned n = 0;
	size_t i;

	json_array_foreach(msgs, i, m)
		n += streq_ptr(json_get_str(m, "role"), "assistant");
	return n;
}

/* Line `line` of a numbered answer ("%6u\t" + text), with its newline;
 * NULL when the answer does not show it. */
static char *numbered_line(const char *answer, unsigned line)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "%6u\t", line);
	p = answer ? strstr(answer, key) : NULL;
	if (!p)
		return NULL;
	p += strlen(key);
	return strndup(p, strcspn(p, "\n") + 1);
}

static bool offers(const json_t *req, const char *name)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(req, "tools"), i, t)
		if (streq_ptr(json_get_str(t, "name"), name))
			return true;
	return false;
}

static json_t *solve_localise(struct model *m, const json_t *req)
{
	const char *ans = last_answer(req);
	unsigned n = turns(req);

	if (n == 0)	/* who sets the list the crash walks? */
		return call1("grep", json_pack("{s:s, s:s}", "pattern", "kmalloc(sizeof(*f)",
					       "path", "net/foo"));
	if (n == 1) {
		/* "net/foo/alloc.c:7: ..." : read around it */
		assert_non_null(strstr(ans, "net/foo/alloc.c:7:"));
		return call1("read_file", json_pack("{s:s, s:i, s:i}", "path", "net/foo/alloc.c",
						    "start", 1, "end", 13));
	}
	(void)m;
	return call1("propose_location", json_pack("{s:s, s:s, s:i, s:i, s:s}", "file",
		     "net/foo/alloc.c", "function", "foo_alloc", "start_line", 5, "end_line", 13,
		     "reason", "the list head is never initialised"));
}

static json_t *probe_edit(const char *before, const char *line)
{
	char after[512];

	snprintf(after, sizeof(after), "%s%s", before, line);
	return json_pack("[{s:s, s:s, s:s}]", "file", "net/foo/alloc.c", "before", before,
			 "after", after);
}

static json_t *solve_probe(struct model *m, const json_t *req)
{
	const char *ans = last_answer(req);

	if (turns(req) == 0)	/* a typo the compiler will tell about */
		return call1("request_probes", json_pack("{s:s, s:o}", "why", "what the list holds",
			     "edits", probe_edit("\tf->n = 0;\n",
			     "\tpr_err(\"kfix-probe alloc items=%px\\n\", f->nn);\n")));
	m->saw_compiler = ans && strstr(ans, "has no member named 'nn'");
	assert_true(m->saw_compiler);
	return call1("request_probes", json_pack("{s:s, s:o}", "why", "what the list holds",
		     "edits", probe_edit("\tf->n = 0;\n",
		     "\tpr_err(\"kfix-probe alloc items=%px\\n\", f->items);\n")));
}

static json_t *fix_edits(const char *before)
{
	char after[512];

	snprintf(after, sizeof(after), "%s\tf->items = NULL;\n", before);
	return json_pack("[{s:s, s:s, s:s}]", "file", "net/foo/alloc.c", "before", before,
			 "after", after);
}

static json_t *solve_patch(struct model *m, const json_t *req)
{
	const char *ans = last_answer(req);
	unsigned n = turns(req);

	assert_true(offers(req, "run_probe"));
	if (n == 0)	/* the line to extend, from the file as the tool shows it */
		return call1("read_file", json_pack("{s:s, s:i, s:i}", "path", "net/foo/alloc.c",
						    "start", 11, "end", 11));
	if (n == 1) {
		_cleanup_free_ char *line = numbered_line(ans, 11);

		assert_non_null(line);
		/* a probe on top of the candidate */
		return call1("run_probe", json_pack("{s:s, s:o, s:o}", "why", "is the list empty now",
			     "patch_edits", fix_edits(line), "edits",
			     probe_edit("\tf->items = NULL;\n",
					"\tpr_err(\"kfix-probe alloc items=%px\\n\", f->items);\n")));
	}
	if (n == 2) {
		_cleanup_free_ char *line = numbered_line(last_answer_of(req, "read_file"), 11);
		_cleanup_json_ json_t *typo = fix_edits(line);

		m->saw_patched_probe = strstr(ans, "kfix-probe alloc items=0000000000000000") &&
				       strstr(ans, "did not crash (with the patch edits applied)");
		assert_true(m->saw_patched_probe);
		/* a typo the compile check finds in seconds */
		json_object_set_new(json_array_get(typo, 0), "after",
				    json_sprintf("%s\tf->nn = NULL;\n", line));
		return call1("check_compile", json_pack("{s:O}", "edits", typo));
	}
	if (n == 3) {
		_cleanup_free_ char *line = numbered_line(last_answer_of(req, "read_file"), 11);
		_cleanup_json_ json_t *spaced = fix_edits(line);

		m->saw_compile_error = strstr(ans, "does not compile") &&
				       strstr(ans, "has no member named 'nn'");
		assert_true(m->saw_compile_error);
		/* the tree's style check finds spaces for a tab */
		json_object_set_new(json_array_get(spaced, 0), "after",
				    json_sprintf("%s        f->items = NULL;\n", line));
		return call1("checkpatch", json_pack("{s:O}", "edits", spaced));
	}
	if (n == 4) {
		m->saw_checkpatch = strstr(ans, "checkpatch.pl: 1 error(s), 0 warning(s)") &&
				    strstr(ans, "ERROR:CODE_INDENT: code indent should use tabs");
		assert_true(m->saw_checkpatch);
		/* a "before" with spaces where the file has a tab */
		return call1("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
			     "edits", fix_edits("        f->n = 0;\n")));
	}
	{
		/* the closest match shows the real line: copy it */
		_cleanup_free_ char *line = numbered_line(ans, 11);

		m->saw_closest = ans && strstr(ans, "Closest match: lines 11-11") &&
				 strstr(ans, "only the blanks differ");
		assert_true(m->saw_closest);
		assert_non_null(line);
		free(m->fix_before);
		m->fix_before = strdup(line);
		return call1("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
			     "edits", fix_edits(line)));
	}
}

static json_t *wander(struct model *m, const json_t *req, const char *answer_tool)
{
	char pat[64];

	if (!offers(req, "grep"))	/* told to answer */
		return NULL;
	switch (m->mode) {
	case MODE_LOOPS:
		return call1("grep", json_pack("{s:s}", "pattern", "foo_release"));
	case MODE_WANDERS:
		snprintf(pat, sizeof(pat), "word%u", m->wander++);
		return call1("grep", json_pack("{s:s}", "pattern", pat));
	case MODE_READS_A_LOT:
		if (turns(req) < 12)
			return call1("read_file", json_pack("{s:s, s:i, s:i}", "path", "lib/big.c",
							    "start", 1 + 100 * (int)turns(req),
							    "end", 100 + 100 * (int)turns(req)));
		return NULL;
	default:
		(void)answer_tool;
		return NULL;
	}
}

/* The review reads the diff it was shown; these patches only add lines. */
static json_t *review(const json_t *req)
{
	char *all = json_dumps(req, 0);
	bool seen = all && strstr(all, "@@ ") && strstr(all, "foo_alloc");

	free(all);
	assert_true(seen);
	return call1("review_patch", json_pack("{s:s, s:s, s:[s]}", "verdict", "correct",
		     "findings", "foo_alloc() only gains an initialisation; its callers get the same object.",
		     "callers_checked", "foo_alloc"));
}

/* The expert: greps for the field, answers with what the grep showed. */
static json_t *expert_fn(struct model *m, const json_t *req)
{
	const char *user = json_get_str(json_array_get(json_object_get(req, "messages"), 0), "content");
	const char *ans = last_answer(req);

	m->expert_offered_expert |= offers(req, "ask_expert");
	assert_non_null(strstr(user, "Who sets f->items before foo_release() walks it?"));
	if (turns(req) == 0)
		return call1("grep", json_pack("{s:s, s:s}", "pattern", "items", "path", "net/foo"));
	assert_non_null(ans);
	return call1("expert_answer", json_pack("{s:s+}", "answer",
		     "Nothing sets it; these are all the lines that name it:\n", ans));
}

/* The hypothesis is built from the expert's answer, which must be the
 * tool's answer in this conversation. */
static json_t *expert_hypotheses(struct model *m, const json_t *req)
{
	const char *ans = last_answer(req);

	if (turns(req) == 0)
		return call1("ask_expert", json_pack("{s:s}", "question",
			     "Who sets f->items before foo_release() walks it?"));
	m->saw_expert = ans && startswith(ans, "Nothing sets it;") &&
			strstr(ans, "net/foo/foo.c:7:");
	assert_true(m->saw_expert);
	return call1("state_hypotheses", json_pack("{s:[{s:s, s:s, s:s}]}", "hypotheses",
		"root_cause", "foo_alloc() leaves f->items uninitialised",
		"evidence", ans, "fix_idea", "initialise the list in foo_alloc()"));
}

static int model_fn(void *ud, const json_t *req, json_t **ret)
{
	struct model *m = ud;
	const char *step = json_get_str(json_array_get(json_object_get(req, "tools"), 0), "name");

	m->calls++;
	assert_non_null(step);
	if (m->mode != MODE_SOLVE && streq(step, "propose_location") && (*ret = wander(m, req, step)))
		return 0;
	if (streq(step, "propose_location"))
		*ret = m->mode == MODE_SOLVE ? solve_localise(m, req) :
			call1("propose_location", json_pack("{s:s, s:s, s:i, s:i, s:s}", "file",
			      "net/foo/alloc.c", "function", "foo_alloc", "start_line", 5,
			      "end_line", 13, "reason", "init"));
	else if (streq(step, "request_probes"))
		*ret = m->mode == MODE_SOLVE ? solve_probe(m, req) :
			call1("skip_probes", json_pack("{s:s}", "reason", "enough"));
	else if (streq(step, "expert_answer"))
		*ret = expert_fn(m, req);
	else if (streq(step, "state_hypotheses") && m->expert)
		*ret = expert_hypotheses(m, req);
	else if (streq(step, "state_hypotheses"))
		*ret = call1("state_hypotheses", json_pack("{s:[{s:s, s:s, s:s}]}", "hypotheses",
			"root_cause", "foo_alloc() leaves f->items uninitialised",
			"evidence", "the probe prints items=dead000000000100",
			"fix_idea", "initialise the list in foo_alloc()"));
	else if (streq(step, "propose_patch"))
		*ret = m->mode == MODE_SOLVE ? solve_patch(m, req) :
			call1("propose_patch", json_pack("{s:s, s:o}", "patch_type", "root-cause fix",
			      "edits", fix_edits("\tf->n = 0;\n")));
	else if (streq(step, "write_explanation"))
		*ret = call1("write_explanation", json_pack("{s:s, s:s, s:s}", "subject",
			"net: foo: initialise the item list in foo_alloc()", "body",
			"foo_alloc() never initialises f->items, so foo_release() walks whatever the "
			"allocation held. Set the list to NULL when the object is made.",
			"root_cause", "uninitialised list head"));
	else if (streq(step, "reflect"))
		*ret = call1("reflect", json_pack("{s:s, s:s}", "analysis", "no", "next", "new_patch"));
	else if (streq(step, "review_patch"))
		*ret = review(req);
	else
		fail_msg("unexpected step %s", step);
	return 0;
}

/* --- helpers ---------------------------------------------------------------- */

static void params(struct repair_params *p, const char *name)
{
	static char out[512];

	snprintf(out, sizeof(out), "%s/out-%s", dir, name);
	repair_params_default(p);
	p->report = report;
	p->report_len = strlen(report);
	p->src_dir = dir;
	p->base_commit = base;
	p->out_dir = out;
	p->gates.checkpatch = false;
	p->base_runs = 1;
	p->validate_runs = 2;
	p->locations = 1;
	p->minimise = false;
}

static json_t *events(const struct repair_params *p)
{
	char path[1024];
	json_t *ev = NULL;

	snprintf(path, sizeof(path), "%s/trajectory.jsonl", p->out_dir);
	assert_int_equal(trajectory_load(path, &ev), 0);
	return ev;
}

static unsigned count(const json_t *ev, const char *kind, const char *verdict)
{
	const json_t *e;
	unsigned n = 0;
	size_t i;

	json_array_foreach(ev, i, e)
		n += streq_ptr(json_get_str(e, "kind"), kind) &&
		     (!verdict || streq_ptr(json_get_str(e, "verdict"), verdict));
	return n;
}

static void run(struct model *m, struct repair_params *p, struct ts *t,
		struct repair_summary **ret)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_free_ char *err = NULL;
	struct repair_toolstack ts = toolstack;

	ts.ud = t;
	assert_int_equal(llm_new_scripted("scripted", model_fn, m, &l), 0);
	if (repair_run(p, &ts, l, ret, &err) < 0)
		fail_msg("repair failed: %s", err);
}

/* --- tests ------------------------------------------------------------------ */

static void test_fix_outside_the_stack(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .mode = MODE_SOLVE };
	struct repair_params p;
	struct ts t = {};
	const json_t *e;
	bool in_tool = false, in_prompt = false;
	size_t i;

	(void)state;
	params(&p, "solve");
	p.gates.checkpatch = true;
	run(&m, &p, &t, &s);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_non_null(strstr(s->diff, "+++ b/net/foo/alloc.c"));
	assert_non_null(strstr(s->diff, "+\tf->items = NULL;"));
	assert_true(m.saw_compiler && m.saw_closest && m.saw_patched_probe && m.saw_compile_error &&
		    m.saw_checkpatch);
	assert_int_equal(t.compiles, 1);
	assert_non_null(m.fix_before);

	ev = events(&p);
	/* the edit's "before" came out of a tool answer, not the prompt */
	json_array_foreach(ev, i, e) {
		const char *k = json_get_str(e, "kind");

		if (streq_ptr(k, "tool.explore") &&
		    strstr(json_get_str(json_object_get(e, "output"), "answer") ?: "", "\tf->n = 0;"))
			in_tool = true;
		/* (the review and the explanation are asked for with the validated diff) */
		if (streq_ptr(k, "llm.call") && !streq_ptr(json_get_str(e, "step"), "explain") &&
		    !streq_ptr(json_get_str(e, "step"), "review") &&
		    json_get_int(json_object_get(e, "input"), "turn", 0) == 1 &&
		    strstr(json_get_str(json_object_get(e, "input"), "user") ?: "", "f->n = 0;"))
			in_prompt = true;
	}
	assert_true(in_tool);
	assert_false(in_prompt);
	assert_int_equal(count(ev, "tool.explore", "grep"), 1);
	assert_int_equal(count(ev, "tool.explore", "read_file"), 2);
	assert_int_equal(count(ev, "tool.explore", "run_probe"), 1);
	assert_int_equal(count(ev, "tool.explore", "check_compile"), 1);
	assert_int_equal(count(ev, "tool.compile", "build-error"), 1);
	assert_int_equal(count(ev, "tool.explore", "checkpatch"), 1);
	assert_int_equal(count(ev, "tool.checkpatch", "errors"), 1);
	/* the gate ran the same script on the patch it accepted */
	{
		bool gated = false;

		json_array_foreach(ev, i, e) {
			const json_t *g;
			size_t j;

			if (!streq_ptr(json_get_str(e, "kind"), "gate"))
				continue;
			json_array_foreach(json_object_get(json_object_get(e, "output"), "gates"), j, g)
				gated |= streq_ptr(json_get_str(g, "gate"), "checkpatch") &&
					 streq_ptr(json_get_str(g, "verdict"), "pass");
		}
		assert_true(gated);
	}
	assert_int_equal(count(ev, "guardrail", "edits sent back"), 1);
	/* the probe that did not compile, the one that ran, the one on the patch */
	assert_int_equal(count(ev, "tool.probe", "build-error"), 1);
	assert_int_equal(count(ev, "tool.probe", "crashed"), 1);
	assert_int_equal(count(ev, "tool.probe", "no crash"), 1);
	assert_int_equal(t.probe_builds, 3);
	assert_int_equal(s->tool_calls, 6);
	free(m.fix_before);
	free(t.built);
}

/* A focused question handed to the code expert: a conversation of its
 * own with the read-only tools (and no expert of its own), whose answer
 * comes back as the tool's. */
static void test_expert(void **state)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct model m = { .mode = MODE_SOLVE, .expert = true };
	struct repair_params p;
	struct ts t = {};
	const json_t *e;
	unsigned expert_calls = 0, expert_greps = 0;
	size_t i;

	(void)state;
	params(&p, "expert");
	p.gates.checkpatch = true;
	run(&m, &p, &t, &s);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	assert_true(m.saw_expert);
	assert_false(m.expert_offered_expert);
	ev = events(&p);
	assert_int_equal(count(ev, "tool.explore", "ask_expert"), 1);
	json_array_foreach(ev, i, e) {
		if (!streq_ptr(json_get_str(e, "step"), "expert"))
			continue;
		expert_calls += streq_ptr(json_get_str(e, "kind"), "llm.call");
		expert_greps += streq_ptr(json_get_str(e, "kind"), "tool.explore") &&
				streq_ptr(json_get_str(e, "verdict"), "grep");
	}
	assert_int_equal(expert_calls, 2);
	assert_int_equal(expert_greps, 1);
	free(m.fix_before);
	free(t.built);
}

/* A repair with a model of the given mode, which must still validate;
 * its trajectory. */
static json_t *run_mode(enum mode mode, struct repair_params *p)
{
	_cleanup_(repair_summary_freep) struct repair_summary *s = NULL;
	struct model m = { .mode = mode };
	struct ts t = {};

	run(&m, p, &t, &s);
	assert_int_equal(s->result, REPAIR_VALIDATED);
	free(t.built);
	return events(p);
}

static void test_loop_judge(void **state)
{
	_cleanup_json_ json_t *ev = NULL;
	struct repair_params p;

	(void)state;
	params(&p, "loops");
	ev = run_mode(MODE_LOOPS, &p);
	/* three answers, the fourth identical call is refused and the step
	 * must answer */
	assert_int_equal(count(ev, "tool.explore", "grep"), 4);
	assert_int_equal(count(ev, "guardrail", "must answer"), 1);
}

static void test_turn_limit(void **state)
{
	_cleanup_json_ json_t *ev = NULL;
	struct repair_params p;

	(void)state;
	params(&p, "wanders");
	p.turns.step_turns = 5;
	ev = run_mode(MODE_WANDERS, &p);
	/* four exploring turns, the fifth is the forced answer */
	assert_int_equal(count(ev, "tool.explore", "grep"), 4);
	assert_int_equal(count(ev, "guardrail", "must answer"), 1);
}

static void test_context_compressed(void **state)
{
	_cleanup_json_ json_t *ev = NULL;
	struct repair_params p;
	const json_t *e;
	size_t i;

	(void)state;
	params(&p, "reads");
	p.turns.context = 16 * 1024;
	ev = run_mode(MODE_READS_A_LOT, &p);
	assert_int_equal(count(ev, "tool.explore", "read_file"), 12);
	assert_true(count(ev, "guardrail", "context compressed") >= 1);
	/* what was sent stayed near the budget (the last answers stay whole) */
	json_array_foreach(ev, i, e)
		if (streq_ptr(json_get_str(e, "kind"), "guardrail") &&
		    streq_ptr(json_get_str(e, "verdict"), "context compressed"))
			assert_true(json_get_int(json_object_get(e, "output"), "bytes", 0) <=
				    16 * 1024 + 2 * 8 * 1024);
}

/* --- fixture ---------------------------------------------------------------- */

static void put(const char *rel, const char *text)
{
	char p[4096], d[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	snprintf(d, sizeof(d), "%s", p);
	*strrchr(d, '/') = '\0';
	assert_int_equal(mkdir_p(d, 0755), 0);
	assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
}

static int setup(void **state)
{
	char path[512], big[64 * 1024], cmd[1024];
	const char *top = getenv("top_srcdir") ?: ".";
	size_t n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/agent/prompts", top);
	setenv("KFIX_PROMPTS_DIR", path, 1);
	if (!mkdtemp(dir))
		return -1;
	put("net/foo/foo.c", foo_c);
	put("net/foo/alloc.c", alloc_c);
	put("net/foo/foo.h", "struct foo_item { struct foo_item *next; };\n"
			     "struct foo { int n; struct foo_item *items; };\n");
	for (int i = 1; i <= 1200; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "int value_number_%d = %d;\n", i, i);
	put("lib/big.c", big);
	/* The tree's checkpatch.pl, as kfix runs it (perl, --terse, the patch
	 * on stdin), reduced to its CODE_INDENT rule. */
	put("scripts/checkpatch.pl",
	    "#!/usr/bin/perl\nuse strict;\nmy $n = 0;\n"
	    "while (my $l = <STDIN>) {\n\t$n++;\n"
	    "\tprint \"-:$n: ERROR:CODE_INDENT: code indent should use tabs where possible\\n\"\n"
	    "\t\tif $l =~ /^\\+ {8}/;\n}\nexit 0;\n");
	snprintf(cmd, sizeof(cmd), "cd %s && git init -q && git -c user.email=t@example.org "
		 "-c user.name=T add -A && git -c user.email=t@example.org -c user.name=T "
		 "commit -qm base", dir);
	if (system(cmd) != 0)
		return -1;
	if (tree_open_path(dir, NULL, &gt) < 0 || tree_resolve(gt, "HEAD", base) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tree_free(gt);
	return getenv("KFIX_KEEP_TEST") ? 0 : rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fix_outside_the_stack),
		cmocka_unit_test(test_expert),
		cmocka_unit_test(test_loop_judge),
		cmocka_unit_test(test_turn_limit),
		cmocka_unit_test(test_context_compressed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
