/* The agent's exploration tools on a real git repository: answers with
 * line numbers, limits, confinement to the tree at the base commit. */
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

#include "agent/explore.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "repro/tags.h"
#include "repro/tree.h"

static char dir[] = "/tmp/kfix-test-explore.XXXXXX";
static char base[TREE_OID_HEX], later[TREE_OID_HEX], first[TREE_OID_HEX];
static struct tree *t;

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

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
	char big[64 * 1024];
	size_t n = 0;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	sh("cd %s && git init -q && git config user.email t@example.org && git config user.name Tester",
	   dir);
	put("kernel/sys.c", "// SPDX-License-Identifier: GPL-2.0\n#include <linux/syscalls.h>\n\n"
			    "SYSCALL_DEFINE1(foo, int, fd)\n{\n\treturn fd;\n}\n");
	sh("cd %s && git add -A && git commit -qm 'kernel: add foo'", dir);
	sh("cd %s && git rev-parse HEAD > %s/.first", dir, dir);
	for (int i = 1; i <= 500; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "int v%d = %d;\n", i, i);
	put("lib/big.c", big);
	put("include/linux/foo.h", "#ifndef FOO_H\n#define FOO_H\n#define FOO_MAX 16\n"
				   "struct foo {\n\tint n;\n\tstruct foo *next;\n};\n#endif\n");
	put("lib/util.c", "#include <linux/foo.h>\n\nstatic int foo_count(struct foo *f)\n{\n"
			  "\treturn f ? f->n : 0;\n}\n");
	put("MAINTAINERS",
	    "List of maintainers and how to submit kernel changes\n"
	    "\tM: Mail patches to: FullName <address@domain>\n\n"
	    "GENERIC LIB\n"
	    "M:\tLib Person <lib@example.org>\n"
	    "L:\tlinux-kernel@vger.kernel.org\n"
	    "S:\tMaintained\n"
	    "F:\tlib/\n"
	    "X:\tlib/big.c\n"
	    "K:\t\\bfoo_count\\b\n\n"
	    "SYSCALLS\n"
	    "M:\tSys Person <sys@example.org>\n"
	    "S:\tSupported\n"
	    "F:\tkernel/sys*.c\n"
	    "N:\tfoo\\.h$\n\n"
	    "MANY FILES\n"
	    "R:\tReviewer <r@example.org>\n"
	    "F:\tlib/a1.c\nF:\tlib/a2.c\nF:\tlib/a3.c\nF:\tlib/a4.c\nF:\tlib/a5.c\n"
	    "F:\tlib/a6.c\nF:\tlib/a7.c\nF:\tlib/a8.c\nF:\tlib/a9.c\nF:\tlib/a10.c\n"
	    "F:\tlib/a11.c\nF:\tlib/util.c\nF:\tlib/a13.c\nF:\tlib/a14.c\n\n"
	    "ELSEWHERE\n"
	    "M:\tOther <o@example.org>\n"
	    "F:\tnet/\n");
	sh("cd %s && ln -s /etc/passwd lib/passwd && ln -s ../../.. lib/up", dir);
	sh("cd %s && git add -A && git commit -qm 'lib: add util'", dir);
	sh("cd %s && git rev-parse HEAD > %s/.base", dir, dir);
	put("lib/util.c", "/* the future */\n");
	sh("cd %s && git commit -qam 'lib: later change'", dir);
	sh("cd %s && git rev-parse HEAD > %s/.later", dir, dir);
	{
		char p[4096];
		_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

		snprintf(p, sizeof(p), "%s/.base", dir);
		assert_int_equal(read_file_bounded(p, 100, &a, NULL), 0);
		snprintf(p, sizeof(p), "%s/.later", dir);
		assert_int_equal(read_file_bounded(p, 100, &b, NULL), 0);
		snprintf(p, sizeof(p), "%s/.first", dir);
		assert_int_equal(read_file_bounded(p, 100, &c, NULL), 0);
		snprintf(base, sizeof(base), "%.40s", a);
		snprintf(later, sizeof(later), "%.40s", b);
		snprintf(first, sizeof(first), "%.40s", c);
	}
	return tree_open_path(dir, NULL, &t) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tree_free(t);
	return rm_rf(dir);
}

