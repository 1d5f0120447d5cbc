/* Comparing kfix's patch with the developers' fix: each class of pair
 * (the same change, the same place changed differently, the same place
 * in a tree that moved on, another spot of the same function, another
 * function, another file) gets its verdict.  The diffs are made by GNU
 * diff from two versions of a kernel-like file, as a tree would show
 * them. */
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

#include "agent/fixcompare.h"
#include "agent/llm.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"

static char dir[] = "/tmp/kfix-test-fixcompare.XXXXXX";

/* A file of nfunc functions; `pad` blank-comment lines above them (a
 * later tree), and edits: for function f, line l (0-based in its body)
 * replaced by text (NULL: unchanged). */
struct edit { int func, line; const char *text; };

static char *make_file(int nfunc, int pad, const struct edit *e, size_t ne)
{
	struct buf b = BUF_INIT(1 << 20);

	buf_puts(&b, "// SPDX-License-Identifier: GPL-2.0\n#include <linux/slab.h>\n\n");
	for (int i = 0; i < pad; i++)
		buf_printf(&b, "/* moved on %d */\n", i);
	for (int f = 0; f < nfunc; f++) {
		buf_printf(&b, "static int ipc_step%d(struct ipc_ns *ns, struct msg_queue *q)\n{\n", f);
		for (int l = 0; l < 12; l++) {
			const char *t = NULL;

			for (size_t k = 0; k < ne; k++)
				if (e[k].func == f && e[k].line == l)
					t = e[k].text;
			if (t)
				buf_printf(&b, "%s\n", t);
			else
				buf_printf(&b, "\tq->field%d = ns->count%d + %d;\n", l, f, l);
		}
		buf_puts(&b, "\treturn 0;\n}\n\n");
	}
	return buf_steal(&b, NULL);
}

static char *udiff(const char *path, const char *old, const char *new_text)
{
	char a[256], b[256], cmd[1024], chunk[4096];
	struct buf out = BUF_INIT(1 << 20);
	FILE *p;
	size_t n;

	snprintf(a, sizeof(a), "%s/old", dir);
	snprintf(b, sizeof(b), "%s/new", dir);
	assert_int_equal(write_file_atomic(a, old, strlen(old), 0600), 0);
	assert_int_equal(write_file_atomic(b, new_text, strlen(new_text), 0600), 0);
	snprintf(cmd, sizeof(cmd), "diff -p -U3 --label a/%s --label b/%s %s %s", path, path, a, b);
	p = popen(cmd, "r");
	assert_non_null(p);
	buf_printf(&out, "diff --git a/%s b/%s\n", path, path);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		buf_append(&out, chunk, n);
	pclose(p);
	return buf_steal(&out, NULL);
}

struct old_files { const char *path, *text; };

static int read_old(void *ud, const char *path, char **ret, size_t *ret_len)
{
	const struct old_files *o = ud;

	for (; o->path; o++)
		if (streq(o->path, path)) {
			*ret = strdup(o->text);
			*ret_len = strlen(o->text);
			return *ret ? 0 : -ENOMEM;
		}
	return -ENOENT;
}

struct pair {
	const char *kfix_path, *dev_path;
	struct edit kfix[3], dev[3];
	size_t nk, nd;
	int dev_pad; /* the developers' tree has moved on */
	bool sections_only; /* no pre-images: git's section lines name functions */
};

static json_t *compare(const struct pair *p)
{
	_cleanup_free_ char *base = make_file(6, 0, NULL, 0), *dbase = make_file(6, p->dev_pad, NULL, 0);
	_cleanup_free_ char *kn = make_file(6, 0, p->kfix, p->nk), *dn = make_file(6, p->dev_pad, p->dev, p->nd);
	_cleanup_free_ char *kd = udiff(p->kfix_path, base, kn), *dd = udiff(p->dev_path, dbase, dn);
	struct old_files ko[] = { { p->kfix_path, base }, {} }, dO[] = { { p->dev_path, dbase }, {} };
	struct fixcompare_side ks = { .diff = kd, .read_old = p->sections_only ? NULL : read_old, .ud = ko };
	struct fixcompare_side ds = { .diff = dd, .read_old = p->sections_only ? NULL : read_old, .ud = dO };
	_cleanup_free_ char *err = NULL;
	json_t *j = NULL;

	assert_int_equal(fixcompare_diffs(&ks, &ds, &j, &err), 0);
	return j;
}

static const char *verdict(const json_t *j)
{
	return json_string_value(json_object_get(j, "verdict"));
}

#define GUARD "\tif (!q || q->q_cbytes < 0)\n\t\treturn -EINVAL;"
#define GUARD2 "\tif (unlikely(!q))\n\t\treturn -ENOENT;"

static void test_same_change(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } }, { { 2, 5, GUARD } }, 1, 1 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same");
	assert_true(json_is_true(json_object_get(j, "matches")));
	assert_true(json_real_value(json_object_get(j, "similarity")) > 0.99);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "hunks"), "overlapping")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(j, "functions"),
										 "shared"), 0)),
			    "ipc/msg.c:ipc_step2");
}

