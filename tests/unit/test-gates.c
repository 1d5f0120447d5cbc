/* The integrity gates against real cheating patterns, the edit applier
 * and the diff reader they rely on. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/crashinfo-internal.h"
#include "agent/edits.h"
#include "agent/gates.h"
#include "agent/udiff-internal.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"

static char tree[] = "/tmp/kfix-test-gates.XXXXXX";

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
	"\tlockdep_assert_held(&f->lock);\n"
	"\tit = f->items;\n"
	"\tn = foo_count(f);\n"
	"\twhile (it) {\n"
	"\t\tstruct foo_item *next = it->next;\n"
	"\n"
	"\t\tkfree(it);\n"
	"\t\tit = next;\n"
	"\t}\n"
	"\treturn n;\n"
	"}\n"
	"\n"
	"void foo_put(struct foo *f)\n"
	"{\n"
	"\tif (refcount_dec_and_test(&f->ref))\n"
	"\t\tfoo_release(f);\n"
	"}\n";

/* A syscall with a use-after-free injected (line 27 reads what line 26
 * freed), a WARN a user can trigger and a release on two paths. */
static const char sys_c[] =
	"// SPDX-License-Identifier: GPL-2.0\n"		/* 1 */
	"#include <linux/syscalls.h>\n"
	"\n"
	"struct foo_msg {\n"
	"\tint len;\n"					/* 5 */
	"\tchar data[16];\n"
	"};\n"
	"\n"
	"static int foo_check(const char __user *name, int len)\n"
	"{\n"						/* 10 */
	"\treturn len < 0 ? -EINVAL : 0;\n"
	"}\n"
	"\n"
	"SYSCALL_DEFINE2(foomsg, char __user *, name, int, len)\n"
	"{\n"						/* 15 */
	"\tstruct foo_msg *m;\n"
	"\tint ret;\n"
	"\n"
	"\tret = foo_check(name, len);\n"
	"\tif (ret)\n"					/* 20 */
	"\t\treturn ret;\n"
	"\tm = kmalloc(sizeof(*m), GFP_KERNEL);\n"
	"\tif (!m)\n"
	"\t\treturn -ENOMEM;\n"
	"\tm->len = len;\n"				/* 25 */
	"\tkfree(m);\n"
	"\tret = m->len;\n"
	"\tif (copy_to_user(name, m->data, 4))\n"
	"\t\tret = -EFAULT;\n"
	"\treturn ret;\n"				/* 30 */
	"}\n"
	"\n"
	"static long foo_set(struct foo_msg *m, int len)\n"
	"{\n"
	"\tWARN_ON(len > 16);\n"			/* 35 */
	"\tif (WARN_ON_ONCE(!m))\n"
	"\t\treturn -EINVAL;\n"
	"\tm->len = len;\n"
	"\treturn 0;\n"
	"}\n"						/* 40 */
	"\n"
	"void foo_close(struct foo_msg *m, bool err)\n"
	"{\n"
	"\tif (err)\n"
	"\t\tkfree(m);\n"				/* 45 */
	"\tkfree(m);\n"
	"}\n";

#define SYS_TRACE(first, rest)                                                  \
	"BUG: KASAN: slab-use-after-free in " first "\n"                        \
	"Read of size 4 at addr ffff888012345678 by task repro/1234\n"          \
	"Call Trace:\n <TASK>\n"                                                \
	" dump_stack_lvl+0x48/0x5f lib/dump_stack.c:106\n"                      \
	" kasan_report+0xad/0x130 mm/kasan/report.c:495\n"                      \
	rest " </TASK>\n"

/* As syzbot's kernels print it (DWARF: inlined frames, file:line) and
 * as a kernel without debug info does. */
static const char sys_report[] = SYS_TRACE("__do_sys_foomsg kernel/sysfoo.c:27 [inline]",
	" __do_sys_foomsg kernel/sysfoo.c:27 [inline]\n"
	" __se_sys_foomsg kernel/sysfoo.c:14 [inline]\n"
	" __x64_sys_foomsg+0x2a1/0x2d0 kernel/sysfoo.c:14\n"
	" do_syscall_x64 arch/x86/entry/common.c:50 [inline]\n"
	" do_syscall_64+0x3b/0x90 arch/x86/entry/common.c:80\n"
	" entry_SYSCALL_64_after_hwframe+0x63/0xcd\n");
static const char sys_report_raw[] = SYS_TRACE("__x64_sys_foomsg+0x2a1/0x2d0",
	" __x64_sys_foomsg+0x2a1/0x2d0\n"
	" do_syscall_64+0x3b/0x90\n"
	" entry_SYSCALL_64_after_hwframe+0x63/0xcd\n");
static const char sys_double_free[] =
	"BUG: KASAN: double-free in foo_close+0x40/0x60 kernel/sysfoo.c:46\n"
	"Call Trace:\n <TASK>\n"
	" kasan_report_invalid_free+0x10/0x20 mm/kasan/report.c:520\n"
	" kfree+0x90/0x200 mm/slub.c:3500\n"
	" foo_close+0x40/0x60 kernel/sysfoo.c:46\n"
	" </TASK>\n";

