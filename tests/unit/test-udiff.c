/* The patch reader and applier on each class of input it accepts or
 * refuses, and against libgit2 as a reference on the git-style diffs
 * libgit2 itself writes.  The reader is more lenient than libgit2 (plain
 * "diff -u", timestamps after paths, paths without a/ and b/): those
 * decisions are pinned here so that a change to them is deliberate. */
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
#include <git2.h>

#include "agent/udiff-internal.h"
#include "common/buf.h"
#include "common/strutil.h"

static int parse(const char *text, struct udiff **ret, char **ret_error)
{
	return udiff_parse(text, strlen(text), ret, ret_error);
}

static void expect_refused(const char *text, int error, const char *message)
{
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;

	assert_int_equal(parse(text, &d, &err), error);
	assert_null(d);
	assert_non_null(err);
	assert_non_null(strstr(err, message));
}

static void test_git_header_flags(void **state)
{
	static const char text[] =
		"diff --git a/x.bin b/x.bin\nindex 1234567..89abcde 100644\n"
		"Binary files a/x.bin and b/x.bin differ\n"
		"diff --git a/y.bin b/y.bin\nGIT binary patch\nliteral 1\nIcmZpc000310RR91\n\n"
		"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
		"diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n"
		"@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n"
		"diff --git a/old.c b/new.c\nsimilarity index 100%\nrename from old.c\nrename to new.c\n";
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, &d, &err), 0);
	assert_int_equal(d->n_files, 5);
	assert_true(d->files[0].binary);
	assert_int_equal(d->files[0].n_hunks, 0);
	assert_string_equal(udiff_file_path(&d->files[0]), "x.bin");
	assert_true(d->files[1].binary);
	assert_true(d->files[2].mode_change);
	assert_false(d->files[2].binary);
	assert_true(d->files[3].symlink);
	assert_null(d->files[3].old_path);
	/* the marker line is not a line of the file */
	assert_int_equal(d->files[3].hunks[0].n_lines, 1);
	assert_string_equal(d->files[3].hunks[0].lines[0].text, "target");
	assert_string_equal(d->files[4].old_path, "old.c");
	assert_string_equal(d->files[4].new_path, "new.c");
	assert_int_equal(d->n_hunks, 1);
}

static void test_creation_deletion(void **state)
{
	static const char text[] =
		"diff --git a/n.c b/n.c\nnew file mode 100644\n--- /dev/null\n+++ b/n.c\n"
		"@@ -0,0 +1,2 @@\n+a\n+b\n"
		"diff --git a/g.c b/g.c\ndeleted file mode 100644\n--- a/g.c\n+++ /dev/null\n"
		"@@ -1 +0,0 @@\n-a\n"
		/* /dev/null without a mode line, as diff -u writes it */
		"--- /dev/null\t2026-01-01\n+++ b/m.c\t2026-01-01\n@@ -0,0 +1 @@\n+m\n";
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, &d, &err), 0);
	assert_int_equal(d->n_files, 3);
	assert_null(d->files[0].old_path);
	assert_string_equal(d->files[0].new_path, "n.c");
	assert_string_equal(d->files[1].old_path, "g.c");
	assert_null(d->files[1].new_path);
	assert_string_equal(udiff_file_path(&d->files[1]), "g.c");
	assert_null(d->files[2].old_path);
	assert_string_equal(d->files[2].new_path, "m.c");
}

/* Leniencies libgit2 does not have: the gates judge such paths
 * themselves, so they are read, not refused. */
static void test_lenient_paths(void **state)
{
	static const char text[] =
		"--- x.c\n+++ x.c\n@@ -1 +1 @@\n-a\n+b\n"
		"diff --git a/h.c b/h.c\n--- a/y.c\n+++ b/y.c\n@@ -1 +1 @@\n-a\n+b\n"
		"diff --git a/../etc/passwd b/../etc/passwd\n--- a/../etc/passwd\n+++ b/../etc/passwd\n"
		"@@ -1 +1 @@\n-root\n+toor\n";
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, &d, &err), 0);
	assert_int_equal(d->n_files, 3);
	assert_string_equal(udiff_file_path(&d->files[0]), "x.c");
	/* the ---/+++ lines win over the "diff --git" line */
	assert_string_equal(udiff_file_path(&d->files[1]), "y.c");
	assert_string_equal(udiff_file_path(&d->files[2]), "../etc/passwd");
}