/* One call; the answer, owned by the caller. */
static char *call(const char *name, const char *args_json)
{
	_cleanup_(explore_freep) struct explore *e = NULL;
	_cleanup_json_ json_t *args = json_loads(args_json, 0, NULL);
	char *out = NULL;

	assert_non_null(args);
	assert_int_equal(explore_new(t, base, &e), 0);
	assert_int_equal(explore_call(e, name, args, &out), 0);
	assert_non_null(out);
	assert_true(strlen(out) <= EXPLORE_ANSWER_MAX + 64);
	return out;
}

static void test_read_file(void **state)
{
	_cleanup_free_ char *a = call("read_file", "{\"path\": \"lib/util.c\", \"start\": 3, \"end\": 5}");
	_cleanup_free_ char *big = call("read_file", "{\"path\": \"lib/big.c\", \"start\": 100, \"end\": 900}");
	_cleanup_free_ char *past = call("read_file", "{\"path\": \"lib/big.c\", \"start\": 600}");
	_cleanup_free_ char *dirr = call("read_file", "{\"path\": \"lib\"}");

	(void)state;
	/* the base commit, not the later one; numbered lines */
	assert_non_null(strstr(a, "lib/util.c, lines 3-5 of 6:\n"));
	assert_non_null(strstr(a, "     3\tstatic int foo_count(struct foo *f)\n"));
	assert_non_null(strstr(a, "     5\t\treturn f ? f->n : 0;\n"));
	assert_null(strstr(a, "the future"));
	assert_null(strstr(a, "     6\t"));
	/* at most 200 lines a call */
	assert_non_null(strstr(big, "   299\tint v299 = 299;\n"));
	assert_null(strstr(big, "   300\t"));
	assert_non_null(strstr(past, "only 500 lines"));
	assert_true(startswith(dirr, "error: lib is a folder"));
}

/* Absolute paths, "..", .git and symlinks out of the tree give nothing
 * of the host. */
static void test_confinement(void **state)
{
	static const char *const bad[] = {
		"{\"path\": \"/etc/passwd\"}", "{\"path\": \"../../etc/passwd\"}",
		"{\"path\": \"lib/../../x\"}", "{\"path\": \".git/config\"}",
		"{\"path\": \"lib/./util.c\"}", "{\"path\": \"\"}", "{}",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_free_ char *a = call("read_file", bad[i]);
		_cleanup_free_ char *b = call("list_dir", bad[i]);
		_cleanup_free_ char *c = call("git_blame", bad[i]);

		assert_true(startswith(a, "error: "));
		assert_null(strstr(a, "root:"));
		assert_true(startswith(c, "error: "));
		if (!streq(bad[i], "{\"path\": \"\"}") && !streq(bad[i], "{}"))
			assert_true(startswith(b, "error: "));
	}
	{
		/* a symlink's blob is its target's name, never the target */
		_cleanup_free_ char *a = call("read_file", "{\"path\": \"lib/passwd\"}");
		_cleanup_free_ char *b = call("read_file", "{\"path\": \"lib/up/etc/passwd\"}");

		assert_null(strstr(a, "root:"));
		assert_true(startswith(b, "error: "));
	}
}