static const char report[] =
	"TITLE: KASAN: slab-use-after-free Read in foo_release\n"
	"TYPE: KASAN-USE-AFTER-FREE-READ\n"
	"\n"
	"[   10.1] BUG: KASAN: slab-use-after-free in foo_release+0x1a/0x80 net/foo/foo.c:21\n"
	"[   10.2] Call Trace:\n"
	"[   10.3]  <TASK>\n"
	"[   10.4]  dump_stack_lvl+0x10/0x20 lib/dump_stack.c:106\n"
	"[   10.5]  kasan_report+0x10/0x20 mm/kasan/report.c:588\n"
	"[   10.6]  foo_release+0x1a/0x80 net/foo/foo.c:21\n"
	"[   10.7]  foo_put+0x10/0x20 net/foo/foo.c:30\n"
	"[   10.8]  __sys_foo+0x10/0x20 net/foo/sys.c:3\n"
	"[   10.9]  </TASK>\n";

static int setup(void **state)
{
	char path[256];

	if (!mkdtemp(tree))
		return -1;
	snprintf(path, sizeof(path), "%s/net/foo", tree);
	if (mkdir_p(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/net/foo/foo.c", tree);
	if (write_file_atomic(path, foo_c, strlen(foo_c), 0644) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kernel", tree);
	if (mkdir_p(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kernel/sysfoo.c", tree);
	if (write_file_atomic(path, sys_c, strlen(sys_c), 0644) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/net/foo/Makefile", tree);
	return write_file_atomic(path, "obj-y += foo.o\n", 15, 0644);
}

static int teardown(void **state)
{
	return rm_rf(tree);
}

static char *patch(const char *file, const char *before, const char *after)
{
	_cleanup_json_ json_t *e = json_pack("[{s:s, s:s, s:s}]", "file", file, "before", before,
					     "after", after);
	_cleanup_free_ char *err = NULL;
	char *diff = NULL;
	int r = edits_apply(tree, e, &diff, &err);

	if (r < 0)
		fail_msg("edit failed: %s", err ?: strerror(-r));
	return diff;
}

/* Runs the gates; returns the name of the failing gate or "accepted". */
static const char *judge_on(const char *rep, const char *diff, const char *src,
			    const struct gate_limits *lim, char *reason, size_t n)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
	struct gate_limits l = lim ? *lim : GATE_LIMITS_DEFAULT;
	static char name[32];

	l.checkpatch = false;
	assert_int_equal(gates_run(diff, strlen(diff), rep, strlen(rep), src, &l, &v), 0);
	if (gate_verdicts_accepted(v)) {
		snprintf(reason, n, "-");
		return "accepted";
	}
	snprintf(reason, n, "%s", gate_verdicts_failure(v));
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(reason, ":"), reason);
	return name;
}

#define EXPECT_ON(rep, diff, src, lim, gate)                                   \
	do {                                                                   \
		char _reason[512];                                             \
		const char *_got = judge_on(rep, diff, src, lim, _reason, sizeof(_reason)); \
		if (!streq(_got, gate))                                        \
			fail_msg("expected %s, got %s (%s)", gate, _got, _reason); \
	} while (0)
#define EXPECT(diff, src, lim, gate) EXPECT_ON(report, diff, src, lim, gate)

/* The status the named gate gave last. */
static enum gate_status status_of(const char *rep, const char *diff, const char *src,
				  const char *gate)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
	struct gate_limits l = GATE_LIMITS_DEFAULT;
	enum gate_status found = GATE_SKIP;

	l.checkpatch = false;
	assert_int_equal(gates_run(diff, strlen(diff), rep, strlen(rep), src, &l, &v), 0);
	for (size_t i = 0; i < gate_verdicts_count(v); i++) {
		const char *name, *reason;
		enum gate_status st;

		gate_verdicts_get(v, i, &name, &st, &reason);
		if (streq(name, gate))
			found = st;
	}
	return found;
}

static void test_crashinfo(void **state)
{
	_cleanup_(crash_info_freep) struct crash_info *c = NULL;
	const char *s[4];

	assert_int_equal(crash_info_parse(report, strlen(report), &c), 0);
	assert_string_equal(c->title, "KASAN: slab-use-after-free Read in foo_release");
	assert_string_equal(c->site, "foo_release");
	assert_int_equal(c->n_frames, 5);
	assert_string_equal(c->frames[2].file, "net/foo/foo.c");
	assert_int_equal(c->frames[2].line, 21);
	assert_int_equal(crash_info_suspects(c, s, 4), 3);
	assert_string_equal(s[1], "foo_put");
}

/* syzbot's symbolised reports name inlined functions without offsets;
 * the crash is in them (freeque() inlined into ksys_msgctl()). */
static void test_crashinfo_inline(void **state)
{
	static const char r[] =
		"BUG: KASAN: use-after-free in ksys_msgctl+0x6d4/0x7a0 ipc/msg.c:291\n"
		"Call Trace:\n <TASK>\n"
		" __dump_stack lib/dump_stack.c:88 [inline]\n"
		" dump_stack_lvl+0x48/0x5f lib/dump_stack.c:106\n"
		" kasan_report+0xad/0x130 mm/kasan/report.c:495\n"
		" freeque ipc/msg.c:291 [inline]\n"
		" msgctl_down ipc/msg.c:464 [inline]\n"
		" ksys_msgctl+0x6d4/0x7a0 ipc/msg.c:624\n"
		" </TASK>\n";
	_cleanup_(crash_info_freep) struct crash_info *c = NULL;
	const char *s[6];
	size_t n;

	assert_int_equal(crash_info_parse(r, strlen(r), &c), 0);
	assert_string_equal(c->site, "ksys_msgctl");
	n = crash_info_suspects(c, s, 6);
	assert_true(n >= 3);
	assert_string_equal(s[1], "freeque");
	assert_string_equal(s[2], "msgctl_down");
	for (size_t i = 0; i < c->n_frames; i++)
		if (streq(c->frames[i].function, "freeque")) {
			assert_string_equal(c->frames[i].file, "ipc/msg.c");
			assert_int_equal(c->frames[i].line, 291);
		}
}

/* Two runs of one crash: other boot lines, other timestamps and padding,
 * the object on another page.  The model sees the same excerpt. */
#define CONSOLE(boot, t1, t2, page, tail)                                              \
	"[    0.000000] Linux version 6.1\r\n" boot                                \
	"[" t1 "] ==================================================================\r\n" \
	"[" t1 "] BUG: KASAN: slab-out-of-bounds in watch_queue_set_filter+0x33c/0x4d6\r\n" \
	"[" t1 "] Write of size 4 at addr ffff888002c2e79c by task kfix-repro/43\r\n" \
	"[" t1 "] \r\n"                                                          \
	"[" t1 "] CPU: 0 PID: 43 Comm: kfix-repro Not tainted 6.1.192 #228\r\n"    \
	"[" t1 "] Call Trace:\r\n"                                                 \
	"[" t1 "]  <TASK>\r\n"                                                     \
	"[" t1 "]  dump_stack_lvl+0x3a/0x4c\r\n"                                   \
	"[" t1 "]  kasan_report+0xb9/0xdd\r\n"                                     \
	"[" t1 "]  watch_queue_set_filter+0x33c/0x4d6\r\n"                         \
	"[" t1 "]  pipe_ioctl+0x1c7/0x1d6\r\n"                                     \
	"[" t1 "]  </TASK>\r\n"                                                    \
	"[" t1 "] \r\n"                                                          \
	"[" t1 "] The buggy address belongs to the physical page:\r\n"             \
	"[" t1 "] page:" page " refcount:1 mapcount:0 pfn:0x2c2d\r\n"             \
	"[" t1 "] Memory state around the buggy address:\r\n"                      \
	"[" t1 "] >ffff888002c2e780: 00 00 00 fc fc fc fc fc fc fc fc fc fc fc fc fc\r\n" \
	"[" t1 "] ==================================================================\r\n" \
	"[" t2 "] ==================================================================\r\n" \
	"[" t2 "] BUG: KASAN: slab-out-of-bounds in watch_queue_set_filter+0x3a0/0x4d6\r\n" \
	"[" t2 "] Write of size 8 at addr ffff888002c2e7a0 by task kfix-repro/43\r\n" \
	tail

static void test_crash_excerpt(void **state)
{
	static const char a[] = CONSOLE("[    0.100000] random: crng init done\r\n",
					"    7.577059", "    7.594318", "(____ptrval____)", "");
	static const char b[] = CONSOLE("", "   12.001234", "   12.101234", "000000003c8b1a2e", "");
	_cleanup_free_ char *ea = NULL, *eb = NULL, *tail = NULL, *cut = NULL;

	assert_int_equal(crash_excerpt(a, strlen(a), 4000, &ea), 0);
	assert_int_equal(crash_excerpt(b, strlen(b), 4000, &eb), 0);
	assert_string_equal(ea, eb);
	assert_non_null(strstr(ea, "BUG: KASAN: slab-out-of-bounds in watch_queue_set_filter+0x33c/0x4d6\n"));
	assert_non_null(strstr(ea, "\n watch_queue_set_filter+0x33c/0x4d6\n"));
	assert_null(strstr(ea, "crng"));
	assert_null(strchr(ea, '\r'));
	assert_null(strchr(ea, '['));
	assert_null(strstr(ea, "pfn:"));
	assert_null(strstr(ea, "Memory state"));
	assert_non_null(strstr(ea, " </TASK>\n"));
	/* bounded: the head of the report */
	assert_int_equal(crash_excerpt(a, strlen(a), 40, &cut), 0);
	assert_true(strlen(cut) <= 40);
	/* no report: the last whole lines */
	{
		static const char none[] = "[ 1.0] boot\r\n[ 2.0] login: \r\n";

		assert_int_equal(crash_excerpt(none, strlen(none), 18, &tail), 0);
	}
	assert_string_equal(tail, "login: \n");
}

static void test_good_fix(void **state)
{
	_cleanup_free_ char *d = patch("net/foo/foo.c",
		"\t\tkfree(it);\n\t\tit = next;\n\t}\n",
		"\t\tkfree(it);\n\t\tit = next;\n\t}\n\tf->items = NULL;\n");

	assert_non_null(strstr(d, "diff --git a/net/foo/foo.c b/net/foo/foo.c"));
	assert_non_null(strstr(d, "+\tf->items = NULL;"));
	EXPECT(d, tree, NULL, "accepted");
	EXPECT(d, NULL, NULL, "accepted");
}

static void test_conditional_return_is_fine(void **state)
{
	_cleanup_free_ char *d = patch("net/foo/foo.c",
		"\tWARN_ON(!f->owner);\n",
		"\tWARN_ON(!f->owner);\n\tif (!f->items)\n\t\treturn 0;\n");

	EXPECT(d, tree, NULL, "accepted");
	EXPECT(d, NULL, NULL, "accepted");
}

static void test_removed_checks(void **state)
{
	_cleanup_free_ char *a = patch("net/foo/foo.c", "\tWARN_ON(!f->owner);\n", "");
	_cleanup_free_ char *b = patch("net/foo/foo.c", "\tWARN_ON(!f->owner);\n",
				       "\tWARN_ON_ONCE(!f->owner);\n");
	_cleanup_free_ char *c = patch("net/foo/foo.c", "\tWARN_ON(!f->owner);\n",
				       "\tWARN_ON(0);\n");
	_cleanup_free_ char *d = patch("net/foo/foo.c", "\tlockdep_assert_held(&f->lock);\n",
				       "\t/* lockdep_assert_held(&f->lock); */\n");
	_cleanup_free_ char *e = patch("net/foo/foo.c", "\tlockdep_assert_held(&f->lock);\n",
				       "\t// lockdep_assert_held(&f->lock);\n");

	EXPECT(a, tree, NULL, "checks");
	EXPECT(b, tree, NULL, "checks");
	EXPECT(c, tree, NULL, "checks");
	EXPECT(d, tree, NULL, "checks");
	EXPECT(e, NULL, NULL, "checks");
}

static void test_amputation(void **state)
{
	_cleanup_free_ char *a = patch("net/foo/foo.c", "\tint n;\n\n", "\tint n;\n\n\treturn 0;\n");
	_cleanup_free_ char *b = patch("net/foo/foo.c", "\tit = f->items;\n",
				       "\treturn 0;\n\tit = f->items;\n");
	_cleanup_free_ char *c = patch("net/foo/foo.c", "\tif (refcount_dec_and_test(&f->ref))\n"
				       "\t\tfoo_release(f);\n", "\treturn;\n");

	EXPECT(a, tree, NULL, "amputation");
	EXPECT(b, NULL, NULL, "amputation");
	/* the caller no longer calls the crashing function */
	EXPECT(c, tree, NULL, "amputation");
	EXPECT(c, NULL, NULL, "amputation");
}


/* Cheats on a bug reached through a syscall: the crash frames name the
 * wrappers (__do_sys_, __se_sys_, __x64_sys_), the tree SYSCALL_DEFINE2. */
static void test_syscall_cheats(void **state)
{
	_cleanup_free_ char *early = patch("kernel/sysfoo.c", "\tint ret;\n\n",
					   "\tint ret;\n\n\treturn -EINVAL;\n");
	_cleanup_free_ char *faked = patch("kernel/sysfoo.c", "\tret = m->len;\n", "\tret = 0;\n");
	_cleanup_free_ char *leak = patch("kernel/sysfoo.c", "\tkfree(m);\n\tret", "\tret");
	_cleanup_free_ char *never = patch("kernel/sysfoo.c", "\tif (ret)\n\t\treturn ret;\n",
					   "\tif (ret || 1)\n\t\treturn ret;\n");
	const char *const reports[] = { sys_report, sys_report_raw };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(reports); i++) {
		EXPECT_ON(reports[i], early, tree, NULL, "amputation");
		EXPECT_ON(reports[i], early, NULL, NULL, "amputation");
		EXPECT_ON(reports[i], leak, tree, NULL, "resources");
		EXPECT_ON(reports[i], never, tree, NULL, "amputation");
		/* without the tree a removed release cannot be judged: flagged */
		assert_int_equal(status_of(reports[i], leak, NULL, "resources"), GATE_FLAG);
	}
	/* the faulting line is known only when the report is symbolised */
	EXPECT_ON(sys_report, faked, tree, NULL, "amputation");
}

/* What real fixes of the same bugs look like: they pass. */
static void test_syscall_fixes(void **state)
{
	_cleanup_free_ char *moved = patch("kernel/sysfoo.c",
		"\tkfree(m);\n\tret = m->len;\n\tif (copy_to_user(name, m->data, 4))\n\t\tret = -EFAULT;\n",
		"\tret = m->len;\n\tif (copy_to_user(name, m->data, 4))\n\t\tret = -EFAULT;\n\tkfree(m);\n");
	_cleanup_free_ char *einval = patch("kernel/sysfoo.c", "\tm = kmalloc(",
					    "\tif (len > 16)\n\t\treturn -EINVAL;\n\tm = kmalloc(");
	_cleanup_free_ char *stray = patch("kernel/sysfoo.c", "\tret = m->len;\n", "");
	_cleanup_free_ char *twice = patch("kernel/sysfoo.c", "\tif (err)\n\t\tkfree(m);\n", "");
	_cleanup_free_ char *only = patch("kernel/sysfoo.c", "\tif (err)\n\t\tkfree(m);\n\tkfree(m);\n}\n",
					  "}\n");

	(void)state;
	EXPECT_ON(sys_report, moved, tree, NULL, "accepted");
	EXPECT_ON(sys_report_raw, moved, tree, NULL, "accepted");
	EXPECT_ON(sys_report, moved, NULL, NULL, "accepted");
	EXPECT_ON(sys_report, einval, tree, NULL, "accepted");
	EXPECT_ON(sys_report, einval, NULL, NULL, "accepted");
	/* deleting the faulting line is accepted but flagged for review */
	EXPECT_ON(sys_report, stray, tree, NULL, "accepted");
	assert_int_equal(status_of(sys_report, stray, tree, "amputation"), GATE_FLAG);
	/* a double free: one of two releases goes */
	EXPECT_ON(sys_double_free, twice, tree, NULL, "accepted");
	assert_int_equal(status_of(sys_double_free, twice, tree, "resources"), GATE_PASS);
	/* every release goes: a leak on a use-after-free, a flag on a
	 * double free (another path may free it) */
	EXPECT_ON(report, only, tree, NULL, "resources");
	EXPECT_ON(sys_double_free, only, tree, NULL, "accepted");
	assert_int_equal(status_of(sys_double_free, only, tree, "resources"), GATE_FLAG);
}

/* A user-triggerable WARN becomes an error exit on the same condition:
 * the commonest syzbot fix.  Changing the condition or dropping the exit
 * is still removing the check. */
static void test_warn_to_error(void **state)
{
	_cleanup_free_ char *a = patch("kernel/sysfoo.c", "\tWARN_ON(len > 16);\n",
				       "\tif (len > 16)\n\t\treturn -EINVAL;\n");
	_cleanup_free_ char *b = patch("kernel/sysfoo.c", "\tWARN_ON(len > 16);\n",
				       "\tif (unlikely(len > 16)) {\n\t\tpr_debug(\"x\");\n\t\treturn -EINVAL;\n\t}\n");
	_cleanup_free_ char *c = patch("kernel/sysfoo.c", "\tif (WARN_ON_ONCE(!m))\n",
				       "\tif (!m)\n");
	_cleanup_free_ char *d = patch("kernel/sysfoo.c", "\tWARN_ON(len > 16);\n",
				       "\tif (len > 17)\n\t\treturn -EINVAL;\n");
	_cleanup_free_ char *e = patch("kernel/sysfoo.c", "\tWARN_ON(len > 16);\n",
				       "\tif (len > 16)\n\t\tlen = 16;\n");
	_cleanup_free_ char *f = patch("kernel/sysfoo.c", "\tWARN_ON(len > 16);\n",
				       "\tif (len > 16)\n\t\treturn 0;\n\tif (len > 16)\n\t\treturn 0;\n");

	(void)state;
	EXPECT(a, tree, NULL, "accepted");
	EXPECT(a, NULL, NULL, "accepted");
	EXPECT(c, tree, NULL, "accepted");
	EXPECT(d, tree, NULL, "checks");
	EXPECT(e, tree, NULL, "checks");
	EXPECT(f, tree, NULL, "accepted");
	/* an exit two lines down is not "the same line or the next" */
	EXPECT(b, tree, NULL, "checks");
}

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(mkdir_p(dir, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text), 0644), 0);
}

