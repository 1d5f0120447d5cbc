/* Unit tests of repro/: build log parsing, patch file lists, verdicts,
 * console classification, shell quoting, patch application with the
 * revert journal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include <cmocka.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/build.h"
#include "repro/build-internal.h"
#include "repro/probe.h"
#include "repro/run.h"
#include "repro/ssh-internal.h"
#include "repro/vm.h"

/* The guest command's trailer: how a program ended and its output. */
static void test_trailer(void **state)
{
	char *out = NULL;
	int st = -1;

	(void)state;
	assert_string_equal(" >f 2>&1" RUN_TRAILER("f"),
			    " >f 2>&1; s=$?; tail -c 4096 f; echo; echo kfix-status $s");
	assert_int_equal(run_trailer_parse("hello\nkfix-status 3\n", &st, &out), 0);
	assert_int_equal(st, 3);
	assert_string_equal(out, "hello");
	free(out);
	/* the program may print the mark itself: only the last line counts */
	assert_int_equal(run_trailer_parse("kfix-status 1\nsaid kfix-status 9\n\nkfix-status 0",
					   &st, &out), 0);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "said kfix-status 9"));
	free(out);
	st = 7;
	out = NULL;
	assert_int_equal(run_trailer_parse("lost before the end", &st, &out), -ENOENT);
	assert_int_equal(run_trailer_parse("x kfix-status 2", &st, &out), -ENOENT);
	assert_int_equal(run_trailer_parse("kfix-status -1", &st, &out), -ENOENT);
	assert_int_equal(st, 7);
	assert_null(out);
}

static void test_parse_errors(void **state)
{
	const char log[] =
		"  CC      kernel/time/posix-timers.o\n"
		"/src/linux/kernel/time/posix-timers.c:1133:21: error: 'kfix_no_such_symbol' undeclared (first use in this function)\n"
		"/src/linux/kernel/time/posix-timers.c:1133:21: note: each undeclared identifier is reported only once\n"
		"../include/linux/x.h:7: fatal error: y.h: No such file or directory\n"
		"ld: vmlinux.o: in function `f': undefined reference to `g'\n"
		"make[2]: *** [scripts/Makefile.build:250: kernel/time/posix-timers.o] Error 1\n";
	struct build_error *e = NULL;
	size_t n = 0;

	assert_int_equal(build_parse_errors(log, strlen(log), "/src/linux", 10, &e, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(e[0].file, "kernel/time/posix-timers.c");
	assert_int_equal(e[0].line, 1133);
	assert_string_equal(e[0].message,
			    "'kfix_no_such_symbol' undeclared (first use in this function)");
	assert_string_equal(e[1].file, "include/linux/x.h");
	assert_int_equal(e[1].line, 7);
	assert_string_equal(e[2].file, "");
	assert_non_null(strstr(e[2].message, "undefined reference to `g'"));
	build_errors_free(e, n);

	/* The cap holds. */
	assert_int_equal(build_parse_errors(log, strlen(log), NULL, 1, &e, &n), 0);
	assert_int_equal(n, 1);
	build_errors_free(e, n);
}

static void test_patch_files(void **state)
{
	const char p[] = "--- a/ipc/msg.c\n+++ b/ipc/msg.c\n@@ -1 +1 @@\n-a\n+b\n"
			 "--- a/include/x.h\n+++ b/include/x.h\n"
			 "--- a/kernel/sys.c\t2020\n+++ b/kernel/sys.c\t2020\n"
			 "+++ b/../../etc/evil.c\n+++ b//abs.c\n+++ b/ipc/msg.c\n";
	_cleanup_strv_ char **f = NULL;

	assert_int_equal(build_patch_files(p, strlen(p), &f), 0);
	assert_int_equal(strv_len(f), 2);
	assert_string_equal(f[0], "ipc/msg.c");
	assert_string_equal(f[1], "kernel/sys.c");
}

static struct run_result mk(enum run_outcome o, const char *title)
{
	return (struct run_result){ .outcome = o, .title = title ? strdup(title) : NULL };
}

static void test_verdicts(void **state)
{
	char *titles[] = { "KASAN: use-after-free Read in freeque", NULL };
	struct run_result b[] = { mk(RUN_INFRA_ERROR, NULL),
				  mk(RUN_CRASHED, "KASAN: use-after-free Read in freeque") };
	struct run_series base = { .attempts = 2, .counted = 1, .crashed = 1, .results = b,
				   .n_results = 2 };
	struct run_result p[] = { mk(RUN_NO_CRASH, NULL), mk(RUN_INFRA_ERROR, NULL),
				  mk(RUN_NO_CRASH, NULL) };
	struct run_series patched = { .attempts = 3, .counted = 2, .results = p, .n_results = 3 };
	char *other[] = { "WARNING in foo", NULL };

	assert_int_equal(verdict_base(&base, titles, 3), VERDICT_REPRODUCED);
	assert_int_equal(verdict_base(&base, other, 1), VERDICT_NOT_REPRODUCED);
	assert_int_equal(verdict_base(&base, other, 3), VERDICT_INFRA_ERROR);
	assert_int_equal(verdict_base(&base, NULL, 3), VERDICT_REPRODUCED);
	/* Infra errors never count: two valid runs are not three. */
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 3), VERDICT_INFRA_ERROR);
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_FIXED);
	assert_int_equal(verdict_patch(VERDICT_NOT_REPRODUCED, &patched, 2),
			 VERDICT_NOT_REPRODUCED);
	patched.crashed = 1;
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_NOT_FIXED);
	patched.crashed = 0;
	patched.boot_error = true;
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_BOOT_ERROR);
	patched.boot_error = false;
	/* crash gone, behaviour changed: the reproducer failed on its own */
	p[2].exit_status = 1;
	assert_true(run_result_failed_exit(&p[2]));
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_BEHAVIOUR_CHANGED);
	p[2].exit_status = 0;
	p[2].exit_signal = 11;
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_BEHAVIOUR_CHANGED);
	/* killed at kfix's time-out: judged by the crash alone */
	p[2].exit_signal = 9;
	p[2].timed_out = true;
	assert_false(run_result_failed_exit(&p[2]));
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_FIXED);
	/* a crash decides before the exit status */
	p[1].exit_status = 1;
	assert_false(run_result_failed_exit(&p[1]));
	p[0].leaks = strdup("unreferenced object 0xffff888004a3c000 (size 64):\n");
	p[0].leak_checked = true;
	assert_int_equal(verdict_patch(VERDICT_REPRODUCED, &patched, 2), VERDICT_LEAKED);
	assert_string_equal(verdict_to_string(VERDICT_LEAKED), "leaked");
	assert_string_equal(verdict_to_string(VERDICT_BEHAVIOUR_CHANGED), "behaviour-changed");
	for (size_t i = 0; i < 2; i++)
		run_result_free(&b[i]);
	for (size_t i = 0; i < 3; i++)
		run_result_free(&p[i]);
	assert_string_equal(verdict_to_string(VERDICT_NOT_FIXED), "not-fixed");
	assert_string_equal(run_outcome_to_string(RUN_INFRA_ERROR), "infra-error");
}