static void test_same_place_other_code(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } }, { { 2, 6, GUARD2 } }, 1, 1 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same-place");
	assert_true(json_is_true(json_object_get(j, "matches")));
	assert_true(json_real_value(json_object_get(j, "similarity")) < 0.8);
}

/* 40 lines above the function in the developers' tree: the hunk's place
 * is counted from the function's start, so it still meets kfix's. */
static void test_tree_moved_on(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 3, 1, GUARD } }, { { 3, 1, GUARD2 } }, 1, 1, 40 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same-place");
}

static void test_same_function_elsewhere(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 4, 0, GUARD } }, { { 4, 11, GUARD2 } }, 1, 1 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same-function");
	assert_false(json_is_true(json_object_get(j, "matches")));
}

static void test_other_function(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 1, 5, GUARD } }, { { 4, 5, GUARD } }, 1, 1 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same-file");
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "functions"), "shared")), 0);
}

static void test_other_file(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/util.c", { { 1, 5, GUARD } }, { { 1, 5, GUARD } }, 1, 1 };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "different");
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "files"), "shared")), 0);
}

/* Without the files before the change, diff's section lines name the
 * functions. */
static void test_sections_only(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 2, 1, GUARD } }, { { 2, 10, GUARD2 } }, 1, 1, 0, true };
	_cleanup_json_ json_t *j = compare(&p);

	(void)state;
	assert_string_equal(verdict(j), "same-function");
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(j, "functions"),
										 "shared"), 0)),
			    "ipc/msg.c:ipc_step2");
}

/* Two hunks against one: only the developers' hunks are counted as
 * overlapping, once each. */
static void test_extra_hunk(void **state)
{
	struct pair p = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD }, { 5, 5, GUARD } },
			  { { 2, 5, GUARD } }, 2, 1 };
	_cleanup_json_ json_t *j = compare(&p);
	json_t *h;

	(void)state;
	h = json_object_get(j, "hunks");
	assert_int_equal(json_integer_value(json_object_get(h, "kfix")), 2);
	assert_int_equal(json_integer_value(json_object_get(h, "developer")), 1);
	assert_int_equal(json_integer_value(json_object_get(h, "overlapping")), 1);
	assert_string_equal(verdict(j), "same-place");
}

static bool equivalent(const struct pair *p)
{
	_cleanup_json_ json_t *j = compare(p);
	bool eq = json_is_true(json_object_get(j, "equivalent"));

	/* equivalent fixes are always "same" */
	if (eq)
		assert_string_equal(verdict(j), "same");
	return eq;
}

#define GUARD_WRAPPED "\tif (!q ||   /* the queue may be gone */\n\t    q->q_cbytes < 0)\n\t\treturn -EINVAL;"
#define LOCAL_ERR "\tint err = -EINVAL;\n\tif (!q)\n\t\treturn err;"
#define LOCAL_RET "\tint ret = -EINVAL;\n\tif (!q)\n\t\treturn ret;"
#define LABEL_A "\tif (!q)\n\t\tgoto out_unlock;\nout_unlock:"
#define LABEL_B "\tif (!q)\n\t\tgoto bad;\nbad:"

/* The equivalence rules, one class of pair each: what changes nothing
 * (layout, comments, the fix's own names) and what does. */
static void test_equivalent(void **state)
{
	const struct pair same = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } }, { { 2, 5, GUARD } }, 1, 1 };
	const struct pair wrapped = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } },
				      { { 2, 5, GUARD_WRAPPED } }, 1, 1 };
	const struct pair moved_on = { "ipc/msg.c", "ipc/msg.c", { { 3, 1, GUARD } },
				       { { 3, 1, GUARD_WRAPPED } }, 1, 1, 40 };
	/* the developers also re-indented the line below theirs */
	const struct pair reindented = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } },
					 { { 2, 5, GUARD }, { 2, 6, "\t\tq->field6  =  ns->count2 + 6;" } }, 1, 2 };
	const struct pair renamed = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, LOCAL_ERR } },
				      { { 2, 5, LOCAL_RET } }, 1, 1 };
	const struct pair label = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, LABEL_A } }, { { 2, 5, LABEL_B } }, 1, 1 };
	const struct pair two = { "ipc/msg.c", "ipc/msg.c", { { 1, 5, LOCAL_ERR }, { 4, 2, LOCAL_ERR } },
				  { { 1, 5, LOCAL_RET }, { 4, 2, LOCAL_RET } }, 2, 2 };
	/* the names the file had already are not the fix's to choose */
	const struct pair other_var = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, "\tif (!q)\n\t\treturn -EINVAL;" } },
					{ { 2, 5, "\tif (!ns)\n\t\treturn -EINVAL;" } }, 1, 1 };
	/* a call to a function neither file had is no declaration */
	const struct pair other_call = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, "\tkfree(q);" } },
					 { { 2, 5, "\tvfree(q);" } }, 1, 1 };
	const struct pair other_error = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } },
					  { { 2, 5, "\tif (!q || q->q_cbytes < 0)\n\t\treturn -ENOENT;" } }, 1, 1 };
	const struct pair same_function = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } },
					    { { 2, 11, GUARD } }, 1, 1 };
	const struct pair elsewhere = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD } }, { { 4, 5, GUARD } }, 1, 1 };
	const struct pair other_file = { "ipc/msg.c", "ipc/util.c", { { 2, 5, GUARD } }, { { 2, 5, GUARD } }, 1, 1 };
	const struct pair extra = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, GUARD }, { 5, 5, GUARD } },
				    { { 2, 5, GUARD } }, 2, 1 };
	const struct pair sections = { "ipc/msg.c", "ipc/msg.c", { { 2, 5, LOCAL_ERR } },
				       { { 2, 5, LOCAL_RET } }, 1, 1, 0, true };

	(void)state;
	assert_true(equivalent(&same));
	assert_true(equivalent(&wrapped));
	assert_true(equivalent(&moved_on));
	assert_true(equivalent(&reindented));
	assert_true(equivalent(&renamed));
	assert_true(equivalent(&label));
	assert_true(equivalent(&two));
	assert_true(equivalent(&sections));
	assert_false(equivalent(&other_var));
	assert_false(equivalent(&other_call));
	assert_false(equivalent(&other_error));
	assert_false(equivalent(&same_function));
	assert_false(equivalent(&elsewhere));
	assert_false(equivalent(&other_file));
	assert_false(equivalent(&extra));
}