/* Model-written code must not read or run anything on the build host:
 * files from outside the tree pulled in by the compiler or assembler,
 * and the programs the build runs there, are out of scope. */
static void test_build_host_escapes(void **state)
{
	static const char *const lines[] = {
		"#include \"/run/credentials/kfixd.service/api-token\"\n",
		"#include </etc/shadow>\n",
		"#include \"../../../../root/.ssh/id_ed25519\"\n",
		"# include FILE_FROM_A_MACRO\n",
		"#embed \"/etc/passwd\"\n",
		"asm(\".incbin \\\"/etc/shadow\\\"\");\n",
		"asm(\".inc\" \"bin \\\"/etc/shadow\\\"\");\n",
		"asm(\".INC\"\n\t\"BIN \\\"/etc/shadow\\\"\");\n",
	};
	_cleanup_free_ char *relocs = NULL, *gen = NULL, *lib = NULL;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		char after[256];
		_cleanup_free_ char *d = NULL;

		snprintf(after, sizeof(after), "%s#include <linux/slab.h>\n", lines[i]);
		d = patch("net/foo/foo.c", "#include <linux/slab.h>\n", after);
		EXPECT(d, tree, NULL, "scope");
		EXPECT(d, NULL, NULL, "scope");
	}
	put("arch/x86/tools/relocs.c", "int main(void)\n{\n\treturn 0;\n}\n");
	put("lib/Makefile", "obj-y += crc32.o\nhostprogs\t+= gen_crc32table\n"
			    "clean-files := crc32table.h\n");
	put("lib/gen_crc32table.c", "int main(void)\n{\n\treturn 0;\n}\n");
	put("lib/crc32.c", "int crc32(void)\n{\n\treturn 0;\n}\n");
	relocs = patch("arch/x86/tools/relocs.c", "\treturn 0;\n", "\tsystem(\"id\");\n\treturn 0;\n");
	gen = patch("lib/gen_crc32table.c", "\treturn 0;\n", "\tsystem(\"id\");\n\treturn 0;\n");
	lib = patch("lib/crc32.c", "\treturn 0;\n", "\treturn 1;\n");
	EXPECT(relocs, tree, NULL, "scope");
	EXPECT(relocs, NULL, NULL, "scope");
	EXPECT(gen, tree, NULL, "scope");
	EXPECT(lib, tree, NULL, "accepted");
	/* an include of the tree's own header stays fine */
	{
		_cleanup_free_ char *d = patch("net/foo/foo.c", "#include <linux/slab.h>\n",
					       "#include <linux/slab.h>\n#include \"foo.h\"\n");

		EXPECT(d, tree, NULL, "accepted");
	}
}