static void test_list_and_grep(void **state)
{
	_cleanup_free_ char *top = call("list_dir", "{\"path\": \"\"}");
	_cleanup_free_ char *lib = call("list_dir", "{\"path\": \"lib\"}");
	_cleanup_free_ char *g = call("grep", "{\"pattern\": \"struct foo\"}");
	_cleanup_free_ char *g2 = call("grep", "{\"pattern\": \"v[0-9]+ = 4[0-9]\", \"regex\": true, "
				       "\"path\": \"lib/\"}");
	_cleanup_free_ char *many = call("grep", "{\"pattern\": \"int v\"}");
	_cleanup_free_ char *bad = call("grep", "{\"pattern\": \"(\", \"regex\": true}");
	_cleanup_free_ char *none = call("grep", "{\"pattern\": \"no such text\"}");
	/* a back-reference could take the matcher exponential time */
	_cleanup_free_ char *backref = call("grep", "{\"pattern\": \"((a|aa)*)\\\\1b\", \"regex\": true}");
	_cleanup_free_ char *fixed = call("grep", "{\"pattern\": \"\\\\1\"}");

	/* stacked and nested repetitions make glibc's regcomp copy trees */
	_cleanup_free_ char *stacked = call("grep", "{\"pattern\": \"a<+++\", \"regex\": true}");
	_cleanup_free_ char *nested = call("grep", "{\"pattern\": \"(x(ab)*)+\", \"regex\": true}");
	_cleanup_free_ char *bound = call("grep", "{\"pattern\": \"a{1000}\", \"regex\": true}");
	_cleanup_free_ char *fine = call("grep", "{\"pattern\": \"v[0-9]+ = (1|2)+;\", \"regex\": true, "
					 "\"path\": \"lib/big.c\"}");

	(void)state;
	assert_true(startswith(stacked, "error: a repetition of a repetition"));
	assert_true(startswith(nested, "error: a repetition of a repetition"));
	assert_true(startswith(bound, "error: repetition bounds above 100"));
	assert_non_null(strstr(fine, "lib/big.c:1: int v1 = 1;\n"));
	assert_true(startswith(backref, "error: no back-references"));
	assert_non_null(strstr(fixed, "no match"));
	assert_non_null(strstr(top, "include/\n"));
	assert_non_null(strstr(top, "kernel/\n"));
	assert_non_null(strstr(lib, "util.c\n"));
	assert_non_null(strstr(g, "include/linux/foo.h:4: struct foo {\n"));
	assert_non_null(strstr(g, "lib/util.c:3: static int foo_count(struct foo *f)\n"));
	assert_non_null(strstr(g2, "lib/big.c:40: int v40 = 40;\n"));
	assert_non_null(strstr(many, "[stopped at 100 matches"));
	assert_true(startswith(bad, "error: "));
	assert_non_null(strstr(none, "no match"));
}

static void test_find_definition(void **state)
{
	_cleanup_free_ char *fn = call("find_definition", "{\"symbol\": \"foo_count\"}");
	_cleanup_free_ char *sys = call("find_definition", "{\"symbol\": \"__x64_sys_foo\"}");
	_cleanup_free_ char *st = call("find_definition", "{\"symbol\": \"foo\"}");
	_cleanup_free_ char *mac = call("find_definition", "{\"symbol\": \"FOO_MAX\"}");
	_cleanup_free_ char *bad = call("find_definition", "{\"symbol\": \"a b\"}");

	(void)state;
	assert_non_null(strstr(fn, "lib/util.c:3: definition of foo_count:\n"));
	assert_non_null(strstr(fn, "     5\t\treturn f ? f->n : 0;\n"));
	assert_non_null(strstr(sys, "kernel/sys.c:4: definition of __x64_sys_foo:\n"));
	assert_non_null(strstr(sys, "SYSCALL_DEFINE1(foo, int, fd)"));
	assert_non_null(strstr(st, "include/linux/foo.h:4: struct foo {"));
	assert_non_null(strstr(mac, "include/linux/foo.h:3: #define FOO_MAX 16"));
	assert_true(startswith(bad, "error: "));
}