static void test_classify(void **state)
{
	const char kasan[] =
		"[    9.1] random boot line\n"
		"[   12.0] ==================================================================\n"
		"[   12.0] BUG: KASAN: use-after-free in freeque+0x3f2/0x440\n"
		"[   12.0] Read of size 8 at addr ffff888004c1e018 by task kfix-repro/71\n";
	const char warn[] = "------------[ cut here ]------------\n"
			    "WARNING: CPU: 0 PID: 1 at kernel/sys.c:10 do_thing+0x1/0x2\n"
			    "Modules linked in:\n"
			    "CPU: 0 PID: 1 Comm: a Not tainted 6.1.0 #1\n"
			    "RIP: 0010:do_thing+0x1/0x2\n"
			    "Call Trace:\n <TASK>\n __x64_sys_foo+0x10/0x20\n"
			    " do_syscall_64+0x35/0x80\n"
			    " entry_SYSCALL_64_after_hwframe+0x63/0xcd\n </TASK>\n";
	const char gpf[] =
		"general protection fault, probably for non-canonical address 0xdffffc0000000003: 0000 [#1] SMP KASAN\n"
		"KASAN: null-ptr-deref in range [0x18-0x1f]\n"
		"CPU: 0 PID: 71 Comm: kfix-repro\n"
		"RIP: 0010:__x64_sys_clock_gettime+0x9c/0x1a0\n";
	char *t = NULL, *r = NULL;

	assert_int_equal(run_classify_console(kasan, strlen(kasan), &t, &r), 0);
	assert_string_equal(t, "KASAN: use-after-free Read in freeque");
	assert_non_null(strstr(r, "BUG: KASAN"));
	free(t);
	free(r);
	assert_int_equal(run_classify_console(warn, strlen(warn), &t, &r), 0);
	assert_string_equal(t, "WARNING in do_thing");
	free(t);
	free(r);
	assert_int_equal(run_classify_console(gpf, strlen(gpf), &t, &r), 0);
	assert_string_equal(t, "general protection fault in sys_clock_gettime");
	free(t);
	free(r);
	assert_int_equal(run_classify_console("all fine\n", 9, &t, &r), -ENOENT);
}

static void test_quote(void **state)
{
	_cleanup_free_ char *a = ssh_quote("plain"), *b = ssh_quote("it's; rm -rf /");

	assert_string_equal(a, "'plain'");
	assert_string_equal(b, "'it'\\''s; rm -rf /'");
}

/* A patch is applied for a build and reverted afterwards, even when the
 * build fails; a patch that does not apply is refused before. */
static void test_apply_revert(void **state)
{
	static const char good_patch[] =
		"--- a/hello.c\n+++ b/hello.c\n@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n";
	static const char bad_patch[] =
		"--- a/hello.c\n+++ b/hello.c\n@@ -1 +1 @@\n-int y = 1;\n+int y = 2;\n";
	char dir[] = "/tmp/kfix-test-repro-XXXXXX";
	_cleanup_free_ char *src = NULL, *file = NULL, *patch = NULL, *bad = NULL,
			    *cfg = NULL, *out = NULL, *data = NULL;
	char *patches[2] = { NULL, NULL };
	struct build_result res = { 0 };
	struct build_opts o = { 0 };
	size_t len;

	if (access("/usr/bin/patch", X_OK) < 0)
		skip();
	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&src, "%s/src", dir) > 0);
	assert_true(asprintf(&file, "%s/src/hello.c", dir) > 0);
	assert_true(asprintf(&patch, "%s/fix.patch", dir) > 0);
	assert_true(asprintf(&bad, "%s/bad.patch", dir) > 0);
	assert_true(asprintf(&cfg, "%s/test.config", dir) > 0);
	assert_true(asprintf(&out, "%s/out", dir) > 0);
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(write_file_atomic(file, "int x = 1;\n", 11, 0644), 0);
	assert_int_equal(write_file_atomic(patch, good_patch, strlen(good_patch), 0644), 0);
	assert_int_equal(write_file_atomic(bad, bad_patch, strlen(bad_patch), 0644), 0);
	assert_int_equal(write_file_atomic(cfg, "CONFIG_X=y\n", 11, 0644), 0);
	o.src = src;
	o.config = cfg;
	o.dir = out;
	o.patches = patches;
	patches[0] = bad;
	assert_int_equal(build_check_apply(&o, &res), 0);
	assert_int_equal(res.status, BUILD_BAD_PATCH);
	build_result_free(&res);
	patches[0] = patch;
	assert_int_equal(build_check_apply(&o, &res), 0);
	assert_int_equal(res.status, BUILD_OK);
	build_result_free(&res);
	/* There is no kernel Makefile here: make fails, the patch must still
	 * be reverted. */
	assert_int_equal(build_kernel(&o, &res), 0);
	assert_int_not_equal(res.status, BUILD_OK);
	build_result_free(&res);
	assert_int_equal(read_file_bounded(file, 100, &data, &len), 0);
	assert_string_equal(data, "int x = 1;\n");
	assert_int_equal(rm_rf(dir), 0);
}