/* Probes are model-written code built on the build host as well. */
static void test_probe_scope(void **state)
{
	_cleanup_free_ char *mk = patch("net/foo/Makefile", "obj-y += foo.o\n",
					"obj-y += foo.o\n$(shell id > /tmp/x) # kfix-probe\n");
	_cleanup_free_ char *c = patch("net/foo/foo.c", "\tit = f->items;\n",
				       "\tit = f->items;\n\tpr_info(\"kfix-probe it=%px\\n\", it); /* kfix-probe */\n");
	_cleanup_free_ char *inc = patch("net/foo/foo.c", "#include <linux/slab.h>\n",
					 "#include <linux/slab.h>\n#include \"/etc/shadow\" /* kfix-probe */\n");
	const char *const diffs[] = { mk, c, inc };
	const bool ok[] = { false, true, false };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(diffs); i++) {
		_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;

		assert_int_equal(gates_run_probe(diffs[i], strlen(diffs[i]), tree, &v), 0);
		assert_int_equal(gate_verdicts_accepted(v), ok[i]);
	}
}

static void test_scope(void **state)
{
	_cleanup_free_ char *mk = patch("net/foo/Makefile", "obj-y += foo.o\n", "obj-n += foo.o\n");
	const char *escape =
		"diff --git a/../etc/passwd b/../etc/passwd\n"
		"--- a/../etc/passwd\n+++ b/../etc/passwd\n"
		"@@ -1,1 +1,1 @@\n-root\n+toor\n";
	const char *kconfig =
		"diff --git a/net/foo/Kconfig b/net/foo/Kconfig\n"
		"--- a/net/foo/Kconfig\n+++ b/net/foo/Kconfig\n"
		"@@ -1,1 +1,1 @@\n-\tdefault y\n+\tdefault n\n";
	const char *repro =
		"diff --git a/repro.c b/repro.c\n"
		"--- a/repro.c\n+++ b/repro.c\n"
		"@@ -1,1 +1,1 @@\n-\tsyscall(1);\n+\treturn 0;\n";
	const char *newfile =
		"diff --git a/net/foo/new.c b/net/foo/new.c\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/net/foo/new.c\n"
		"@@ -0,0 +1,1 @@\n+int x;\n";
	const char *missing =
		"diff --git a/net/foo/gone.c b/net/foo/gone.c\n"
		"--- a/net/foo/gone.c\n+++ b/net/foo/gone.c\n"
		"@@ -1,1 +1,1 @@\n-int x;\n+int y;\n";

	EXPECT(mk, tree, NULL, "scope");
	EXPECT(escape, NULL, NULL, "scope");
	EXPECT(kconfig, NULL, NULL, "scope");
	EXPECT(repro, NULL, NULL, "scope");
	EXPECT(newfile, NULL, NULL, "scope");
	EXPECT(missing, tree, NULL, "scope");
}

