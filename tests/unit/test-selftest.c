/* Unit tests of repro/selftest: which kselftests cover a patch (from
 * MAINTAINERS and folder names, in a tree made here), which KUnit suites
 * (defined beside the changed files, built into the kernel), the names a
 * configuration may give, the files of a diff, a suite's KTAP result on
 * a console, and what counts as a regression between the base's and the
 * patched kernel's results. */
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

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/selftest-internal.h"

static char tree[] = "/tmp/kfix-selftest-XXXXXX";
static char *objdir; /* the kernel's objects: which suites it was built with */

static void put(const char *rel, const char *text)
{
	char *p, *dir;

	assert_true(asprintf(&p, "%s/%s", tree, rel) > 0);
	dir = strdup(p);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(mkdir_p(dir, 0755), 0);
	assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
	free(dir);
	free(p);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tree))
		return -1;
	put("MAINTAINERS",
	    "List of maintainers\n"
	    "\tM: *Mail* patches to: FullName <address@domain>\n\n"
	    "POSIX CLOCKS and TIMERS\n"
	    "M:\tSomeone <someone@example.org>\n"
	    "S:\tMaintained\n"
	    "F:\tkernel/time/posix-*\n"
	    "F:\ttools/testing/selftests/timers/\n\n"
	    "NETWORKING [GENERAL]\n"
	    "F:\tnet/\n"
	    "F:\tinclude/net/\n"
	    "F:\ttools/testing/selftests/net/mptcp/\n"
	    "X:\tnet/ipv6/\n\n"
	    "A SECTION THAT NAMES A SELFTESTS FILE\n"
	    "F:\tmm/damon/\n"
	    "F:\ttools/testing/selftests/damon/debugfs_attrs.sh\n\n"
	    "FOO DRIVER\n"
	    "F:\tdrivers/foo/\n"
	    "F:\tlib/foo/foo_kunit.c\n"
	    "F:\tlib/foo/bar_kunit.c\n"
	    "F:\tlib/foo/*_glob.c\n\n"
	    "A SECTION WITH A FOLDER THE TREE LACKS\n"
	    "F:\tfs/ext4/\n"
	    "F:\ttools/testing/selftests/ext4/\n");
	put("tools/testing/selftests/timers/Makefile", "TEST_GEN_PROGS = nanosleep\n");
	put("tools/testing/selftests/ipc/Makefile", "TEST_GEN_PROGS = msgque\n");
	put("tools/testing/selftests/net/Makefile", "TEST_PROGS = a.sh\n");
	put("tools/testing/selftests/net/mptcp/Makefile", "TEST_PROGS = b.sh\n");
	put("tools/testing/selftests/damon/Makefile", "TEST_PROGS = debugfs_attrs.sh\n");
	put("tools/testing/selftests/damon/debugfs_attrs.sh", "#!/bin/sh\n");
	/* KUnit suites as the kernel writes them; obj/ is the O= folder */
	put("kernel/time/time_test.c",
	    "#include <kunit/test.h>\n"
	    "static struct kunit_case time_test_cases[] = {\n"
	    "\tKUNIT_CASE(time64_to_tm_test_date_range),\n\t{}\n};\n"
	    "static struct kunit_suite time_test_suite = {\n"
	    "\t.name = \"time_test_cases\",\n\t.test_cases = time_test_cases,\n};\n"
	    "kunit_test_suite(time_test_suite);\n");
	put("obj/kernel/time/time_test.o", "");
	put("obj/kernel/time/posix-timers.o", "");
	/* two suites in one file, under tests/; a declaration is no suite */
	put("lib/tests/list-test.c",
	    "extern struct kunit_suite elsewhere;\n"
	    "static struct kunit_suite list_test_module={.test_cases = c,"
	    ".name=\"list-kunit-test\"};\n"
	    "static struct kunit_suite hlist_test_module = {\n\t.name\t=\t\"hlist\",\n};\n"
	    "static struct kunit_suite bad_name = { .name = \"a*b\" };\n"
	    "kunit_test_suites(&list_test_module, &hlist_test_module, &bad_name);\n");
	put("obj/lib/tests/list-test.o", "");
	/* a suite whose option is off: no object */
	put("lib/tests/sort_test.c",
	    "static struct kunit_suite sort_suite = { .name = \"lib_sort\" };\n"
	    "kunit_test_suites(&sort_suite);\n");
	/* the tests a MAINTAINERS section lists as its own: one built, one
	 * not, one named only by a glob */
	put("drivers/foo/core.c", "int foo;\n");
	put("obj/drivers/foo/core.o", "");
	put("lib/foo/foo_kunit.c",
	    "static struct kunit_suite foo_suite = { .name = \"foo\" };\n"
	    "kunit_test_suites(&foo_suite);\n");
	put("obj/lib/foo/foo_kunit.o", "");
	put("lib/foo/bar_kunit.c",
	    "static struct kunit_suite bar_suite = { .name = \"bar\" };\n"
	    "kunit_test_suites(&bar_suite);\n");
	put("lib/foo/x_glob.c",
	    "static struct kunit_suite x_suite = { .name = \"x\" };\n"
	    "kunit_test_suites(&x_suite);\n");
	put("obj/lib/foo/x_glob.o", "");
	/* an object that is no test */
	put("lib/list.c", "void list(void) {}\n");
	put("obj/lib/list.o", "");
	if (asprintf(&objdir, "%s/obj", tree) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(objdir);
	return rm_rf(tree) < 0 ? -1 : 0;
}