static void test_probe_patch(void **state)
{
	char dir[] = "/tmp/kfix-test-probe-XXXXXX";
	_cleanup_free_ char *file = NULL, *patch = NULL;
	const struct probe_point pts[] = {
		{ "f.c", 3, "\"b=%d\\n\", b" },
		{ "f.c", 1, "\"start\\n\"" },
		{ "f.c", 9, "\"no such line\"" },
	};
	const char console[] = "[ 1.0] KFIXPROBE00 1: start\n[ 1.1] other\n"
			       "[ 1.2] KFIXPROBE00 0: b=3\n[ 1.3] KFIXPROBE01 0: not ours\n";
	_cleanup_strv_ char **lines = NULL;
	static const char src_text[] = "int a;\nint b;\nvoid f(void) {\n}\n";
	char marker[32];

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&file, "%s/f.c", dir) > 0);
	assert_int_equal(write_file_atomic(file, src_text, strlen(src_text), 0644), 0);
	assert_int_equal(probe_marker_new(marker), 0);
	assert_true(startswith(marker, "KFIXPROBE"));
	assert_int_equal(strlen(marker), 25);
	assert_int_equal(probe_make_patch(dir, pts, 2, "KFIXPROBE00", &patch), 0);
	assert_non_null(strstr(patch, "@@ -1,1 +1,2 @@\n int a;\n+\tprintk(KERN_ERR \"KFIXPROBE00 1: \" \"start\\n\");\n"));
	assert_non_null(strstr(patch, "@@ -3,1 +4,2 @@\n void f(void) {\n+"));
	free(patch);
	patch = NULL;
	assert_int_equal(probe_make_patch(dir, pts, 3, "KFIXPROBE00", &patch), -EINVAL);
	assert_int_equal(probe_extract(console, strlen(console), "KFIXPROBE00", &lines), 0);
	assert_int_equal(strv_len(lines), 2);
	assert_string_equal(lines[0], "1: start");
	assert_string_equal(lines[1], "0: b=3");
	assert_int_equal(rm_rf(dir), 0);
}

struct progress_log {
	int stages[16];
	size_t n_stages;
	int max_running_percent; /* highest before the build ended */
	int last_percent;
	unsigned steps;
	bool unknown_seen, decreased;
};

static void record_progress(void *userdata, const struct build_progress *p)
{
	struct progress_log *l = userdata;

	if (l->n_stages == 0 || l->stages[l->n_stages - 1] != (int)p->stage)
		if (l->n_stages < ARRAY_SIZE(l->stages))
			l->stages[l->n_stages++] = (int)p->stage;
	if (p->stage == BUILD_STAGE_COMPILE || p->stage == BUILD_STAGE_LINK) {
		if (p->percent < 0)
			l->unknown_seen = true;
		if (p->percent < l->max_running_percent)
			l->decreased = true;
		l->max_running_percent = MAX(l->max_running_percent, p->percent);
	}
	l->last_percent = p->percent;
	l->steps = p->steps;
}

/* Each build sees an edited source, so that make runs: the same source
 * again would get the kept base kernel (test_base_cache). */
static void build_with_log(struct build_opts *o, struct progress_log *l, struct build_result *res)
{
	static unsigned edits;
	_cleanup_free_ char *path = NULL, *text = NULL;

	assert_true(asprintf(&path, "%s/edited.c", o->src) > 0);
	assert_true(asprintf(&text, "int edit = %u;\n", ++edits) > 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text), 0644), 0);
	*l = (struct progress_log){ .max_running_percent = -1 };
	o->progress = record_progress;
	o->userdata = l;
	assert_int_equal(build_kernel(o, res), 0);
}

/* The config the stand-in builds take: what kfix requires of a kernel. */
static const char fake_cfg[] =
	"# test\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_NET=y\n"
	"CONFIG_INET=y\nCONFIG_VIRTIO_NET=y\nCONFIG_VIRTIO_PCI=y\nCONFIG_PRINTK=y\n";

/* A source folder, that config and a make of the test's own first in
 * PATH (a script, or tests/integration/fake-make when NULL), in dir. */
struct fake_build {
	char *src, *cfg, *out, *old_path;
	struct build_opts o;
};

static void fake_build_setup(struct fake_build *fb, const char *dir, const char *make_script)
{
	_cleanup_free_ char *bin = NULL, *make = NULL, *path = NULL;

	fb->old_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	assert_true(asprintf(&fb->src, "%s/src", dir) > 0);
	assert_true(asprintf(&fb->cfg, "%s/test.config", dir) > 0);
	assert_true(asprintf(&fb->out, "%s/out", dir) > 0);
	assert_true(asprintf(&bin, "%s/bin", dir) > 0);
	assert_true(asprintf(&make, "%s/bin/make", dir) > 0);
	assert_true(asprintf(&path, "%s:%s", bin, fb->old_path) > 0);
	assert_int_equal(mkdir_p(fb->src, 0755), 0);
	assert_int_equal(mkdir_p(bin, 0755), 0);
	if (make_script) {
		assert_int_equal(write_file_atomic(make, make_script, strlen(make_script), 0755), 0);
		assert_int_equal(chmod(make, 0755), 0);
	} else {
		assert_int_equal(symlink(SRCDIR "/tests/integration/fake-make", make), 0);
	}
	assert_int_equal(write_file_atomic(fb->cfg, fake_cfg, strlen(fake_cfg), 0644), 0);
	assert_int_equal(setenv("PATH", path, 1), 0);
	fb->o = (struct build_opts){ .src = fb->src, .config = fb->cfg, .dir = fb->out, .jobs = 1 };
}

static void fake_build_teardown(struct fake_build *fb)
{
	assert_int_equal(setenv("PATH", fb->old_path, 1), 0);
	free(fb->src);
	free(fb->cfg);
	free(fb->out);
	free(fb->old_path);
}

/* Build progress with a stand-in for make: the stages in order, and a
 * percentage once a build of the same kind (cold or incremental) has been
 * seen in the same O= directory; a full disk is an infrastructure error,
 * not the compiler errors that follow it. */