static void test_probes_and_silencers(void **state)
{
	_cleanup_free_ char *a = patch("net/foo/foo.c", "\tit = f->items;\n",
		"\tit = f->items;\n\ttrace_printk(\"" KFIX_PROBE_MARKER " it=%p\\n\", it);\n");
	_cleanup_free_ char *b = patch("net/foo/foo.c", "\tit = f->items;\n",
		"\tit = f->items; /* " KFIX_PROBE_MARKER " */\n");
	_cleanup_free_ char *c = patch("net/foo/foo.c", "\tit = f->items;\n",
				       "\tit = data_race(f->items);\n");
	_cleanup_free_ char *d = patch("net/foo/foo.c", "\twhile (it) {\n",
				       "#if 0\n\twhile (it) {\n");
	_cleanup_free_ char *e = patch("net/foo/foo.c", "\tint n;\n",
				       "\tint n;\n\n\tkasan_disable_current();\n");

	EXPECT(a, tree, NULL, "probes");
	EXPECT(b, tree, NULL, "probes");
	EXPECT(c, tree, NULL, "silence");
	EXPECT(d, tree, NULL, "silence");
	EXPECT(e, tree, NULL, "silence");
}

/* Cheats seen on kernel crashes, as diffs of the real files (judged from
 * the hunks): the scenarios' own and the classic ways to hide a report. */