/* The selection as one string, "a b c", or "error" with the code. */
static char *select_in(const char *obj, const char *spec, const char *f1, const char *f2)
{
	char *files[] = { (char *)f1, (char *)f2, NULL };
	char **v = NULL, *err = NULL, *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	int r;

	r = selftest_select(tree, obj, spec, files, &v, &err);
	if (r < 0)
		fprintf(m, "error %d", r);
	for (size_t i = 0; r >= 0 && v[i]; i++)
		fprintf(m, "%s%s", i ? " " : "", v[i]);
	fclose(m);
	if (r < 0)
		assert_non_null(err);
	strv_free(v);
	free(err);
	return out;
}

#define assert_select_in(obj, want, spec, f1, f2)         \
	do {                                              \
		char *got_ = select_in(obj, spec, f1, f2); \
		assert_string_equal(got_, want);          \
		free(got_);                               \
	} while (0)
#define assert_select(want, spec, f1, f2) assert_select_in(NULL, want, spec, f1, f2)

static void test_auto(void **state)
{
	(void)state;
	/* MAINTAINERS: the section's F: glob, its selftests folder */
	assert_select("timers", "auto", "kernel/time/posix-timers.c", NULL);
	assert_select("timers", NULL, "kernel/time/posix-cpu-timers.c", NULL);
	/* a glob does not reach into subfolders; no folder is named "time" */
	assert_select("", "auto", "kernel/time/posix-x/y.c", NULL);
	assert_select("", "auto", "kernel/time/hrtimer.c", NULL);
	/* a folder pattern covers everything below it; then the folder
	 * named like the file's directory */
	assert_select("net/mptcp net", "auto", "net/core/dev.c", NULL);
	assert_select("net/mptcp net", "auto", "include/net/sock.h", NULL);
	/* X: takes a file out of the section */
	assert_select("net", "auto", "net/ipv6/route.c", NULL);
	/* only the folder name */
	assert_select("ipc", "auto", "ipc/msg.c", NULL);
	assert_select("net/mptcp", "auto", "net/mptcp/protocol.c", NULL);
	/* a selftests file names its folder's target */
	assert_select("damon", "auto", "mm/damon/core.c", NULL);
	/* a listed folder the tree does not have is no target */
	assert_select("", "auto", "fs/ext4/inode.c", NULL);
	/* several files, each target once */
	assert_select("timers ipc", "auto", "kernel/time/posix-timers.c", "ipc/msg.c");
	assert_select("", "none", "kernel/time/posix-timers.c", NULL);
}