static void test_build_progress(void **state)
{
	static const int order[] = { BUILD_STAGE_CONFIG, BUILD_STAGE_COMPILE, BUILD_STAGE_LINK,
				     BUILD_STAGE_DONE };
	char dir[] = "/tmp/kfix-test-progress-XXXXXX";
	_cleanup_free_ char *vmlinux = NULL;
	struct fake_build fb = { 0 };
	struct build_opts *o = &fb.o;
	struct build_result res = { 0 };
	struct progress_log l;

	assert_non_null(mkdtemp(dir));
	fake_build_setup(&fb, dir, NULL);
	assert_true(asprintf(&vmlinux, "%s/out/src--test/vmlinux", dir) > 0);

	/* The first build of the directory: no estimate, only steps. */
	build_with_log(o, &l, &res);
	assert_int_equal(res.status, BUILD_OK);
	assert_int_equal(l.n_stages, ARRAY_SIZE(order));
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		assert_int_equal(l.stages[i], order[i]);
	assert_true(l.unknown_seen);
	assert_int_equal(l.max_running_percent, -1);
	assert_int_equal(l.last_percent, 100);
	assert_int_equal(l.steps, 36); /* 30 CC, AR, 2 LD, KSYMS, LD, BUILD */
	build_result_free(&res);

	/* Incremental, and none seen before: still no estimate. */
	build_with_log(o, &l, &res);
	assert_int_equal(res.status, BUILD_OK);
	assert_int_equal(l.max_running_percent, -1);
	build_result_free(&res);

	/* Incremental again: estimated, rising, below 100 until done. */
	build_with_log(o, &l, &res);
	assert_int_equal(res.status, BUILD_OK);
	assert_false(l.unknown_seen);
	assert_false(l.decreased);
	assert_int_equal(l.max_running_percent, 99);
	assert_int_equal(l.last_percent, 100);
	build_result_free(&res);

	/* A cold build after a cold one is estimated too. */
	assert_int_equal(unlink(vmlinux), 0);
	build_with_log(o, &l, &res);
	assert_false(l.unknown_seen);
	build_result_free(&res);

	/* The disk fills up: the compiler errors that follow are not the
	 * code's; nothing is blamed on a file. */
	assert_int_equal(setenv("FAKE_MAKE_FAIL", "nospace", 1), 0);
	build_with_log(o, &l, &res);
	assert_int_equal(res.status, BUILD_INFRA);
	assert_non_null(strstr(res.message, "no space left on device"));
	assert_int_equal(res.n_errors, 0);
	assert_int_not_equal(l.last_percent, 100);
	build_result_free(&res);

	/* A real compiler error is still one. */
	assert_int_equal(setenv("FAKE_MAKE_FAIL", "error", 1), 0);
	build_with_log(o, &l, &res);
	assert_int_equal(res.status, BUILD_FAILED);
	assert_int_equal(res.n_errors, 1);
	assert_string_equal(res.errors[0].file, "kernel/f1.c");
	build_result_free(&res);

	assert_int_equal(unsetenv("FAKE_MAKE_FAIL"), 0);
	fake_build_teardown(&fb);
	assert_int_equal(rm_rf(dir), 0);
}

static unsigned make_count(const char *dir)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	size_t len = 0;

	assert_true(asprintf(&path, "%s/makes", dir) > 0);
	if (read_file_bounded(path, 4096, &data, &len) < 0)
		return 0;
	return (unsigned)len;
}

static void expect_base(struct build_opts *o, const char *dir, unsigned makes, const char *kernel)
{
	_cleanup_free_ char *data = NULL;
	struct build_result res = { 0 };
	unsigned before = make_count(dir);
	size_t len;

	assert_int_equal(build_kernel(o, &res), 0);
	assert_int_equal(res.status, BUILD_OK);
	assert_int_equal(make_count(dir), makes);
	assert_int_equal(res.kept, makes == before);
	assert_int_equal(read_file_bounded(res.bzimage, 4096, &data, &len), 0);
	assert_string_equal(data, kernel);
	build_result_free(&res);
}

/* The base kernel is kept aside: a base build after a patched build and
 * its revert copies it back instead of running make; a source edited by
 * hand, a new file or another config is built again. */
static void test_base_cache(void **state)
{
	static const char patch_text[] =
		"--- a/hello.c\n+++ b/hello.c\n@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n"
		"--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+int y;\n";
	/* counts the kernel builds; the "kernel" holds the source it was
	 * built from */
	static const char wrapper[] =
		"#!/bin/sh\nfor a; do case $a in -C*) s=${a#-C} ;; O=*) o=${a#O=} ;; esac; done\n"
		"case \" $* \" in *\" bzImage \"*|*\" bzImage\") printf x >> \"$KFIX_TEST_DIR/makes\" ;; esac\n"
		"\"$FAKE_MAKE\" \"$@\" || exit\n"
		"[ ! -f \"$o/arch/x86/boot/bzImage\" ] || cat \"$s/hello.c\" > \"$o/arch/x86/boot/bzImage\"\n";
	char dir[] = "/tmp/kfix-test-basecache-XXXXXX";
	_cleanup_free_ char *hello = NULL, *patch = NULL, *newfile = NULL;
	char *patches[2] = { NULL, NULL };
	struct fake_build fb = { 0 };
	struct build_opts o;
	struct build_result res = { 0 };

	if (access("/usr/bin/patch", X_OK) < 0)
		skip();
	assert_non_null(mkdtemp(dir));
	fake_build_setup(&fb, dir, wrapper);
	o = fb.o;
	o.sandbox = SANDBOX_NONE;
	assert_true(asprintf(&hello, "%s/src/hello.c", dir) > 0);
	assert_true(asprintf(&newfile, "%s/src/new.c", dir) > 0);
	assert_true(asprintf(&patch, "%s/fix.patch", dir) > 0);
	assert_int_equal(write_file_atomic(hello, "int x = 1;\n", 11, 0644), 0);
	assert_int_equal(write_file_atomic(patch, patch_text, strlen(patch_text), 0644), 0);
	assert_int_equal(setenv("KFIX_TEST_DIR", dir, 1), 0);
	assert_int_equal(setenv("FAKE_MAKE", SRCDIR "/tests/integration/fake-make", 1), 0);

	expect_base(&o, dir, 1, "int x = 1;\n");
	/* nothing changed: kept */
	expect_base(&o, dir, 1, "int x = 1;\n");

	/* a patched build runs make; its revert leaves the source as it was */
	patches[0] = patch;
	o.patches = patches;
	assert_int_equal(build_kernel(&o, &res), 0);
	assert_int_equal(res.status, BUILD_OK);
	assert_int_equal(make_count(dir), 2);
	build_result_free(&res);
	assert_int_equal(access(newfile, F_OK), -1);
	o.patches = NULL;
	expect_base(&o, dir, 2, "int x = 1;\n");
	/* twice: the kept copies of the reverted file still tell */
	expect_base(&o, dir, 2, "int x = 1;\n");

	/* the same content written by hand is the same source */
	assert_int_equal(write_file_atomic(hello, "int x = 1;\n", 11, 0644), 0);
	expect_base(&o, dir, 2, "int x = 1;\n");
	/* an edit by hand is not */
	assert_int_equal(write_file_atomic(hello, "int x = 3;\n", 11, 0644), 0);
	expect_base(&o, dir, 3, "int x = 3;\n");
	expect_base(&o, dir, 3, "int x = 3;\n");
	/* nor is a new file */
	assert_int_equal(write_file_atomic(newfile, "int z;\n", 7, 0644), 0);
	expect_base(&o, dir, 4, "int x = 3;\n");
	assert_int_equal(unlink(newfile), 0);
	expect_base(&o, dir, 5, "int x = 3;\n");
	/* nor another config */
	{
		_cleanup_free_ char *all = NULL;

		assert_true(asprintf(&all, "%sCONFIG_KASAN=y\n", fake_cfg) > 0);
		assert_int_equal(write_file_atomic(fb.cfg, all, strlen(all), 0644), 0);
	}
	expect_base(&o, dir, 6, "int x = 3;\n");
	expect_base(&o, dir, 6, "int x = 3;\n");

	/* a patch whose files are not plain paths drops what is kept */
	{
		static const char odd[] = "--- a/../x.c\n+++ b/../x.c\n@@ -1 +1 @@\n-a\n+b\n";
		_cleanup_free_ char *cache = NULL;

		assert_int_equal(write_file_atomic(patch, odd, strlen(odd), 0644), 0);
		patches[0] = patch;
		o.patches = patches;
		assert_int_equal(build_kernel(&o, &res), 0);
		build_result_free(&res);
		o.patches = NULL;
		assert_true(asprintf(&cache, "%s/src--test/.kfix-base", fb.out) > 0);
		assert_int_equal(access(cache, F_OK), -1);
	}

	assert_int_equal(unsetenv("FAKE_MAKE"), 0);
	assert_int_equal(unsetenv("KFIX_TEST_DIR"), 0);
	fake_build_teardown(&fb);
	assert_int_equal(rm_rf(dir), 0);
}