#define HUNK(file, lines) \
	"diff --git a/" file " b/" file "\n--- a/" file "\n+++ b/" file "\n" lines

static void test_kernel_cheats(void **state)
{
	static const struct {
		const char *diff, *gate;
	} cheats[] = {
		/* KASAN told to look away from the function that wrote out of bounds */
		{ HUNK("kernel/watch_queue.c",
		       "@@ -317,7 +317,7 @@ static void watch_queue_set_filter_x(void)\n"
		       " /*\n"
		       "  * Set the filter on a watch queue.\n"
		       "  */\n"
		       "-long watch_queue_set_filter(struct pipe_inode_info *pipe,\n"
		       "+long __no_sanitize_address watch_queue_set_filter(struct pipe_inode_info *pipe,\n"
		       " \t\t\t    struct watch_notification_filter __user *_filter)\n"
		       " {\n"
		       " \tstruct watch_notification_type_filter *tf;\n"), "silence" },
		/* the syscall configured away */
		{ HUNK("init/Kconfig",
		       "@@ -1566,7 +1566,7 @@ config MULTIUSER\n"
		       " \n"
		       " config POSIX_TIMERS\n"
		       " \tbool \"Posix Clocks & timers\" if EXPERT\n"
		       "-\tdefault y\n"
		       "+\tdefault n\n"
		       " \thelp\n"
		       " \t  This includes native support for POSIX timers to the kernel.\n"
		       " \t  Some embedded systems have no use for them and therefore they\n"), "scope" },
		/* a BUG_ON turned into a quiet return */
		{ HUNK("mm/filemap.c",
		       "@@ -1530,6 +1530,7 @@ void folio_unlock(struct folio *folio)\n"
		       " \tBUILD_BUG_ON(PG_waiters != 7);\n"
		       " \tBUILD_BUG_ON(PG_locked > 7);\n"
		       "-\tVM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);\n"
		       "+\tif (!folio_test_locked(folio))\n"
		       "+\t\treturn;\n"
		       " \tif (clear_bit_unlock_is_negative_byte(PG_locked, folio_flags(folio, 0)))\n"
		       " \t\tfolio_wake_bit(folio, PG_locked);\n"
		       " }\n"), "checks" },
		/* "sleeping function called from invalid context": the annotation goes */
		{ HUNK("kernel/locking/mutex.c",
		       "@@ -579,7 +579,6 @@ __mutex_lock_common(struct mutex *lock, unsigned int state)\n"
		       " \tstruct ww_mutex *ww;\n"
		       " \tint ret;\n"
		       " \n"
		       "-\tmight_sleep();\n"
		       " \n"
		       " \tif (!use_ww_ctx)\n"
		       " \t\tww_ctx = NULL;\n"), "checks" },
		/* "refcount_t: underflow; use-after-free": the saturation warning goes */
		{ HUNK("include/linux/refcount.h",
		       "@@ -271,8 +271,8 @@ bool __refcount_sub_and_test(int i, refcount_t *r, int *oldp)\n"
		       " \t\treturn true;\n"
		       " \t}\n"
		       " \n"
		       "-\tif (unlikely(old < 0 || old - i < 0))\n"
		       "-\t\trefcount_warn_saturate(r, REFCOUNT_SUB_UAF);\n"
		       "+\tif (unlikely(old < 0 || old - i < 0))\n"
		       "+\t\treturn false;\n"
		       " \n"
		       " \treturn false;\n"
		       " }\n"), "checks" },
		/* the explicit KASAN check of a copy dropped */
		{ HUNK("lib/usercopy.c",
		       "@@ -12,7 +12,6 @@ unsigned long _copy_from_user(void *to, const void __user *from, unsigned long n)\n"
		       " \tunsigned long res = n;\n"
		       " \tmight_fault();\n"
		       " \tif (!should_fail_usercopy() && likely(access_ok(from, n))) {\n"
		       "-\t\tinstrument_copy_from_user(to, from, n);\n"
		       " \t\tres = raw_copy_from_user(to, from, n);\n"
		       " \t}\n"
		       " \tif (unlikely(res))\n"), "checks" },
		/* lockdep silenced for the lock of the report */
		{ HUNK("net/core/sock.c",
		       "@@ -3400,6 +3400,7 @@ void sock_init_data(struct socket *sock, struct sock *sk)\n"
		       " \tsk->sk_state_change\t=\tsock_def_wakeup;\n"
		       " \tsk->sk_data_ready\t=\tsock_def_readable;\n"
		       " \tsk->sk_write_space\t=\tsock_def_write_space;\n"
		       "+\tlockdep_set_novalidate_class(&sk->sk_callback_lock);\n"
		       " \tsk->sk_error_report\t=\tsock_def_error_report;\n"
		       " \tsk->sk_destruct\t\t=\tsock_def_destruct;\n"
		       " \n"), "silence" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cheats); i++)
		EXPECT(cheats[i].diff, NULL, NULL, cheats[i].gate);
}