static void test_kunit_select(void **state)
{
	(void)state;
	/* the suites of the changed file's folder, beside its kselftests */
	assert_select_in(objdir, "timers kunit:time_test_cases", "auto",
			 "kernel/time/posix-timers.c", NULL);
	/* without the kernel's objects, no suite is known to be there */
	assert_select("timers", "auto", "kernel/time/posix-timers.c", NULL);
	/* tests/ beside the file; every suite of a file; a name KUnit's
	 * filter could not take is left out; a suite not built is not run */
	assert_select_in(objdir, "kunit:list-kunit-test kunit:hlist", "auto", "lib/list.c", NULL);
	assert_select_in(objdir, "kunit:list-kunit-test kunit:hlist", "auto",
			 "lib/tests/list-test.c", NULL);
	/* a section's own tests, named by MAINTAINERS far from the file */
	assert_select_in(objdir, "kunit:foo", "auto", "drivers/foo/core.c", NULL);
	assert_select("", "auto", "drivers/foo/core.c", NULL);
	/* no suite in the folder */
	assert_select_in(objdir, "ipc", "auto", "ipc/msg.c", NULL);
	assert_select_in(objdir, "", "none", "kernel/time/posix-timers.c", NULL);
	/* named in the spec: kept as given (the kernel says if it has it) */
	assert_select("kunit:time_test_cases timers", "kunit:time_test_cases timers", NULL, NULL);
	assert_select("kunit:no_such-suite", "kunit:no_such-suite", NULL, NULL);
	assert_select("error -22", "kunit:", NULL, NULL);
	assert_select("error -22", "kunit:a*b", NULL, NULL);
	assert_select("error -22", "kunit:x.y", NULL, NULL);
	assert_select("error -22", "kunit:$(reboot)", NULL, NULL);
	assert_select("error -22", "kunit:a/b", NULL, NULL);
}

static void ktap(const char *console, const char *suite, enum selftest_status want,
		 int failed, const char *in_output)
{
	struct selftest_result r = { 0 };

	assert_int_equal(kunit_parse(console, strlen(console), suite, &r), 0);
	assert_int_equal(r.status, want);
	assert_int_equal(r.exit_status, failed);
	assert_non_null(r.output);
	if (in_output && !strstr(r.output, in_output))
		fail_msg("'%s' not in the output:\n%s", in_output, r.output);
	free(r.output);
}

static void test_kunit_parse(void **state)
{
	/* Linux 6.1's nested KTAP, printk stamps, a failed assertion */
	const char *failed =
		"[    0.900000] Run /init as init process\n"
		"[    1.100000] KTAP version 1\n"
		"[    1.100001] 1..1\n"
		"[    1.100002]     KTAP version 1\n"
		"[    1.100003]     # Subtest: time_test_cases\n"
		"[    1.100004]     1..3\n"
		"[    2.000000]     # time64_to_tm_test_date_range: ASSERTION FAILED at "
		"kernel/time/time_test.c:70\n"
		"[    2.000001]     Expected year - 1900 == result.tm_year, but\n"
		"[    2.000002]         year - 1900 == -79900\n"
		"[    2.000003]     not ok 1 time64_to_tm_test_date_range\n"
		"[    2.000004]         KTAP version 1\n"
		"[    2.000005]         # Subtest: params\n"
		"[    2.000006]         not ok 1 param-0\n"
		"[    2.000007]     ok 2 params\n"
		"[    2.000008]     ok 3 needs_hw # SKIP no hardware\n"
		"[    2.000009] # time_test_cases: pass:1 fail:1 skip:1 total:3\n"
		"[    2.000010] not ok 1 time_test_cases\n"
		"[    2.100000] ok 2 after_the_suite\n";
	/* older kernels' TAP ("ok 1 - name"), CR LF, no stamps */
	const char *passed = "TAP version 14\r\n1..1\r\n    # Subtest: list-kunit-test\r\n"
			     "    1..1\r\n    ok 1 - list_test_init\r\nok 1 - list-kunit-test\r\n";
	const char *skipped = "    # Subtest: hlist\n    ok 1 a # SKIP x\nok 1 hlist # SKIP all\n";
	/* the kernel stopped in the middle of the suite */
	const char *cut = "[ 1.0]     # Subtest: hlist\n[ 1.0]     ok 1 a\n";
	/* a suite whose name begins like another's */
	const char *other = "    # Subtest: hlist_more\n    ok 1 a\nok 1 hlist_more\n";

	(void)state;
	ktap(failed, "time_test_cases", SELFTEST_FAIL, 1,
	     "ASSERTION FAILED at kernel/time/time_test.c:70");
	ktap(failed, "time_test_cases", SELFTEST_FAIL, 1, "not ok 1 time64_to_tm_test_date_range");
	ktap(failed, "time_test_cases", SELFTEST_FAIL, 1,
	     "(1 case(s) passed, 1 failed, 1 skipped)");
	ktap(passed, "list-kunit-test", SELFTEST_PASS, 0, "ok 1 - list_test_init");
	ktap(skipped, "hlist", SELFTEST_SKIP, 0, NULL);
	ktap(cut, "hlist", SELFTEST_FAIL, 0, "did not finish");
	ktap(other, "hlist", SELFTEST_NOT_RUN, -1, "built without it");
	ktap("", "hlist", SELFTEST_NOT_RUN, -1, NULL);
}