/* The same answers from the ctags index as from searching the tree. */
static void test_find_definition_indexed(void **state)
{
	_cleanup_(explore_freep) struct explore *e = NULL;
	_cleanup_(tags_freep) struct tags *tags = NULL;
	_cleanup_free_ char *err = NULL, *fn = NULL, *sys = NULL, *st = NULL, *mac = NULL, *none = NULL;
	_cleanup_free_ char *field = NULL;
	char path[1100], wt[1024];
	const char *q[] = { "foo_count", "__x64_sys_foo", "foo", "FOO_MAX", "nosuch", "next" };
	char **out[] = { &fn, &sys, &st, &mac, &none, &field };

	(void)state;
	if (system("command -v ctags >/dev/null && ctags --version | grep -q Universal") != 0) {
		printf("SKIP: Universal Ctags is not installed\n");
		return;
	}
	/* the index is made of a checkout at the base */
	snprintf(wt, sizeof(wt), "%s.wt", dir);
	sh("git -C %s worktree add -q --detach %s %s", dir, wt, base);
	snprintf(path, sizeof(path), "%s/base.tags", wt);
	if (tags_build(wt, path, &err) < 0)
		fail_msg("tags_build: %s", err);
	assert_int_equal(tags_open(path, &tags), 0);
	assert_int_equal(explore_new(t, base, &e), 0);
	explore_set_tags(e, tags);
	for (size_t i = 0; i < ARRAY_SIZE(q); i++) {
		_cleanup_json_ json_t *a = json_pack("{s:s}", "symbol", q[i]);

		assert_int_equal(explore_call(e, "find_definition", a, out[i]), 0);
	}
	assert_non_null(strstr(fn, "lib/util.c:3: definition of foo_count:\n"));
	assert_non_null(strstr(fn, "     5\t\treturn f ? f->n : 0;\n"));
	assert_non_null(strstr(sys, "kernel/sys.c:4: definition of __x64_sys_foo:\n"));
	assert_non_null(strstr(sys, "     4\tSYSCALL_DEFINE1(foo, int, fd)\n"));
	/* a struct with its body, the syscall of the same name after it */
	assert_non_null(strstr(st, "include/linux/foo.h:4: struct foo:\n     4\tstruct foo {\n"));
	assert_non_null(strstr(st, "     7\t};\n"));
	assert_true(strstr(st, "struct foo:") < strstr(st, "kernel/sys.c:4: definition of foo:"));
	assert_non_null(strstr(mac, "include/linux/foo.h:3: macro FOO_MAX:\n     3\t#define FOO_MAX 16\n"));
	assert_non_null(strstr(none, "no definition of nosuch found"));
	assert_non_null(strstr(field, "include/linux/foo.h:6: field next:\n"));
	sh("git -C %s worktree remove --force %s", dir, wt);
}

static void test_find_references(void **state)
{
	_cleanup_free_ char *refs = call("find_references", "{\"symbol\": \"foo\"}");
	_cleanup_free_ char *none = call("find_references", "{\"symbol\": \"foo_nowhere\"}");
	_cleanup_free_ char *bad = call("find_references", "{\"symbol\": \"f(\"}");

	(void)state;
	/* whole words only: foo_count and FOO_H are not uses of foo */
	assert_non_null(strstr(refs, "include/linux/foo.h:4: struct foo {\n"));
	assert_non_null(strstr(refs, "lib/util.c:3: static int foo_count(struct foo *f)\n"));
	assert_non_null(strstr(refs, "kernel/sys.c:4: SYSCALL_DEFINE1(foo, int, fd)\n"));
	assert_null(strstr(refs, "FOO_H"));
	assert_non_null(strstr(none, "no reference to foo_nowhere"));
	assert_true(startswith(bad, "error: "));
}

/* The built-kernel tools on a small program built with DWARF: the same
 * libdw and objdump paths as on a vmlinux (tests/kernel/explore.sh
 * compares a real kernel's layouts with gdb's). */