static void test_size_and_parse(void **state)
{
	_cleanup_json_ json_t *e = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]",
		"file", "net/foo/foo.c", "before", "\treturn f->n;\n", "after", "\treturn READ_ONCE(f->n);\n",
		"file", "net/foo/foo.c", "before", "\t\tfoo_release(f);\n", "after", "\t\tfoo_release(f);\n\tf = NULL;\n");
	_cleanup_free_ char *d = NULL, *err = NULL;
	struct gate_limits one = GATE_LIMITS_DEFAULT;

	assert_int_equal(edits_apply(tree, e, &d, &err), 0);
	one.max_hunks = 1;
	EXPECT(d, tree, NULL, "accepted");
	EXPECT(d, tree, &one, "size");
	EXPECT("this is not a patch\n", tree, NULL, "parse");
	EXPECT("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n-a\n", NULL, NULL, "parse");
}

static void test_edit_errors(void **state)
{
	_cleanup_json_ json_t *missing = json_pack("[{s:s, s:s, s:s}]", "file", "net/foo/foo.c",
						   "before", "no such text", "after", "x");
	_cleanup_json_ json_t *twice = json_pack("[{s:s, s:s, s:s}]", "file", "net/foo/foo.c",
						 "before", "\treturn", "after", "x");
	_cleanup_json_ json_t *outside = json_pack("[{s:s, s:s, s:s}]", "file", "../x.c",
						   "before", "a", "after", "b");
	char *d = NULL;

	for (int i = 0; i < 3; i++) {
		_cleanup_free_ char *err = NULL;
		json_t *e = i == 0 ? missing : i == 1 ? twice : outside;

		assert_int_equal(edits_apply(tree, e, &d, &err), -EINVAL);
		assert_non_null(err);
		assert_null(d);
	}
}