static void test_hunk_body(void **state)
{
	static const char text[] =
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n"
		"@@ -1,3 +1,3 @@ int f(void)\n c\n\n-a\n\\ No newline at end of file\n+b\n"
		/* a line past the stated counts ends the hunk; it is not read */
		"+extra\n";
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;
	const struct udiff_hunk *h;

	(void)state;
	assert_int_equal(parse(text, &d, &err), 0);
	h = &d->files[0].hunks[0];
	assert_string_equal(h->section, "int f(void)");
	assert_int_equal(h->n_lines, 4);
	/* an empty line is context whose trailing space was stripped */
	assert_int_equal(h->lines[1].kind, ' ');
	assert_string_equal(h->lines[1].text, "");
	assert_int_equal(h->lines[2].kind, '-');
	assert_int_equal(h->lines[3].kind, '+');
}

static void test_refused(void **state)
{
	static const char hdr[] = "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n";
	const struct { const char *body; const char *message; } cases[] = {
		{ "@@ -1,2 +1,2 @@\n-a\n+b\n", "patch ends inside a hunk" },
		{ "@@ -1 +1 @@\n-a\n-b\n", "patch line 6: malformed" },
		{ "@@ -1 +1 @@\n-a\n*b\n", "patch line 6: malformed" },
		{ "@@ -1,2 +1,2 @@\n-a\n@@ -5 +5 @@\n", "patch line 6: malformed" },
		{ "@@ -1 +1\n-a\n+b\n", "patch line 4: malformed" },
		{ "@@ -x +1 @@\n-a\n+b\n", "patch line 4: malformed" },
		{ "@@ -1,100000001 +1 @@\n-a\n+b\n", "patch line 4: malformed" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *text = NULL;

		assert_true(asprintf(&text, "%s%s", hdr, cases[i].body) > 0);
		expect_refused(text, -EBADMSG, cases[i].message);
	}
	expect_refused("a hunk before any file\n@@ -1 +1 @@\n-a\n+b\n", -EBADMSG,
		       "patch line 2: malformed");
	expect_refused("just a mail\n", -EBADMSG, "no \"diff --git\" section");
	expect_refused("", -EBADMSG, "no \"diff --git\" section");
}

static char *repeat(const char *unit, size_t n)
{
	struct buf b = BUF_INIT(2 * UDIFF_MAX);

	for (size_t i = 0; i < n; i++)
		assert_true(buf_puts(&b, unit) >= 0);
	return buf_steal(&b, NULL);
}

static void test_limits(void **state)
{
	_cleanup_free_ char *files = repeat("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
					    UDIFF_MAX_FILES + 1);
	_cleanup_free_ char *hunks = repeat("@@ -1 +1 @@\n-a\n+b\n", UDIFF_MAX_HUNKS + 1);
	_cleanup_free_ char *hunks_text = NULL, *big = NULL;
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL;

	(void)state;
	expect_refused(files, -E2BIG, "too many files or hunks");
	assert_true(asprintf(&hunks_text, "diff --git a/x b/x\n--- a/x\n+++ b/x\n%s", hunks) > 0);
	expect_refused(hunks_text, -E2BIG, "too many files or hunks");
	/* exactly at the limits: read */
	files[strlen(files) - strlen("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n")] = '\0';
	assert_int_equal(parse(files, &d, &err), 0);
	assert_int_equal(d->n_files, UDIFF_MAX_FILES);

	big = malloc(UDIFF_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', UDIFF_MAX + 1);
	big[UDIFF_MAX + 1] = '\0';
	expect_refused(big, -E2BIG, "patch larger than");
}

static void test_apply_window(void **state)
{
	static const char old[] = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";
	_cleanup_(udiff_freep) struct udiff *early = NULL, *late = NULL, *wrong = NULL;
	_cleanup_free_ char *err = NULL, *out1 = NULL, *out2 = NULL, *out3 = NULL;

	(void)state;
	/* stated two lines too early and four too late: found nearby */
	assert_int_equal(parse("--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n l6\n-l7\n+L7\n", &early, &err), 0);
	assert_int_equal(udiff_apply_file(&early->files[0], old, &out1), 0);
	assert_string_equal(out1, "l1\nl2\nl3\nl4\nl5\nl6\nL7\nl8\n");
	assert_int_equal(parse("--- a/f\n+++ b/f\n@@ -5,1 +5,1 @@\n-l1\n+L1\n", &late, &err), 0);
	assert_int_equal(udiff_apply_file(&late->files[0], old, &out2), 0);
	assert_string_equal(out2, "L1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n");
	/* context that is nowhere in the file */
	assert_int_equal(parse("--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-l9\n+L9\n", &wrong, &err), 0);
	assert_int_equal(udiff_apply_file(&wrong->files[0], old, &out3), -ESRCH);
	assert_null(out3);
}

/* libgit2 writes the patch from two versions of a file; the reader must
 * see the same hunks and lines, and the applier must turn the old
 * version into the new one. */
static void check_against_libgit2(const char *old, const char *new)
{
	git_patch *gp = NULL;
	git_buf text = { 0 };
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL, *applied = NULL;
	const struct udiff_file *f;

	assert_int_equal(git_patch_from_buffers(&gp, old, strlen(old), "a.c", new, strlen(new), "a.c",
						NULL), 0);
	assert_int_equal(git_patch_to_buf(&text, gp), 0);
	assert_int_equal(udiff_parse(text.ptr, text.size, &d, &err), 0);
	assert_int_equal(d->n_files, 1);
	f = &d->files[0];
	assert_string_equal(udiff_file_path(f), "a.c");
	assert_int_equal(f->n_hunks, git_patch_num_hunks(gp));
	for (size_t j = 0; j < f->n_hunks; j++) {
		const git_diff_hunk *gh;
		size_t n;

		assert_int_equal(git_patch_get_hunk(&gh, &n, gp, j), 0);
		assert_int_equal(f->hunks[j].old_start, gh->old_start);
		assert_int_equal(f->hunks[j].old_len, gh->old_lines);
		assert_int_equal(f->hunks[j].new_start, gh->new_start);
		assert_int_equal(f->hunks[j].new_len, gh->new_lines);
		assert_int_equal(f->hunks[j].n_lines, n);
		for (size_t k = 0; k < n; k++) {
			const git_diff_line *gl;

			assert_int_equal(git_patch_get_line_in_hunk(&gl, gp, j, k), 0);
			assert_int_equal(f->hunks[j].lines[k].kind, gl->origin);
			assert_int_equal(strlen(f->hunks[j].lines[k].text), gl->content_len - 1);
			assert_memory_equal(f->hunks[j].lines[k].text, gl->content, gl->content_len - 1);
		}
	}
	assert_int_equal(udiff_apply_file(f, old, &applied), 0);
	assert_string_equal(applied, new);
	git_buf_dispose(&text);
	git_patch_free(gp);
}

static void test_libgit2_reference(void **state)
{
	struct buf old = BUF_INIT(1 << 20), new = BUF_INIT(1 << 20);

	(void)state;
	check_against_libgit2("a\nb\nc\n", "a\nB\nc\n");
	check_against_libgit2("", "x\ny\n");
	check_against_libgit2("x\ny\n", "y\n");
	check_against_libgit2("x\n\n\ny\n", "x\n\ny\n\n");
	/* hunks far apart, with function context */
	for (int i = 0; i < 200; i++) {
		buf_printf(&old, i % 50 == 0 ? "int f%d(void)\n" : "\tline %d;\n", i);
		buf_printf(&new, i % 50 == 0 ? "int f%d(void)\n" : i % 37 == 5 ? "\tline %d; /* changed */\n" :
			   "\tline %d;\n", i);
		if (i == 120)
			buf_puts(&new, "\tinserted;\n");
	}
	check_against_libgit2(old.data, new.data);
	buf_free(&old);
	buf_free(&new);
}

static void test_format(void **state)
{
	static const char text[] =
		"diff --git a/x.c b/x.c\nindex 1234567..89abcde 100644\n--- a/x.c\n+++ b/x.c\n"
		"@@ -1,2 +1,3 @@ first\n a\n+A\n b\n"
		"@@ -10,2 +11,2 @@ second\n c\n-d\n+D\n"
		"diff --git a/y.c b/y.c\n--- a/y.c\n+++ b/y.c\n@@ -1,1 +1,1 @@\n-y\n+Y\n";
	static const char only2[] =
		"diff --git a/x.c b/x.c\nindex 1234567..89abcde 100644\n--- a/x.c\n+++ b/x.c\n"
		"@@ -10,2 +10,2 @@ second\n c\n-d\n+D\n";
	const bool all[] = { true, true, true }, second[] = { false, true, false };
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_free_ char *err = NULL, *out_all = NULL, *out2 = NULL;

	(void)state;
	assert_int_equal(parse(text, &d, &err), 0);
	assert_int_equal(udiff_format(d, all, &out_all), 0);
	assert_string_equal(out_all, text);
	assert_int_equal(udiff_format(d, second, &out2), 0);
	assert_string_equal(out2, only2);
}

static int setup(void **state)
{
	(void)state;
	return git_libgit2_init() < 0;
}

static int teardown(void **state)
{
	(void)state;
	git_libgit2_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_header_flags),
		cmocka_unit_test(test_creation_deletion),
		cmocka_unit_test(test_lenient_paths),
		cmocka_unit_test(test_hunk_body),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_apply_window),
		cmocka_unit_test(test_libgit2_reference),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