static void test_built_kernel_tools(void **state)
{
	static const char prog[] =
		"struct item { struct item *next; };\n"
		"struct foo {\n\tint n;\n\tchar tag[3];\n\tunsigned int a : 3, b : 5;\n"
		"\tunion { long l; void *p; };\n\tstruct item *items;\n\tconst char *name;\n"
		"\tunsigned long flags[2];\n};\n"
		"struct foo g_foo;\nint foo_main(void) { return g_foo.n; }\n"
		"int main(void) { return foo_main(); }\n";
	_cleanup_(explore_freep) struct explore *e = NULL;
	_cleanup_free_ char *layout = NULL, *none = NULL, *dis = NULL, *sym = NULL, *before = NULL;
	_cleanup_free_ char *nm = NULL;
	_cleanup_json_ json_t *a1 = json_pack("{s:s}", "type", "struct foo");
	_cleanup_json_ json_t *a2 = json_pack("{s:s}", "type", "nosuch");
	_cleanup_json_ json_t *a3 = json_pack("{s:s}", "function", "foo_main");
	char bin[1024], args[128], path[1200];

	(void)state;
	assert_int_equal(explore_new(t, base, &e), 0);
	assert_int_equal(explore_call(e, "struct_layout", a1, &before), 0);
	assert_string_equal(before, "error: no kernel has been built yet");
	if (system("command -v cc >/dev/null && command -v objdump >/dev/null") != 0) {
		printf("SKIP: no cc or objdump for the built-kernel tools\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	assert_int_equal(write_file_atomic(path, prog, strlen(prog), 0644), 0);
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sh("cc -g -O0 -no-pie -o %s %s && nm %s | awk '/ foo_main$/ {print $1}' > %s.nm", bin,
	   path, bin, bin);
	snprintf(path, sizeof(path), "%s.nm", bin);
	assert_int_equal(read_file_bounded(path, 100, &nm, NULL), 0);
	assert_int_equal(explore_set_vmlinux(e, bin), 0);
	assert_int_equal(explore_call(e, "struct_layout", a1, &layout), 0);
	/* offsets and sizes as gdb's ptype /o gives them on x86-64 */
	assert_non_null(strstr(layout, "struct foo {\t/* size 48 */\n"));
	assert_non_null(strstr(layout, "     4      3     char tag[3];\n"));
	assert_non_null(strstr(layout, "     7:3    5b    unsigned int b:5;\n"));
	assert_non_null(strstr(layout, "     8      8     union {\n"));
	assert_non_null(strstr(layout, "     8      8       void *p;\n"));
	assert_non_null(strstr(layout, "    16      8     struct item *items;\n"));
	assert_non_null(strstr(layout, "    32     16     long unsigned int flags[2];\n"));
	assert_int_equal(explore_call(e, "struct_layout", a2, &none), 0);
	assert_true(startswith(none, "error: the built kernel has no nosuch"));
	assert_int_equal(explore_call(e, "disassemble", a3, &dis), 0);
	assert_non_null(strstr(dis, "<foo_main>:\n"));
	assert_non_null(strstr(dis, "ret"));
	nm[strcspn(nm, "\n")] = '\0';
	snprintf(args, sizeof(args), "{\"address\": \"%s\"}", nm);
	{
		_cleanup_json_ json_t *a4 = json_loads(args, 0, NULL);

		assert_int_equal(explore_call(e, "symbolize", a4, &sym), 0);
	}
	assert_non_null(strstr(sym, "foo_main+0x0/0x"));
	assert_non_null(strstr(sym, "prog.c:12"));
}

static void test_history(void **state)
{
	_cleanup_free_ char *log = call("git_log", "{\"path\": \"lib/util.c\"}");
	_cleanup_free_ char *all = call("git_log", "{}");
	_cleanup_free_ char *blame = call("git_blame", "{\"path\": \"kernel/sys.c\", \"start\": 4, \"end\": 5}");
	char args[128];
	_cleanup_free_ char *show = NULL, *future = NULL, *junk = NULL;

	(void)state;
	assert_non_null(strstr(log, "lib: add util (Tester, "));
	/* the base's history only */
	assert_null(strstr(log, "later change"));
	assert_non_null(strstr(all, "kernel: add foo"));
	{
		char want[64];

		snprintf(want, sizeof(want), "     4 %.12s kernel/sys.c\n", first);
		assert_non_null(strstr(blame, want));
	}
	snprintf(args, sizeof(args), "{\"commit\": \"%.12s\"}", first);
	show = call("git_show", args);
	assert_non_null(strstr(show, "kernel: add foo"));
	assert_non_null(strstr(show, "+SYSCALL_DEFINE1(foo, int, fd)"));
	snprintf(args, sizeof(args), "{\"commit\": \"%s\"}", later);
	future = call("git_show", args);
	assert_true(startswith(future, "error: "));
	junk = call("git_show", "{\"commit\": \"HEAD; rm -rf /\"}");
	assert_true(startswith(junk, "error: "));
}

static void test_maintainers(void **state)
{
	_cleanup_free_ char *util = call("maintainers", "{\"path\": \"lib/util.c\"}");
	_cleanup_free_ char *big = call("maintainers", "{\"path\": \"lib/big.c\"}");
	_cleanup_free_ char *sys = call("maintainers", "{\"path\": \"kernel/sys.c\"}");
	_cleanup_free_ char *hdr = call("maintainers", "{\"path\": \"include/linux/foo.h\"}");
	_cleanup_free_ char *folder = call("maintainers", "{\"path\": \"lib\"}");
	_cleanup_free_ char *out = call("maintainers", "{\"path\": \"../MAINTAINERS\"}");

	(void)state;
	/* F: a folder, and a file named among many; who, which list */
	assert_non_null(strstr(util, "GENERIC LIB\nM:\tLib Person <lib@example.org>\n"
				     "L:\tlinux-kernel@vger.kernel.org\nS:\tMaintained\nF:\tlib/\n"));
	assert_non_null(strstr(util, "MANY FILES\nR:\tReviewer <r@example.org>\n"));
	assert_non_null(strstr(util, "[2 more F: lines]"));
	assert_null(strstr(util, "lib/a13.c"));
	assert_null(strstr(util, "K:"));
	assert_null(strstr(util, "SYSCALLS"));
	assert_null(strstr(util, "ELSEWHERE"));
	/* X: takes a file out */
	assert_non_null(strstr(big, "no MAINTAINERS section covers lib/big.c"));
	/* a glob of the same depth; N: a regex over the path */
	assert_non_null(strstr(sys, "SYSCALLS\nM:\tSys Person"));
	assert_null(strstr(sys, "N:"));
	assert_non_null(strstr(hdr, "SYSCALLS"));
	assert_non_null(strstr(folder, "GENERIC LIB"));
	assert_non_null(strstr(out, "no . or .."));
}

static void test_defs_and_unknown(void **state)
{
	_cleanup_json_ json_t *defs = explore_tool_defs();
	_cleanup_(explore_freep) struct explore *e = NULL;
	char *out = NULL;
	size_t i;
	json_t *d;

	(void)state;
	assert_int_equal(json_array_size(defs), 12);
	json_array_foreach(defs, i, d) {
		assert_non_null(json_get_str(d, "name"));
		assert_non_null(json_get_str(d, "description"));
		assert_true(json_object_size(json_object_get(json_object_get(d, "parameters"),
							     "properties")) >= 1);
	}
	assert_int_equal(explore_new(t, base, &e), 0);
	assert_int_equal(explore_call(e, "run_shell", NULL, &out), -ENOENT);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_confinement),
		cmocka_unit_test(test_list_and_grep),
		cmocka_unit_test(test_find_definition),
		cmocka_unit_test(test_find_definition_indexed),
		cmocka_unit_test(test_find_references),
		cmocka_unit_test(test_built_kernel_tools),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_maintainers),
		cmocka_unit_test(test_defs_and_unknown),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