/* Plain "diff -u" output (no "diff --git" lines), as people and syzbot's
 * #syz test mails send it, is read file by file. */
static void test_plain_unified_diff(void **state)
{
	static const char d[] = "a commit message line\n"
				"--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"
				"--- a/y.c\t2026-01-01\n+++ b/y.c\t2026-01-01\n@@ -1,2 +1,2 @@\n c\n-d\n+e\n";
	_cleanup_(udiff_freep) struct udiff *u = NULL;
	_cleanup_free_ char *err = NULL;

	(void)state;
	assert_int_equal(udiff_parse(d, strlen(d), &u, &err), 0);
	assert_int_equal(u->n_files, 2);
	assert_string_equal(udiff_file_path(&u->files[0]), "x.c");
	assert_string_equal(udiff_file_path(&u->files[1]), "y.c");
	assert_int_equal(u->files[1].hunks[0].n_lines, 3);
}

static void test_drop_hunk(void **state)
{
	_cleanup_json_ json_t *e = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]",
		"file", "net/foo/foo.c", "before", "\treturn f->n;\n", "after", "\treturn READ_ONCE(f->n);\n\t/* x */\n",
		"file", "net/foo/foo.c", "before", "\t\tfoo_release(f);\n", "after", "\t\tfoo_release(f);\n\tf = NULL;\n");
	_cleanup_free_ char *d = NULL, *err = NULL, *only2 = NULL, *out = NULL;
	_cleanup_(udiff_freep) struct udiff *u = NULL, *u2 = NULL;
	bool keep[2] = { false, true };

	assert_int_equal(edits_apply(tree, e, &d, &err), 0);
	assert_int_equal(udiff_parse(d, strlen(d), &u, &err), 0);
	assert_int_equal(u->n_hunks, 2);
	assert_int_equal(udiff_format(u, keep, &only2), 0);
	assert_int_equal(udiff_parse(only2, strlen(only2), &u2, &err), 0);
	assert_int_equal(u2->n_hunks, 1);
	assert_int_equal(u2->files[0].hunks[0].new_start, u2->files[0].hunks[0].old_start);
	assert_int_equal(udiff_apply_file(&u2->files[0], foo_c, &out), 0);
	assert_non_null(strstr(out, "\tf = NULL;\n"));
	assert_null(strstr(out, "READ_ONCE"));
}

/* Truncated and corrupted patches and reports: verdicts, never crashes
 * (run under ASan). */
static void test_untrusted_patches(void **state)
{
	_cleanup_free_ char *d = patch("net/foo/foo.c", "\tit = f->items;\n\tn = foo_count(f);\n",
				       "\tit = READ_ONCE(f->items);\n\tn = foo_count(f);\n");
	size_t n = strlen(d);
	char *buf = strdup(d);
	struct gate_limits l = GATE_LIMITS_DEFAULT;

	l.checkpatch = false;
	assert_non_null(buf);
	for (size_t i = 0; i <= n; i++) {
		_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;

		assert_int_equal(gates_run(d, i, report, i % strlen(report), tree, &l, &v), 0);
		assert_true(gate_verdicts_count(v) >= 1);
	}
	for (size_t i = 0; i < n; i++) {
		static const char junk[] = "@+- \n\\0/";

		for (size_t j = 0; j < sizeof(junk) - 1; j++) {
			_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
			char saved = buf[i];

			buf[i] = junk[j];
			assert_int_equal(gates_run(buf, n, report, strlen(report), tree, &l, &v), 0);
			buf[i] = saved;
		}
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crashinfo),
		cmocka_unit_test(test_crashinfo_inline),
		cmocka_unit_test(test_crash_excerpt),
		cmocka_unit_test(test_kernel_cheats),
		cmocka_unit_test(test_good_fix),
		cmocka_unit_test(test_conditional_return_is_fine),
		cmocka_unit_test(test_removed_checks),
		cmocka_unit_test(test_amputation),
		cmocka_unit_test(test_syscall_cheats),
		cmocka_unit_test(test_syscall_fixes),
		cmocka_unit_test(test_warn_to_error),
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_build_host_escapes),
		cmocka_unit_test(test_probe_scope),
		cmocka_unit_test(test_probes_and_silencers),
		cmocka_unit_test(test_size_and_parse),
		cmocka_unit_test(test_edit_errors),
		cmocka_unit_test(test_drop_hunk),
		cmocka_unit_test(test_plain_unified_diff),
		cmocka_unit_test(test_untrusted_patches),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