static char *joined(char **v)
{
	size_t n = 1;
	char *s;

	for (size_t i = 0; v[i]; i++)
		n += strlen(v[i]) + 1;
	s = calloc(1, n);
	for (size_t i = 0; s && v[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, v[i]);
	}
	return s;
}

static void expect_argv(const struct syz_opts *o, const char *want)
{
	_cleanup_strv_ char **v = NULL;
	_cleanup_free_ char *got = NULL;

	assert_int_equal(syz_execprog_argv(o, "./syz-execprog", "/tmp/syz-executor", "p.syz", &v), 0);
	got = joined(v);
	assert_string_equal(got, want);
}

/* syzbot's repro options become syz-execprog's flags as syzkaller's own
 * reproduction builds them; values that syz-execprog would not take, or
 * that try to reach a shell, are refused. */
static void test_syz_argv(void **state)
{
	static const char syzbot_json[] =
		"{\"threaded\":true,\"repeat\":true,\"procs\":6,\"slowdown\":1,"
		"\"sandbox\":\"namespace\",\"sandbox_arg\":0,\"tun\":true,\"netdev\":true,"
		"\"resetnet\":true,\"cgroups\":true,\"close_fds\":true,\"tmpdir\":true,\"segv\":true}";
	static const char legacy[] =
		"{Threaded:true Collide:true Repeat:false Procs:1 Sandbox:setuid Fault:true "
		"FaultCall:3 FaultNth:7 EnableTun:true UseTmpDir:true HandleSegv:true "
		"WaitRepeat:true Debug:false Repro:false}";
	static const char prog[] = "# {\"repeat\":true,\"procs\":2,\"sandbox\":\"none\"}\n"
				   "r0 = msgget$private(0x0, 0x600)\nmsgctl$IPC_RMID(r0, 0x0)\n";
	static const char *const bad[] = {
		"{\"sandbox\":\"none; reboot\"}",
		"{\"sandbox\":\"none' -x '\"}",
		"{\"procs\":0}",
		"{\"procs\":100000}",
		"{\"procs\":\"6\"}",
		"{\"threaded\":\"yes\"}",
		"{\"fault_call\":-5}",
		"{Threaded:true Sandbox:$(reboot)}",
		"{Procs:x}",
		"not options",
		"",
	};
	struct syz_opts o;

	syz_opts_default(&o);
	expect_argv(&o, "./syz-execprog -executor=/tmp/syz-executor -arch=amd64 -sandbox=none "
			"-procs=1 -repeat=0 -threaded=true -collide=false p.syz");

	assert_int_equal(syz_opts_parse(syzbot_json, strlen(syzbot_json), &o), 0);
	assert_int_equal(o.procs, 6);
	assert_string_equal(o.sandbox, "namespace");
	expect_argv(&o, "./syz-execprog -executor=/tmp/syz-executor -arch=amd64 "
			"-sandbox=namespace -procs=6 -repeat=0 -threaded=true -collide=false p.syz");

	/* The older form; repeat and threaded are forced on as syzkaller
	 * does when it reproduces, a fault is injected where asked. */
	assert_int_equal(syz_opts_parse(legacy, strlen(legacy), &o), 0);
	assert_false(o.repeat);
	assert_true(o.fault);
	expect_argv(&o, "./syz-execprog -executor=/tmp/syz-executor -arch=amd64 -sandbox=setuid "
			"-procs=1 -repeat=0 -threaded=true -collide=true -fault_call=3 "
			"-fault_nth=7 p.syz");

	/* A bounded repeat count is kept; an empty sandbox is "none". */
	assert_int_equal(syz_opts_parse("{\"repeat\":true,\"repeat_times\":5,\"sandbox\":\"\"}",
					 strlen("{\"repeat\":true,\"repeat_times\":5,\"sandbox\":\"\"}"),
					 &o), 0);
	expect_argv(&o, "./syz-execprog -executor=/tmp/syz-executor -arch=amd64 -sandbox=none "
			"-procs=1 -repeat=5 -threaded=true -collide=false p.syz");

	/* Options in the program's first line. */
	assert_int_equal(syz_opts_from_program(prog, strlen(prog), &o), 0);
	assert_int_equal(o.procs, 2);
	assert_int_equal(syz_opts_from_program(strchr(prog, '\n') + 1,
					       strlen(strchr(prog, '\n') + 1), &o), -ENOENT);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		syz_opts_default(&o);
		assert_int_equal(syz_opts_parse(bad[i], strlen(bad[i]), &o), -EINVAL);
		assert_string_equal(o.sandbox, "none"); /* untouched on failure */
	}
	/* A value set by hand is checked again when building the argv. */
	syz_opts_default(&o);
	strcpy(o.sandbox, "x;y");
	{
		char **v = NULL;

		assert_int_equal(syz_execprog_argv(&o, "a", "b", "c", &v), -EINVAL);
		assert_null(v);
	}
}

/* The NUL-separated paths of a plan's list, as one "a|b|" string. */
static char *plan_list(const char *v, size_t len)
{
	char *out = calloc(1, len + 1);

	assert_non_null(out);
	for (size_t i = 0; i < len; i++)
		out[i] = v[i] ? v[i] : '|';
	return out;
}

static void put(const char *dir, const char *name, const char *data)
{
	_cleanup_free_ char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	assert_int_equal(write_file_atomic(p, data, strlen(data), 0644), 0);
}

/* What goes to a build host: everything the first time (not .git nor
 * kfix's own files), then only changed, new and removed files. */