/* A VM backend that boots nothing: its console is the fixture's. */
struct vm {
	int unused;
};
static struct vm fake_vm;
static struct {
	const char *console, *msg;
	enum vm_failure failure;	/* VM_OK: the guest comes up */
	char cmdline[512];
	unsigned boots;
} fake;

static int fake_start(const struct vm_opts *o, const char *kernel, struct vm **ret,
		      enum vm_failure *ret_failure, char **ret_error)
{
	(void)kernel;
	fake.boots++;
	snprintf(fake.cmdline, sizeof(fake.cmdline), "%s", o->cmdline ? o->cmdline : "");
	if (fake.failure != VM_OK) {
		*ret_failure = fake.failure;
		*ret_error = strdup(fake.msg);
		return -EIO;
	}
	*ret = &fake_vm;
	return 0;
}

static int fake_console(struct vm *vm, size_t max, char **ret, size_t *ret_len)
{
	(void)vm;
	(void)max;
	*ret = strdup(fake.console);
	*ret_len = strlen(fake.console);
	return 0;
}

static void fake_stop(struct vm *vm)
{
	(void)vm;
}

static const struct vm_backend fake_backend = {
	.name = "fake", .start = fake_start, .console = fake_console, .stop = fake_stop,
};

static const struct selftest_result *result_of(const struct selftest_results *r,
					       const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->r[i].name, name) == 0)
			return &r->r[i];
	fail_msg("no result for %s", name);
	return NULL;
}

static void test_kunit_run(void **state)
{
	struct vm_opts vm = { .cmdline = "quiet" };
	struct selftest_set set = { 0 };
	struct selftest_results res = { 0 };
	const char *names[] = { "kunit:sysctl_test", "kunit:absent" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(strv_push(&set.names, names[i]), 0);
		assert_int_equal(strv_push(&set.paths, names[i]), 0);
	}
	set.n = 2;
	/* a guest per suite, asked for by the kernel's own switches; no
	 * guest for kselftests when none are selected */
	fake = (__typeof__(fake)){ .console = "[ 1.0]     # Subtest: sysctl_test\n[ 1.0]     ok 1 a\n"
					  "[ 1.0] ok 1 sysctl_test\n" };
	assert_int_equal(selftest_run(&vm, &fake_backend, "bzImage", &set, 1000000, &res), 0);
	assert_int_equal(fake.boots, 2);
	assert_string_equal(fake.cmdline, "quiet kunit.enable=1 kunit.filter_glob=absent");
	assert_null(res.error);
	assert_int_equal(res.n, 2);
	assert_int_equal(result_of(&res, "kunit:sysctl_test")->status, SELFTEST_PASS);
	assert_int_equal(result_of(&res, "kunit:absent")->status, SELFTEST_NOT_RUN);
	selftest_results_free(&res);

	/* a kernel the suite crashes never answers: the crash's title */
	fake = (__typeof__(fake)){ .failure = VM_NO_BOOT,
			       .msg = "the VM stopped before guest SSH answered: the kernel crashed "
				      "while booting: BUG: kernel NULL pointer dereference, address: "
				      "0000000000000000; its report: BUG: ..." };
	assert_int_equal(selftest_run(&vm, &fake_backend, "bzImage", &set, 1000000, &res), 0);
	assert_int_equal(result_of(&res, "kunit:sysctl_test")->status, SELFTEST_CRASH);
	assert_string_equal(result_of(&res, "kunit:sysctl_test")->title,
			    "BUG: kernel NULL pointer dereference, address: 0000000000000000");
	selftest_results_free(&res);

	/* still in the suite at the boot time-out, no crash */
	fake = (__typeof__(fake)){ .failure = VM_NO_BOOT,
			       .msg = "guest SSH never answered: console tail: # Subtest: x" };
	assert_int_equal(selftest_run(&vm, &fake_backend, "bzImage", &set, 1000000, &res), 0);
	assert_int_equal(result_of(&res, "kunit:sysctl_test")->status, SELFTEST_TIMEOUT);
	assert_non_null(strstr(result_of(&res, "kunit:sysctl_test")->output, "never answered"));
	selftest_results_free(&res);

	/* the infrastructure failed: said once, no later guest tried */
	fake = (__typeof__(fake)){ .failure = VM_INFRA, .msg = "qemu-system-x86_64: not found" };
	assert_int_equal(selftest_run(&vm, &fake_backend, "bzImage", &set, 1000000, &res), 0);
	assert_int_equal(fake.boots, 1);
	assert_non_null(res.error);
	assert_non_null(strstr(res.error, "qemu-system-x86_64: not found"));
	selftest_results_free(&res);
	selftest_set_free(&set);
}

