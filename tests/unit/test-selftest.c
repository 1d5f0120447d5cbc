/* Unit tests of repro/selftest: which kselftests cover a patch (from
 * MAINTAINERS and folder names, in a tree made here), the names a
 * configuration may give, the files of a diff, and what counts as a
 * regression between the base's and the patched kernel's results. */
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
#include "repro/selftest.h"

static char tree[] = "/tmp/kfix-selftest-XXXXXX";

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
	    "A SECTION WITH A FOLDER THE TREE LACKS\n"
	    "F:\tfs/ext4/\n"
	    "F:\ttools/testing/selftests/ext4/\n");
	put("tools/testing/selftests/timers/Makefile", "TEST_GEN_PROGS = nanosleep\n");
	put("tools/testing/selftests/ipc/Makefile", "TEST_GEN_PROGS = msgque\n");
	put("tools/testing/selftests/net/Makefile", "TEST_PROGS = a.sh\n");
	put("tools/testing/selftests/net/mptcp/Makefile", "TEST_PROGS = b.sh\n");
	put("tools/testing/selftests/damon/Makefile", "TEST_PROGS = debugfs_attrs.sh\n");
	put("tools/testing/selftests/damon/debugfs_attrs.sh", "#!/bin/sh\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rm_rf(tree) < 0 ? -1 : 0;
}

/* The selection as one string, "a b c", or "error" with the code. */
static char *select1(const char *spec, const char *f1, const char *f2)
{
	char *files[] = { (char *)f1, (char *)f2, NULL };
	char **v = NULL, *err = NULL, *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	int r;

	r = selftest_select(tree, spec, files, &v, &err);
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

#define assert_select(want, spec, f1, f2)                 \
	do {                                              \
		char *got_ = select1(spec, f1, f2);       \
		assert_string_equal(got_, want);          \
		free(got_);                               \
	} while (0)

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
	results(&base, "t:pass-timeout", SELFTEST_PASS, NULL, NULL);
	results(&patched, "t:pass-timeout", SELFTEST_TIMEOUT, NULL, NULL);
	/* a test the base never ran is no regression */
	results(&patched, "t:new", SELFTEST_FAIL, NULL, NULL);

	assert_int_equal(selftest_regressions(&base, &patched, &text), 4);
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
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_patch_files),
		cmocka_unit_test(test_regressions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