static void test_sync_plan(void **state)
{
	char dir[] = "/tmp/kfix-test-sync-XXXXXX";
	_cleanup_free_ char *sub = NULL, *git = NULL, *ch = NULL, *rm = NULL, *f1 = NULL;
	struct sync_plan p = { 0 }, q = { 0 };
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&sub, "%s/kernel", dir) > 0);
	assert_true(asprintf(&git, "%s/.git", dir) > 0);
	assert_int_equal(mkdir_p(sub, 0755), 0);
	assert_int_equal(mkdir_p(git, 0755), 0);
	put(dir, "Makefile", "all:\n");
	put(dir, "kernel/a.c", "int a;\n");
	put(dir, "kernel/b.c", "int b;\n");
	put(dir, ".git/HEAD", "ref\n");
	put(dir, ".kfix.lock", "");
	assert_int_equal(sync_plan_make(dir, NULL, 0, &p), 0);
	ch = plan_list(p.changed, p.changed_len);
	assert_string_equal(ch, "Makefile|kernel/a.c|kernel/b.c|");
	assert_int_equal(p.n_changed, 3);
	assert_int_equal(p.n_removed, 0);

	/* Nothing changed: nothing to send. */
	assert_int_equal(sync_plan_make(dir, p.manifest, p.manifest_len, &q), 0);
	assert_int_equal(q.n_changed, 0);
	assert_int_equal(q.n_removed, 0);
	sync_plan_free(&q);

	/* Same size, other mtime; one removed; one new. */
	assert_true(asprintf(&f1, "%s/kernel/a.c", dir) > 0);
	assert_int_equal(utimensat(AT_FDCWD, f1, old, 0), 0);
	free(f1);
	assert_true(asprintf(&f1, "%s/kernel/b.c", dir) > 0);
	assert_int_equal(unlink(f1), 0);
	put(dir, "kernel/c.c", "int c;\n");
	assert_int_equal(sync_plan_make(dir, p.manifest, p.manifest_len, &q), 0);
	free(ch);
	ch = plan_list(q.changed, q.changed_len);
	rm = plan_list(q.removed, q.removed_len);
	assert_string_equal(ch, "kernel/a.c|kernel/c.c|");
	assert_string_equal(rm, "kernel/b.c|");
	sync_plan_free(&q);
	sync_plan_free(&p);
	assert_int_equal(rm_rf(dir), 0);
}

/* Untrusted code compiled in the sandbox: a reproducer that includes a
 * file from outside its folder does not see it (and the compiler's
 * message does not quote it), one that is fine compiles; a build's make
 * sees neither the network nor the files kfix keeps. */