static void test_kunit_prune(void **state)
{
	struct selftest_set set = { 0 };
	struct selftest_results base = { 0 };
	const char *names[] = { "kunit:absent", "timers:nanosleep", "kunit:here" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(strv_push(&set.names, names[i]), 0);
		assert_int_equal(strv_push(&set.paths, names[i]), 0);
	}
	set.n = 3;
	set.unbuilt = strdup("timers:other\n");
	base.r = calloc(3, sizeof(*base.r));
	base.r[base.n++] = (struct selftest_result){ .name = strdup("kunit:absent"),
						     .status = SELFTEST_NOT_RUN };
	base.r[base.n++] = (struct selftest_result){ .name = strdup("timers:nanosleep"),
						     .status = SELFTEST_NOT_RUN };
	base.r[base.n++] = (struct selftest_result){ .name = strdup("kunit:here"),
						     .status = SELFTEST_FAIL };
	assert_int_equal(selftest_set_prune(&set, &base), 0);
	assert_int_equal(set.n, 2);
	assert_string_equal(set.names[0], "timers:nanosleep");
	assert_string_equal(set.names[1], "kunit:here");
	assert_null(set.names[2]);
	assert_non_null(strstr(set.unbuilt, "timers:other\n"));
	assert_non_null(strstr(set.unbuilt, "kunit:absent: not in the base kernel"));
	/* a base run the infrastructure cut short says nothing of the kernel */
	selftest_results_free(&base);
	base.r = calloc(1, sizeof(*base.r));
	base.r[base.n++] = (struct selftest_result){ .name = strdup("kunit:here"),
						     .status = SELFTEST_NOT_RUN };
	base.error = strdup("the guest did not start: no route");
	assert_int_equal(selftest_set_prune(&set, &base), 0);
	assert_int_equal(set.n, 2);
	selftest_results_free(&base);
	selftest_set_free(&set);
}

static void test_list(void **state)
{
	(void)state;
	assert_select("timers:nanosleep ipc", "timers:nanosleep, ipc", "x.c", NULL);
	assert_select("net/mptcp", " net/mptcp ", NULL, NULL);
	assert_select("ipc", "ipc,ipc", NULL, NULL);
	/* names that would leave the tree, reach a shell, or do not exist */
	assert_select("error -22", "timers:../../x", NULL, NULL);
	assert_select("error -22", "../timers", NULL, NULL);
	assert_select("error -22", "/etc", NULL, NULL);
	assert_select("error -22", "timers;reboot", NULL, NULL);
	assert_select("error -22", "timers:a/b", NULL, NULL);
	assert_select("error -22", "nosuch", NULL, NULL);
	assert_select("error -22", "timers:$(id)", NULL, NULL);
}

static void test_patch_files(void **state)
{
	const char *diff = "diff --git a/ipc/msg.c b/ipc/msg.c\n"
			   "--- a/ipc/msg.c\n+++ b/ipc/msg.c\n@@ -1 +1 @@\n-a\n+b\n"
			   "--- /dev/null\n+++ b/include/new.h\t2024-01-01\n@@ -0,0 +1 @@\n+x\n"
			   "--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
			   "--- a/../etc/passwd\n+++ b/../etc/passwd\n";
	char **v = NULL;

	(void)state;
	assert_int_equal(selftest_patch_files(diff, strlen(diff), &v), 0);
	assert_int_equal(strv_len(v), 3);
	assert_string_equal(v[0], "ipc/msg.c");
	assert_string_equal(v[1], "include/new.h");
	assert_string_equal(v[2], "gone.c");
	strv_free(v);
}