/* One name given two different names by the other fix is no rename. */
static void test_rename_consistent(void **state)
{
	const struct pair p = { "ipc/msg.c", "ipc/msg.c",
				{ { 2, 5, "\tint err = -EINVAL;\n\tint len = 0;\n\tif (!q)\n\t\treturn err + len;" } },
				{ { 2, 5, "\tint ret = -EINVAL;\n\tint n = 0;\n\tif (!q)\n\t\treturn n + ret;" } }, 1, 1 };

	(void)state;
	assert_false(equivalent(&p));
}

static void test_bad_input(void **state)
{
	struct fixcompare_side a = { .diff = "diff --git a/x b/x\n@@ garbage @@\n" };
	struct fixcompare_side b = { .diff = "" };
	_cleanup_free_ char *err = NULL;
	json_t *j = NULL;

	(void)state;
	assert_true(fixcompare_diffs(&a, &b, &j, &err) < 0);
	assert_null(j);
	assert_non_null(err);
	assert_false(fixcompare_verdict_matches("same-function"));
	assert_false(fixcompare_verdict_matches(NULL));
	assert_true(fixcompare_verdict_matches("same"));
}

/* The model judge: it is shown both diffs, and only a judge_equivalence
 * call is an answer. */
static int judge_model(void *ud, const json_t *req, json_t **ret)
{
	int *n = ud;
	const char *user = json_get_str(json_array_get(json_object_get(req, "messages"), 0), "content");

	assert_non_null(strstr(user, "+\tif (!q) ours"));
	assert_non_null(strstr(user, "+\tif (!q) theirs"));
	if ((*n)++ == 0)
		*ret = json_pack("{s:[{s:s, s:s, s:{s:b, s:s}}], s:i, s:i}", "tool_calls", "id", "c1", "name",
				 "judge_equivalence", "arguments", "equivalent", 1, "reason",
				 "both return before q is read", "input_tokens", 50, "output_tokens", 5);
	else
		*ret = json_pack("{s:s}", "text", "they look alike");
	return 0;
}

static void test_judge(void **state)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *err = NULL;
	int n = 0;

	(void)state;
	assert_int_equal(llm_new_scripted("judge", judge_model, &n, &l), 0);
	assert_int_equal(fixcompare_judge(l, "+\tif (!q) ours\n", "+\tif (!q) theirs\n", &j, &err), 0);
	assert_true(json_is_true(json_object_get(j, "equivalent")));
	assert_string_equal(json_string_value(json_object_get(j, "reason")), "both return before q is read");
	assert_int_equal(json_integer_value(json_object_get(j, "tokens_in")), 50);
	json_decref(j);
	j = NULL;
	assert_int_equal(fixcompare_judge(l, "+\tif (!q) ours\n", "+\tif (!q) theirs\n", &j, &err), -EBADMSG);
	assert_null(j);
	assert_non_null(strstr(err, "judge_equivalence"));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_change),
		cmocka_unit_test(test_same_place_other_code),
		cmocka_unit_test(test_tree_moved_on),
		cmocka_unit_test(test_same_function_elsewhere),
		cmocka_unit_test(test_other_function),
		cmocka_unit_test(test_other_file),
		cmocka_unit_test(test_sections_only),
		cmocka_unit_test(test_extra_hunk),
		cmocka_unit_test(test_equivalent),
		cmocka_unit_test(test_rename_consistent),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