static void test_sandbox(void **state)
{
	char dir[] = "/tmp/kfix-test-sandbox-XXXXXX";
	_cleanup_free_ char *secret = NULL, *bad = NULL, *good = NULL, *out = NULL, *msg = NULL,
			    *src = NULL, *text = NULL;
	char line[8192];

	(void)state;
	if (sandbox_available(SANDBOX_BWRAP) < 0) {
		fprintf(stderr, "SKIP: bwrap is not installed (apt-get install bubblewrap)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&secret, "%s/secret/token", dir) > 0);
	assert_true(asprintf(&src, "%s/repro", dir) > 0);
	assert_true(asprintf(&bad, "%s/repro/bad.c", dir) > 0);
	assert_true(asprintf(&good, "%s/repro/good.c", dir) > 0);
	assert_true(asprintf(&out, "%s/repro/bin", dir) > 0);
	assert_int_equal(mkdir_p(src, 0755), 0);
	{
		char sd[4096];

		snprintf(sd, sizeof(sd), "%s/secret", dir);
		assert_int_equal(mkdir_p(sd, 0700), 0);
	}
	assert_int_equal(write_file_atomic(secret, "kfix_token_7f3e9a\n", 18, 0600), 0);
	snprintf(line, sizeof(line), "#include \"%s\"\nint main(void) { return 0; }\n", secret);
	assert_int_equal(write_file_atomic(bad, line, strlen(line), 0644), 0);
	snprintf(line, sizeof(line), "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n");
	assert_int_equal(write_file_atomic(good, line, strlen(line), 0644), 0);

	/* outside the sandbox the include works: the test can fail */
	assert_int_equal(run_compile_repro(bad, NULL, out, SANDBOX_NONE, &msg), -EINVAL);
	assert_non_null(strstr(msg, "kfix_token_7f3e9a"));
	free(msg);
	msg = NULL;
	assert_int_equal(run_compile_repro(bad, NULL, out, SANDBOX_BWRAP, &msg), -EINVAL);
	assert_null(strstr(msg, "kfix_token_7f3e9a"));
	assert_non_null(strstr(msg, "No such file"));
	free(msg);
	msg = NULL;
	assert_int_equal(run_compile_repro(good, NULL, out, SANDBOX_BWRAP, &msg), 0);
	assert_int_equal(access(out, X_OK), 0);

	/* what a Makefile's $(shell ...) would try */
	{
		_cleanup_strv_ char **argv = NULL;
		struct sandbox sb = { .kind = SANDBOX_BWRAP, .ro = { src }, .n_ro = 1 };
		char cmd[8192];
		FILE *p;

		snprintf(cmd, sizeof(cmd), "cat %s 2>&1; ls /run/credentials 2>&1; "
			 "awk -F: 'NR > 2 && $1 !~ /^ *lo$/ { print \"iface=\" $1 }' /proc/net/dev; "
			 "touch %s/x 2>&1 || echo read-only; echo env=${KFIX_TEST_SECRET:-unset}",
			 secret, src);
		assert_int_equal(sandbox_argv(&sb, (char *const[]){ "bash", "-c", cmd, NULL }, false,
					      &argv), 0);
		setenv("KFIX_TEST_SECRET", "leaked", 1);
		{
			_cleanup_free_ char *joined = NULL;
			size_t n = 0;

			for (size_t i = 0; argv[i]; i++)
				n += strlen(argv[i]) * 4 + 3;
			joined = calloc(1, n + 1);
			assert_non_null(joined);
			for (size_t i = 0; argv[i]; i++) {
				_cleanup_free_ char *q = ssh_quote(argv[i]);

				strcat(joined, q);
				strcat(joined, " ");
			}
			p = popen(joined, "r");
			assert_non_null(p);
			text = calloc(1, 65536);
			assert_non_null(text);
			(void)!fread(text, 1, 65535, p);
			pclose(p);
		}
		unsetenv("KFIX_TEST_SECRET");
		assert_null(strstr(text, "kfix_token_7f3e9a"));
		/* a network namespace of its own: no interface but lo */
		assert_null(strstr(text, "iface="));
		assert_null(strstr(text, "awk:"));
		assert_non_null(strstr(text, "read-only"));
		assert_non_null(strstr(text, "env=unset"));
	}
	assert_int_equal(rm_rf(dir), 0);
}

/* A guest that answers commands from a script: the trace buffer's reads
 * and the reproducer; what it was asked is kept in order. */
struct vm {
	int unused;
};
static struct vm guest_vm;
static struct {
	const char *trace;	/* the buffer's lines; NULL: no trace buffer */
	char cmdline[256];
	char asked[4096];
	const char *kmemleak; /* what cat kmemleak prints; NULL: no kmemleak */
} guest;

static int guest_start(const struct vm_opts *o, const char *kernel, struct vm **ret,
		       enum vm_failure *ret_failure, char **ret_error)
{
	(void)kernel, (void)ret_failure, (void)ret_error;
	snprintf(guest.cmdline, sizeof(guest.cmdline), "%s", o->cmdline ? o->cmdline : "");
	*ret = &guest_vm;
	return 0;
}

static int guest_exec(struct vm *vm, const char *cmd, const void *in, size_t in_len,
		      uint64_t timeout_usec, struct vm_exec_result *ret)
{
	const char *out = "";
	char *o;

	(void)vm, (void)in, (void)in_len, (void)timeout_usec;
	/* every command is one the guest's shell can parse */
	{
		pid_t pid;
		int st;
		char *argv[] = { (char *)"sh", (char *)"-n", (char *)"-c", (char *)cmd, NULL };

		assert_int_equal(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("the guest cannot parse: %s", cmd);
	}
	if (strstr(cmd, "kmemleak") && strstr(cmd, "cat $d/kmemleak")) {
		strcat(guest.asked, "leaks;");
		if (!guest.kmemleak)
			out = "kfix-no-kmemleak\n";
		else if (!*guest.kmemleak) {
			/* nothing printed: no output at all, as over SSH */
			*ret = (struct vm_exec_result){ 0 };
			return 0;
		} else
			out = guest.kmemleak;
	} else if (strstr(cmd, "tracefs") && strstr(cmd, "echo > $t/trace")) {
		strcat(guest.asked, "clear;");
		out = guest.trace ? "" : "kfix-no-trace\n";
	} else if (strstr(cmd, "tracefs") && strstr(cmd, "$t/trace")) {
		strcat(guest.asked, "read;");
		out = guest.trace ?: "kfix-no-trace\n";
	} else if (strstr(cmd, "./kfix-repro")) {
		strcat(guest.asked, "repro;");
		out = "hello\n" RUN_STATUS_MARK "0\n";
	} else
		strcat(guest.asked, "other;");
	o = strdup(out);
	assert_non_null(o);
	*ret = (struct vm_exec_result){ .output = o, .output_len = strlen(o) };
	return 0;
}

static bool guest_exited(struct vm *vm)
{
	(void)vm;
	return false;
}

static int guest_console(struct vm *vm, size_t max, char **ret, size_t *ret_len)
{
	(void)vm, (void)max;
	*ret = strdup("[    1.0] booted\n");
	*ret_len = strlen(*ret);
	return 0;
}

static void guest_stop(struct vm *vm)
{
	(void)vm;
}

static const struct vm_backend guest_backend = {
	.name = "script", .start = guest_start, .exec = guest_exec, .exited = guest_exited,
	.console = guest_console, .stop = guest_stop,
};

/* A reproducer binary the scripted guest runs (it only looks at the name). */
static void fake_repro(char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x7f" "ELF", 4), 4);
	close(fd);
}

/* trace_printk probes: the trace buffer is emptied before the
 * reproducer and read after it, the guest boots with
 * ftrace_dump_on_oops; a run that does not ask touches neither. */
static void test_trace_read(void **state)
{
	char repro[] = "/tmp/kfix-test-repro-XXXXXX";
	struct vm_opts vmo = { .cmdline = (char *)"quiet", .count = 1,
			       .run_timeout_usec = 10 * 1000000ULL };
	struct run_opts o = { .vm = &vmo, .backend = &guest_backend, .kernel = "bzImage",
			      .repro = repro, .runs = 1, .max_attempts = 1, .trace_read = true };
	struct run_result res = {};

	(void)state;
	fake_repro(repro);

	memset(&guest, 0, sizeof(guest));
	guest.trace = "  kfix-repro-95  [000] .....  1.5: do_msgrcv: kfix-probe 0: q=1\n";
	assert_int_equal(run_once(&o, &res), 0);
	assert_int_equal(res.outcome, RUN_NO_CRASH);
	assert_string_equal(guest.cmdline, "quiet ftrace_dump_on_oops");
	assert_string_equal(guest.asked, "other;clear;repro;read;");
	assert_non_null(res.trace);
	assert_non_null(strstr(res.trace, "do_msgrcv: kfix-probe 0: q=1"));
	run_result_free(&res);

	/* a kernel without a trace buffer: nothing read, the run as usual */
	memset(&guest, 0, sizeof(guest));
	vmo.cmdline = NULL;
	assert_int_equal(run_once(&o, &res), 0);
	assert_int_equal(res.outcome, RUN_NO_CRASH);
	assert_string_equal(guest.cmdline, "ftrace_dump_on_oops");
	assert_null(res.trace);
	run_result_free(&res);

	memset(&guest, 0, sizeof(guest));
	guest.trace = "x\n";
	o.trace_read = false;
	assert_int_equal(run_once(&o, &res), 0);
	assert_string_equal(guest.cmdline, "");
	assert_string_equal(guest.asked, "other;repro;");
	assert_null(res.trace);
	run_result_free(&res);
	unlink(repro);
}

/* kmemleak after the reproducer: a scan that prints nothing looked and
 * found no leak, one that prints objects found a leak, a kernel without
 * kmemleak was not looked at. */
static void test_leak_scan(void **state)
{
	char repro[] = "/tmp/kfix-test-repro-XXXXXX";
	struct vm_opts vmo = { .count = 1, .run_timeout_usec = 10 * 1000000ULL };
	struct run_opts o = { .vm = &vmo, .backend = &guest_backend, .kernel = "bzImage",
			      .repro = repro, .runs = 1, .max_attempts = 1, .leak_check = true };
	struct run_result res = {};

	(void)state;
	fake_repro(repro);

	memset(&guest, 0, sizeof(guest));
	guest.kmemleak = "";
	assert_int_equal(run_once(&o, &res), 0);
	assert_non_null(strstr(guest.asked, "leaks;"));
	assert_true(res.leak_checked);
	assert_null(res.leaks);
	run_result_free(&res);

	memset(&guest, 0, sizeof(guest));
	guest.kmemleak = "unreferenced object 0xffff888004a3c000 (size 64):\n  comm \"r\"\n";
	assert_int_equal(run_once(&o, &res), 0);
	assert_true(res.leak_checked);
	assert_non_null(res.leaks);
	assert_non_null(strstr(res.leaks, "unreferenced object 0xffff888004a3c000"));
	run_result_free(&res);

	memset(&guest, 0, sizeof(guest));
	assert_int_equal(run_once(&o, &res), 0);
	assert_false(res.leak_checked);
	assert_null(res.leaks);
	run_result_free(&res);
	unlink(repro);
}

/* A leak bug: kmemleak's first object is the run's crash, named as
 * syzkaller names it (the first frame that is not an allocator's); its
 * report holds that object only, and the run is scanned without
 * leak_check.  Without leak_is_crash a leak stays a leak. */
static void test_leak_as_crash(void **state)
{
	static const char two[] =
		"unreferenced object 0xffff888106a1c9c0 (size 8):\n"
		"  comm \"kfix-repro\", pid 97, jiffies 4294672180 (age 7.810s)\n"
		"  hex dump (first 8 bytes):\n"
		"    00 a0 1a 06 81 88 ff ff                          ........\n"
		"  backtrace:\n"
		"    [<ffffffff814b2a7d>] __kmalloc+0x4d/0x150\n"
		"    [<ffffffff81295e3c>] watch_queue_set_size+0x1ac/0x560\n"
		"    [<ffffffff8158c0a5>] pipe_ioctl+0x85/0x130\n"
		"    [<ffffffff815a3d1e>] __x64_sys_ioctl+0xfe/0x150\n"
		"    [<ffffffff8237b3c6>] do_syscall_64+0x36/0x80\n"
		"    [<ffffffff82400087>] entry_SYSCALL_64_after_hwframe+0x63/0xcd\n"
		"unreferenced object 0xffff888106b00000 (size 64):\n"
		"  comm \"kfix-repro\", pid 97, jiffies 4294672180 (age 7.810s)\n"
		"  backtrace:\n"
		"    [<ffffffff814b2a7d>] kmalloc_trace+0x26/0x60\n"
		"    [<ffffffff81295f00>] alloc_other_thing+0x10/0x60\n";
	char repro[] = "/tmp/kfix-test-repro-XXXXXX";
	struct vm_opts vmo = { .count = 1, .run_timeout_usec = 10 * 1000000ULL };
	struct run_opts o = { .vm = &vmo, .backend = &guest_backend, .kernel = "bzImage",
			      .repro = repro, .runs = 1, .max_attempts = 1, .leak_is_crash = true };
	struct run_result res = {};

	(void)state;
	fake_repro(repro);
	assert_true(run_title_is_leak("memory leak in watch_queue_set_size"));
	assert_false(run_title_is_leak("KASAN: use-after-free Read in memory_leak_in"));
	assert_false(run_title_is_leak(NULL));

	memset(&guest, 0, sizeof(guest));
	guest.kmemleak = two;
	assert_int_equal(run_once(&o, &res), 0);
	assert_int_equal(res.outcome, RUN_CRASHED);
	assert_string_equal(res.title, "memory leak in watch_queue_set_size");
	assert_non_null(strstr(res.report, "unreferenced object 0xffff888106a1c9c0"));
	assert_null(strstr(res.report, "alloc_other_thing"));
	assert_non_null(res.leaks);
	/* and the console has it after what the guest printed */
	assert_true(startswith(res.console, "[    1.0] booted\nBUG: memory leak\nunreferenced object"));
	run_result_free(&res);

	/* no leak: no crash */
	memset(&guest, 0, sizeof(guest));
	guest.kmemleak = "";
	assert_int_equal(run_once(&o, &res), 0);
	assert_int_equal(res.outcome, RUN_NO_CRASH);
	assert_null(res.title);
	run_result_free(&res);

	/* another bug's run: the leak is only a leak */
	memset(&guest, 0, sizeof(guest));
	guest.kmemleak = two;
	o.leak_is_crash = false;
	o.leak_check = true;
	assert_int_equal(run_once(&o, &res), 0);
	assert_int_equal(res.outcome, RUN_NO_CRASH);
	assert_null(res.title);
	assert_non_null(res.leaks);
	run_result_free(&res);
	unlink(repro);
}

/* An unset key reads as the schema's default; a set one as written. */
static void test_opts_from_config(void **state)
{
	struct config *c = NULL;
	struct build_opts bo = { 0 };
	_cleanup_free_ char *dir = NULL;
	_cleanup_(vm_opts_free) struct vm_opts vo = { 0 };

	(void)state;
	assert_int_equal(config_new_empty(&c), 0);
	assert_int_equal(config_set(c, "build", "remote", "host", "builder.example.org"), 0);
	assert_int_equal(config_set(c, "vm", "big", "runs", "7"), 0);
	assert_int_equal(build_opts_from_config(c, "remote", &bo, &dir), 0);
	assert_int_equal(bo.jobs, 0);
	assert_false(bo.ccache);
	assert_int_equal(bo.sandbox, SANDBOX_BWRAP);
	assert_int_equal(bo.remote.port, 22);
	assert_string_equal(bo.remote.user, "kfix");
	assert_string_equal(bo.remote.dir, "kfix-build");
	assert_string_equal(dir, "/var/cache/kfix/builds");
	assert_int_equal(vm_opts_from_config(c, "big", &vo), 0);
	assert_int_equal(vo.runs, 7);
	assert_int_equal(vo.max_attempts, 6);
	vm_opts_free(&vo);
	assert_int_equal(vm_opts_from_config(c, "small", &vo), 0);
	assert_int_equal(vo.runs, 3);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_patch_files),
		cmocka_unit_test(test_trailer),
		cmocka_unit_test(test_verdicts),     cmocka_unit_test(test_classify),
		cmocka_unit_test(test_quote),	     cmocka_unit_test(test_apply_revert),
		cmocka_unit_test(test_probe_patch),  cmocka_unit_test(test_build_progress),
		cmocka_unit_test(test_base_cache),
		cmocka_unit_test(test_syz_argv),     cmocka_unit_test(test_sync_plan),
		cmocka_unit_test(test_sandbox),      cmocka_unit_test(test_trace_read),
		cmocka_unit_test(test_leak_scan),    cmocka_unit_test(test_leak_as_crash),
		cmocka_unit_test(test_opts_from_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