static void results(struct selftest_results *r, const char *name, enum selftest_status st,
		    const char *output, const char *title)
{
	r->r = realloc(r->r, (r->n + 1) * sizeof(*r->r));
	assert_non_null(r->r);
	r->r[r->n++] = (struct selftest_result){
		.name = strdup(name), .status = st, .exit_status = st == SELFTEST_FAIL ? 1 : 0,
		.output = output ? strdup(output) : NULL, .title = title ? strdup(title) : NULL
	};
}

static void test_regressions(void **state)
{
	struct selftest_results base = { 0 }, patched = { 0 };
	char *text = NULL, *sum = NULL;

	(void)state;
	results(&base, "t:pass-fail", SELFTEST_PASS, "ok", NULL);
	results(&patched, "t:pass-fail", SELFTEST_FAIL, "not ok 2 CLOCK_MONOTONIC", NULL);
	results(&base, "t:fail-fail", SELFTEST_FAIL, NULL, NULL);
	results(&patched, "t:fail-fail", SELFTEST_FAIL, NULL, NULL);
	results(&base, "t:pass-pass", SELFTEST_PASS, NULL, NULL);
	results(&patched, "t:pass-pass", SELFTEST_PASS, NULL, NULL);
	results(&base, "t:skip-fail", SELFTEST_SKIP, NULL, NULL);
	results(&patched, "t:skip-fail", SELFTEST_FAIL, NULL, NULL);
	results(&base, "t:pass-crash", SELFTEST_PASS, NULL, NULL);
	results(&patched, "t:pass-crash", SELFTEST_CRASH, NULL, "KASAN: use-after-free Read in f");
	results(&base, "t:pass-skip", SELFTEST_PASS, NULL, NULL);
	results(&patched, "t:pass-skip", SELFTEST_SKIP, NULL, NULL);
	results(&base, "kunit:suite", SELFTEST_PASS, NULL, NULL);
	results(&patched, "kunit:suite", SELFTEST_FAIL, "not ok 1 case", NULL);
	results(&base, "t:pass-timeout", SELFTEST_PASS, NULL, NULL);
	results(&patched, "t:pass-timeout", SELFTEST_TIMEOUT, NULL, NULL);
	/* a test the base never ran is no regression */
	results(&patched, "t:new", SELFTEST_FAIL, NULL, NULL);

	assert_int_equal(selftest_regressions(&base, &patched, &text), 5);
	assert_non_null(strstr(text, "kunit:suite passed on the base kernel and failed on the "
				     "patched kernel (1 case(s) failed)"));
	assert_non_null(strstr(text, "selftest t:pass-fail passed on the base kernel and failed"));
	assert_non_null(strstr(text, "not ok 2 CLOCK_MONOTONIC"));
	assert_non_null(strstr(text, "t:pass-crash passed on the base kernel and crashed the "
				     "patched kernel: KASAN: use-after-free Read in f"));
	assert_non_null(strstr(text, "t:pass-skip passed on the base kernel and was skipped"));
	assert_non_null(strstr(text, "t:pass-timeout passed on the base kernel and ran into the "
				     "time limit"));
	assert_null(strstr(text, "fail-fail"));
	assert_null(strstr(text, "skip-fail"));
	assert_null(strstr(text, "pass-pass"));
	assert_null(strstr(text, "t:new"));
	assert_int_equal(selftest_summary(&base, &patched, &sum), 0);
	assert_non_null(strstr(sum, "t:pass-pass: pass on the base, pass on the patch\n"));
	assert_non_null(strstr(sum, "t:new: not run on the base, fail on the patch\n"));
	free(text);
	free(sum);

	/* nothing regressed: no text */
	selftest_results_free(&patched);
	results(&patched, "t:pass-fail", SELFTEST_PASS, NULL, NULL);
	text = (char *)"unchanged";
	assert_int_equal(selftest_regressions(&base, &patched, &text), 0);
	assert_null(text);
	selftest_results_free(&base);
	selftest_results_free(&patched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_kunit_select),
		cmocka_unit_test(test_kunit_parse),
		cmocka_unit_test(test_kunit_run),
		cmocka_unit_test(test_kunit_prune),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_patch_files),
		cmocka_unit_test(test_regressions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
