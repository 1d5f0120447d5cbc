/* Unit tests of repro/tree: real repositories built with libgit2 in a
 * temporary folder, a bare mirror fetched over file://, worktrees, edits,
 * diffs checked with the git program, commits and pushes. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "common/fileio.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "repro/tree.h"

/* libgit2 1.5 leaks a PCRE2 match block per remote created (its config
 * regex path; fixed upstream by libgit2 PR 6382) and small blocks in its
 * ssh transport (libgit2 issue 6598): not ours to fix, so LeakSanitizer is
 * told about those stacks only. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n"
	       "leak:libssh2.so\n"
	       "leak:git_remote_connect_ext\n";
}

/* Full stacks, so that the suppressions above match libgit2 frames. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

/* the two versions of slab.c differ in kmem_cache_free() only */
#define SLAB_HEAD \
	"// SPDX-License-Identifier: GPL-2.0\n" \
	"#include <linux/slab.h>\n" \
	"\n" \
	"static int helper(int x);\n" \
	"\n" \
	"/* helper() is called from kmem_cache_free() { not a body } */\n" \
	"static int\n" \
	"helper(int x)\n" \
	"{\n" \
	"\tconst char *s = \"}\";\n" \
	"\tif (x) {\n" \
	"\t\treturn 1;\n" \
	"\t}\n" \
	"\treturn 0;\n" \
	"}\n" \
	"\n"

static const char SLAB_C1[] =
	SLAB_HEAD
	"void kmem_cache_free(struct kmem_cache *s, void *x)\n"
	"{\n"
	"\tfree(x);\n"
	"}\n";

static const char SLAB_C2[] =
	SLAB_HEAD
	"void kmem_cache_free(struct kmem_cache *s, void *x)\n"
	"{\n"
	"\tif (!x)\n"
	"\t\treturn;\n"
	"\tfree(x);\n"
	"}\n";

struct fixture {
	char dir[256];
	char up[300], cache[300], url[320];
	char c1[TREE_OID_HEX], c2[TREE_OID_HEX], c3[TREE_OID_HEX];
	struct tree *mirror;
	bool have_git;
	pid_t sshd; /* killed in teardown even when a check fails */
};
static struct fixture F;

static void write_text(const char *dir, const char *path, const char *text)
{
	_cleanup_free_ char *full = NULL, *parent = NULL;

	assert_true(asprintf(&full, "%s/%s", dir, path) > 0);
	parent = strdup(full);
	*strrchr(parent, '/') = 0;
	assert_int_equal(mkdir_p(parent, 0755), 0);
	assert_int_equal(write_file_atomic(full, text, strlen(text), 0644), 0);
}

static char *read_text(const char *dir, const char *path)
{
	_cleanup_free_ char *full = NULL;
	char *data = NULL;

	assert_true(asprintf(&full, "%s/%s", dir, path) > 0);
	if (read_file_bounded(full, 1 << 20, &data, NULL) < 0)
		return NULL;
	return data;
}

/* Commits the given files (path, text pairs; text NULL deletes) on
 * refs/heads/master of the upstream repository. */
static void up_commit(const char *msg, int64_t when, char ret[TREE_OID_HEX],
		      ...)
{
	git_repository *repo;
	git_index *index;
	git_signature *sig;
	git_oid tree_oid, oid, parent_oid;
	git_tree *tr;
	git_commit *parent = NULL;
	const char *path;
	va_list ap;

	assert_int_equal(git_repository_open(&repo, F.up), 0);
	assert_int_equal(git_repository_index(&index, repo), 0);
	va_start(ap, ret);
	while ((path = va_arg(ap, const char *))) {
		const char *text = va_arg(ap, const char *);
		write_text(F.up, path, text);
		assert_int_equal(git_index_add_bypath(index, path), 0);
	}
	va_end(ap);
	assert_int_equal(git_index_write(index), 0);
	assert_int_equal(git_index_write_tree(&tree_oid, index), 0);
	assert_int_equal(git_tree_lookup(&tr, repo, &tree_oid), 0);
	assert_int_equal(git_signature_new(&sig, "Dev", "dev@example.org", when, 0), 0);
	if (git_reference_name_to_id(&parent_oid, repo, "refs/heads/master") == 0)
		assert_int_equal(git_commit_lookup(&parent, repo, &parent_oid), 0);
	assert_int_equal(git_commit_create(&oid, repo, "refs/heads/master", sig, sig,
					   NULL, msg, tr, parent ? 1 : 0,
					   (const git_commit **)&parent),
			 0);
	git_oid_tostr(ret, TREE_OID_HEX, &oid);
	git_commit_free(parent);
	git_signature_free(sig);
	git_tree_free(tr);
	git_index_free(index);
	git_repository_free(repo);
}

static bool git_installed(void)
{
	char *argv[] = { "git", "--version", NULL };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct proc_result r = { 0 };
	bool ok;

	o.timeout_usec = 10 * 1000000ull;
	ok = proc_run(argv, &o, &r) == 0 && r.exit_code == 0;
	proc_result_free(&r);
	return ok;
}

static int setup(void **state)
{
	git_repository *repo;
	const char *tmp = getenv("TMPDIR");

	(void)state;
	git_libgit2_init();
	snprintf(F.dir, sizeof(F.dir), "%s/kfix-tree-XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(F.dir));
	snprintf(F.up, sizeof(F.up), "%s/up", F.dir);
	snprintf(F.cache, sizeof(F.cache), "%s/cache", F.dir);
	snprintf(F.url, sizeof(F.url), "file://%s", F.up);
	assert_int_equal(git_repository_init(&repo, F.up, 0), 0);
	assert_int_equal(git_repository_set_head(repo, "refs/heads/master"), 0);
	git_repository_free(repo);
	up_commit("Initial import\n", 1700000000, F.c1, "mm/slab.c", SLAB_C1,
		  "README", "Linux\n", "fs/a.c", "int a;\nint b;\n", ".gitignore",
		  "*.o\n", NULL);
	up_commit("mm: slab: tolerate NULL in kmem_cache_free\n\n"
		  "Reported-by: syzbot+0123abcd@syzkaller.appspotmail.com\n",
		  1700000100, F.c2, "mm/slab.c", SLAB_C2, NULL);
	up_commit("fs: add c\n", 1700000200, F.c3, "fs/a.c",
		  "int a;\nint b;\nint c;\n", NULL);
	F.have_git = git_installed();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (F.sshd > 0) {
		kill(F.sshd, SIGTERM);
		waitpid(F.sshd, NULL, 0);
	}
	tree_free(F.mirror);
	if (!getenv("KFIX_TEST_KEEP"))
		rm_rf(F.dir);
	git_libgit2_shutdown();
	return 0;
}

static int run_git(const char *dir, const char *a1, const char *a2,
		   const char *a3)
{
	char *argv[] = { "git", "-C", (char *)dir, (char *)a1, (char *)a2,
			 (char *)a3, NULL };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct proc_result r = { 0 };
	int code;

	o.timeout_usec = 30 * 1000000ull;
	assert_int_equal(proc_run(argv, &o, &r), 0);
	code = r.exit_code;
	if (code != 0)
		fprintf(stderr, "git %s: %s\n", a1, r.output ? r.output : "");
	proc_result_free(&r);
	return code;
}

static void test_mirror_fetch(void **state)
{
	char oid[TREE_OID_HEX];

	(void)state;
	assert_int_equal(tree_open_mirror(F.cache, "../x", F.url, &F.mirror), -EINVAL);
	assert_int_equal(tree_open_mirror(F.cache, "up", F.url, &F.mirror), 0);
	assert_false(tree_is_snapshot(F.mirror));
	assert_int_equal(tree_fetch(F.mirror, NULL, 60 * 1000000ull, NULL, NULL), 0);
	assert_int_equal(tree_resolve(F.mirror, "master", oid), 0);
	assert_string_equal(oid, F.c3);
	assert_int_equal(tree_resolve(F.mirror, "HEAD", oid), 0);
	assert_string_equal(oid, F.c3);
	assert_int_equal(tree_resolve(F.mirror, "master~2", oid), 0);
	assert_string_equal(oid, F.c1);
	assert_int_equal(tree_resolve(F.mirror, "deadbeefdeadbeef", oid), -ENOENT);
	assert_non_null(strstr(tree_error(F.mirror), "unknown commit 'deadbeefdeadbeef'"));
	assert_int_equal(tree_resolve(F.mirror, "no-such-branch", oid), -ENOENT);

	/* Reopening keeps the repository; a second fetch is a no-op. */
	tree_free(F.mirror);
	F.mirror = NULL;
	assert_int_equal(tree_open_mirror(F.cache, "up", F.url, &F.mirror), 0);
	assert_int_equal(tree_fetch(F.mirror, NULL, 0, NULL, NULL), 0);
	assert_int_equal(tree_resolve(F.mirror, F.c2, oid), 0);
	assert_string_equal(oid, F.c2);
}

static bool exists(const char *dir, const char *path);

/* A remote whose default branch is "main": the mirror's HEAD follows. */
static void test_fetch_main(void **state)
{
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_free_ char *up = NULL, *url = NULL;
	git_repository *repo;
	git_treebuilder *tb;
	git_signature *sig;
	git_oid tree_oid, oid;
	git_tree *tr;
	char head[TREE_OID_HEX], want[TREE_OID_HEX];

	(void)state;
	assert_true(asprintf(&up, "%s/up-main", F.dir) > 0);
	assert_true(asprintf(&url, "file://%s", up) > 0);
	assert_int_equal(git_repository_init(&repo, up, 1), 0);
	assert_int_equal(git_repository_set_head(repo, "refs/heads/main"), 0);
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	assert_int_equal(git_treebuilder_write(&tree_oid, tb), 0);
	assert_int_equal(git_tree_lookup(&tr, repo, &tree_oid), 0);
	assert_int_equal(git_signature_new(&sig, "Dev", "dev@example.org", 1700000000, 0), 0);
	assert_int_equal(git_commit_create(&oid, repo, "HEAD", sig, sig, NULL, "empty\n",
					   tr, 0, NULL), 0);
	git_oid_tostr(want, sizeof(want), &oid);
	git_signature_free(sig);
	git_tree_free(tr);
	git_treebuilder_free(tb);
	git_repository_free(repo);
	assert_int_equal(tree_open_mirror(F.cache, "up-main", url, &t), 0);
	assert_int_equal(tree_fetch(t, NULL, 0, NULL, NULL), 0);
	assert_int_equal(tree_resolve(t, "HEAD", head), 0);
	assert_string_equal(head, want);

	/* A slot can move from one tree to another and back. */
	{
		_cleanup_free_ char *slot = NULL, *text = NULL;
		char got[TREE_OID_HEX];

		assert_true(asprintf(&slot, "%s/slot-switch", F.dir) > 0);
		assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, got), 0);
		assert_true(exists(slot, "fs/a.c"));
		assert_int_equal(tree_worktree_checkout(t, slot, "HEAD", got), 0);
		assert_string_equal(got, want);
		assert_false(exists(slot, "fs/a.c"));
		assert_false(exists(slot, "mm"));
		assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c1, got), 0);
		text = read_text(slot, "fs/a.c");
		assert_string_equal(text, "int a;\nint b;\n");
	}
}

static int cancel_progress(const struct tree_progress *p, void *userdata)
{
	(void)p;
	(*(unsigned *)userdata)++;
	return 1;
}

static int count_progress(const struct tree_progress *p, void *userdata)
{
	struct tree_progress *last = userdata;

	*last = *p;
	return 0;
}

static void test_fetch_errors(void **state)
{
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_free_ char *cache = NULL;

	(void)state;
	assert_true(asprintf(&cache, "%s/cache2", F.dir) > 0);
	assert_int_equal(tree_open_mirror(cache, "gone", "file:///nonexistent/repo", &t), 0);
	assert_true(tree_fetch(t, NULL, 0, NULL, NULL) < 0);
	assert_non_null(strstr(tree_error(t), "fetch from file:///nonexistent/repo failed"));
	tree_free(TAKE_PTR(t));

	/* Progress is reported, and returning non-zero cancels. */
	{
		struct tree_progress last = { 0 };
		unsigned calls = 0;
		char oid[TREE_OID_HEX];

		assert_int_equal(tree_open_mirror(cache, "cancel", F.url, &t), 0);
		assert_int_equal(tree_fetch(t, NULL, 0, cancel_progress, &calls), -ECANCELED);
		assert_true(calls >= 1);
		assert_int_equal(tree_resolve(t, F.c3, oid), -ENOENT);
		assert_int_equal(tree_fetch(t, NULL, 0, count_progress, &last), 0);
		assert_int_equal(last.received_objects, last.total_objects);
		assert_true(last.total_objects >= 9);
		assert_int_equal(tree_resolve(t, F.c3, oid), 0);
	}
}

static void test_read(void **state)
{
	_cleanup_free_ char *data = NULL, *fn = NULL;
	char *d2 = NULL;
	size_t len;
	unsigned line;

	(void)state;
	assert_int_equal(tree_read_file(F.mirror, F.c1, "fs/a.c", 0, &data, &len), 0);
	assert_string_equal(data, "int a;\nint b;\n");
	assert_int_equal(len, 14);
	assert_int_equal(tree_read_file(F.mirror, F.c3, "fs/a.c", 0, &d2, &len), 0);
	assert_string_equal(d2, "int a;\nint b;\nint c;\n");
	free(d2);
	assert_int_equal(tree_read_file(F.mirror, F.c3, "fs/none.c", 0, &d2, &len), -ENOENT);
	assert_int_equal(tree_read_file(F.mirror, F.c3, "fs", 0, &d2, &len), -EISDIR);
	assert_int_equal(tree_read_file(F.mirror, F.c3, "mm/slab.c", 10, &d2, &len), -EFBIG);
	assert_int_equal(tree_read_file(F.mirror, "nope", "mm/slab.c", 0, &d2, &len), -ENOENT);

	assert_int_equal(tree_read_function(F.mirror, F.c2, "mm/slab.c",
					    "kmem_cache_free", &fn, &line), 0);
	assert_string_equal(fn, "void kmem_cache_free(struct kmem_cache *s, void *x)\n"
				"{\n\tif (!x)\n\t\treturn;\n\tfree(x);\n}\n");
	assert_int_equal(line, 17);
	free(fn);
	assert_int_equal(tree_read_function(F.mirror, F.c2, "mm/slab.c", "helper",
					    &fn, &line), 0);
	assert_int_equal(line, 7);
	assert_true(startswith(fn, "static int\nhelper(int x)\n{\n"));
	assert_true(endswith(fn, "\treturn 0;\n}\n"));
	free(fn);
	fn = NULL;
	assert_int_equal(tree_read_function(F.mirror, F.c2, "mm/slab.c", "free",
					    &fn, &line), -ENOENT);
}

static void test_cfunc(void **state)
{
	static const char src[] =
		"#define foo(x) { x }\n"
		"int foo(int);\n"
		"static struct ops o = { .f = foo(1), };\n"
		"char *s = \"foo(1) {\";\n"
		"SYSCALL_DEFINE3(read, unsigned int, fd, char __user *, buf, size_t, count)\n"
		"{\n"
		"\treturn ksys_read(fd, buf, count);\n"
		"}\n"
		"int foo(int a) __must_hold(&l)\n"
		"{\n"
		"\t// }\n"
		"\treturn '}';\n"
		"}\n";
	size_t s, e;
	unsigned line;

	(void)state;
	assert_int_equal(c_find_function(src, strlen(src), "foo", &s, &e, &line), 0);
	assert_int_equal(line, 9);
	assert_true(startswith(src + s, "int foo(int a)"));
	assert_int_equal(e, strlen(src));
	assert_int_equal(c_find_function(src, strlen(src), "__x64_sys_read", &s, &e,
					 &line), 0);
	assert_int_equal(line, 5);
	assert_true(startswith(src + e, "int foo"));
	assert_int_equal(c_find_function(src, strlen(src), "bar", &s, &e, &line), -ENOENT);
	assert_int_equal(c_find_function("int f(void) {", 13, "f", &s, &e, &line), -ENOENT);
	/* every wrapper the syscall macros generate names the same body */
	{
		static const char *const wrappers[] = {
			"__x64_sys_read", "__ia32_sys_read", "__se_sys_read", "__do_sys_read",
			"sys_read", "__arm64_sys_read", "__x64_compat_sys_read",
		};

		for (size_t i = 0; i < sizeof(wrappers) / sizeof(*wrappers); i++) {
			bool compat = false;

			assert_string_equal(c_syscall_name(wrappers[i], &compat), "read");
			assert_int_equal(compat, strstr(wrappers[i], "compat") != NULL);
			assert_int_equal(c_find_function(src, strlen(src), wrappers[i], &s, &e,
							 &line), 0);
			assert_int_equal(line, 5);
		}
		assert_null(c_syscall_name("ksys_read", NULL));
		assert_null(c_syscall_name("__x64_sys_", NULL));
	}
}

/* By position: the definition holding a line, macro-defined ones too. */
static void test_cfunc_at_line(void **state)
{
	static const char src[] =
		"#define X 1\n"				/* 1 */
		"static int helper(int a)\n"
		"{\n"
		"\treturn a;\n"
		"}\n"					/* 5 */
		"\n"
		"BPF_CALL_2(bpf_foo, void *, ctx, u64, flags)\n"
		"{\n"
		"\treturn helper(flags);\n"
		"}\n"					/* 10 */
		"\n"
		"SYSCALL_DEFINE1(foo, int, fd)\n"
		"{\n"
		"\tif (fd < 0)\n"
		"\t\treturn -EBADF;\n"		/* 15 */
		"\treturn 0;\n"
		"}\n";
	size_t name, s, e;
	unsigned first;

	(void)state;
	assert_int_equal(c_function_at_line(src, strlen(src), 4, &name, &s, &e, &first), 0);
	assert_true(startswith(src + name, "helper("));
	assert_int_equal(first, 2);
	assert_int_equal(c_function_at_line(src, strlen(src), 9, &name, &s, &e, &first), 0);
	assert_true(startswith(src + name, "BPF_CALL_2("));
	assert_int_equal(first, 7);
	assert_int_equal(c_function_at_line(src, strlen(src), 15, &name, &s, &e, &first), 0);
	assert_true(startswith(src + name, "SYSCALL_DEFINE1("));
	assert_int_equal(first, 12);
	assert_int_equal(e, strlen(src));
	assert_int_equal(c_function_at_line(src, strlen(src), 1, &name, &s, &e, &first), -ENOENT);
	assert_int_equal(c_function_at_line(src, strlen(src), 6, &name, &s, &e, &first), -ENOENT);
	assert_int_equal(c_function_at_line(src, strlen(src), 99, &name, &s, &e, &first), -ENOENT);
	assert_int_equal(c_function_at_line(src, strlen(src), 0, &name, &s, &e, &first), -EINVAL);
}

struct hits {
	char lines[8][128];
	size_t n;
};

static int collect(const char *path, unsigned line_no, const char *line,
		   size_t len, void *userdata)
{
	struct hits *h = userdata;

	if (h->n < 8)
		snprintf(h->lines[h->n++], 128, "%s:%u:%.*s", path, line_no, (int)len, line);
	return 0;
}

static void test_grep(void **state)
{
	struct hits h = { 0 };

	(void)state;
	assert_int_equal(tree_grep(F.mirror, F.c3, NULL, "int c", 0, 0, collect, &h), 1);
	assert_string_equal(h.lines[0], "fs/a.c:3:int c;");
	memset(&h, 0, sizeof(h));
	assert_int_equal(tree_grep(F.mirror, F.c3, "mm/", "^\\s*free\\(", TREE_GREP_REGEX,
				   0, collect, &h), 1);
	assert_string_equal(h.lines[0], "mm/slab.c:21:\tfree(x);");
	memset(&h, 0, sizeof(h));
	assert_int_equal(tree_grep(F.mirror, F.c3, NULL, "INT", TREE_GREP_ICASE, 0,
				   collect, &h), 6);
	memset(&h, 0, sizeof(h));
	assert_int_equal(tree_grep(F.mirror, F.c3, NULL, "int", 0, 2, collect, &h), 2);
	memset(&h, 0, sizeof(h));
	assert_int_equal(tree_grep(F.mirror, F.c3, "fs/", "kmem", 0, 0, collect, &h), 0);
	assert_int_equal(tree_grep(F.mirror, F.c3, NULL, "a(", TREE_GREP_REGEX, 0,
				   collect, &h), -EINVAL);
	assert_non_null(strstr(tree_error(F.mirror), "bad regular expression"));
}

struct logs {
	char subjects[8][128];
	size_t n;
};

static int collect_log(const struct tree_commit_info *c, void *userdata)
{
	struct logs *l = userdata;

	if (l->n < 8)
		snprintf(l->subjects[l->n++], 128, "%.12s %s", c->oid, c->subject);
	return 0;
}

static void test_log(void **state)
{
	const char *paths[] = { "fs/a.c", NULL };
	struct tree_log_opts o = { .from = F.c3, .paths = paths };
	char oid[TREE_OID_HEX];
	struct logs l = { 0 };
	char want[160];

	(void)state;
	assert_int_equal(tree_log_grep(F.mirror, "master",
				       "Reported-by: syzbot+0123abcd", 0, oid), 1);
	assert_string_equal(oid, F.c2);
	assert_int_equal(tree_log_grep(F.mirror, "master", "syzbot+ffff", 0, oid), 0);
	assert_int_equal(tree_log_grep(F.mirror, F.c1, "syzbot+0123abcd", 0, oid), 0);
	assert_int_equal(tree_log_grep(F.mirror, "master", "Reported-by", 1, oid), 0);

	assert_int_equal(tree_log(F.mirror, &o, collect_log, &l), 2);
	snprintf(want, sizeof(want), "%.12s fs: add c", F.c3);
	assert_string_equal(l.subjects[0], want);
	snprintf(want, sizeof(want), "%.12s Initial import", F.c1);
	assert_string_equal(l.subjects[1], want);
	o.paths = NULL;
	o.max_results = 2;
	memset(&l, 0, sizeof(l));
	assert_int_equal(tree_log(F.mirror, &o, collect_log, &l), 2);
}

struct blames {
	char commit[4][TREE_OID_HEX];
	unsigned orig[4];
	size_t n;
};

static int collect_blame(unsigned final_line, const char *commit,
			 const char *orig_path, unsigned orig_line, void *userdata)
{
	struct blames *b = userdata;

	(void)final_line;
	assert_string_equal(orig_path, "mm/slab.c");
	if (b->n < 4) {
		memcpy(b->commit[b->n], commit, TREE_OID_HEX);
		b->orig[b->n++] = orig_line;
	}
	return 0;
}

static void test_blame_ancestry(void **state)
{
	struct blames b = { 0 };

	(void)state;
	assert_int_equal(tree_blame_lines(F.mirror, F.c3, "mm/slab.c", 18, 21,
					  collect_blame, &b), 0);
	assert_int_equal(b.n, 4);
	assert_string_equal(b.commit[0], F.c1); /* "{" */
	assert_string_equal(b.commit[1], F.c2); /* "if (!x)" */
	assert_string_equal(b.commit[2], F.c2);
	assert_string_equal(b.commit[3], F.c1); /* "free(x);" */
	assert_int_equal(b.orig[3], 19);
	assert_int_equal(tree_blame_lines(F.mirror, F.c3, "mm/slab.c", 500, 501,
					  collect_blame, &b), -ERANGE);

	assert_int_equal(tree_is_ancestor(F.mirror, F.c1, F.c3), 1);
	assert_int_equal(tree_is_ancestor(F.mirror, F.c3, F.c3), 1);
	assert_int_equal(tree_is_ancestor(F.mirror, F.c3, F.c1), 0);
	assert_int_equal(tree_is_ancestor(F.mirror, "nope", F.c1), -ENOENT);
}

static void stat_file(const char *dir, const char *path, struct stat *st)
{
	_cleanup_free_ char *full = NULL;

	assert_true(asprintf(&full, "%s/%s", dir, path) > 0);
	assert_int_equal(stat(full, st), 0);
}

static bool exists(const char *dir, const char *path)
{
	_cleanup_free_ char *full = NULL;

	assert_true(asprintf(&full, "%s/%s", dir, path) > 0);
	return access(full, F_OK) == 0;
}

static void test_worktree(void **state)
{
	_cleanup_free_ char *slot = NULL, *readme = NULL, *a = NULL, *junk = NULL;
	struct stat s1, s2, a1, a2, sl1, sl2;
	char oid[TREE_OID_HEX];

	(void)state;
	assert_true(asprintf(&slot, "%s/slot0", F.dir) > 0);
	/* what a kill in the middle of making the worktree left (half a
	 * repository beside it) neither blocks nor survives the next one */
	{
		_cleanup_free_ char *half = NULL;

		assert_true(asprintf(&half, "%s.new/.git/objects/pack", slot) > 0);
		assert_int_equal(mkdir_p(half, 0755), 0);
	}
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c1, oid), 0);
	assert_string_equal(oid, F.c1);
	{
		_cleanup_free_ char *tmp = NULL;
		struct stat st;

		assert_true(asprintf(&tmp, "%s.new", slot) > 0);
		assert_int_equal(stat(tmp, &st), -1);
	}
	stat_file(slot, "README", &s1);
	stat_file(slot, "fs/a.c", &a1);
	stat_file(slot, "mm/slab.c", &sl1);
	usleep(20000);
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, "master", oid), 0);
	assert_string_equal(oid, F.c3);
	stat_file(slot, "README", &s2);
	stat_file(slot, "fs/a.c", &a2);
	stat_file(slot, "mm/slab.c", &sl2);
	/* Unchanged files keep their inode and mtime: builds stay incremental. */
	assert_int_equal(s1.st_ino, s2.st_ino);
	assert_int_equal(s1.st_mtim.tv_sec, s2.st_mtim.tv_sec);
	assert_int_equal(s1.st_mtim.tv_nsec, s2.st_mtim.tv_nsec);
	assert_true(a1.st_mtim.tv_sec != a2.st_mtim.tv_sec ||
		    a1.st_mtim.tv_nsec != a2.st_mtim.tv_nsec);
	assert_true(sl1.st_mtim.tv_nsec != sl2.st_mtim.tv_nsec ||
		    sl1.st_mtim.tv_sec != sl2.st_mtim.tv_sec);
	a = read_text(slot, "fs/a.c");
	assert_string_equal(a, "int a;\nint b;\nint c;\n");

	/* Local edits are reverted, untracked files removed, ignored kept. */
	write_text(slot, "README", "changed\n");
	write_text(slot, "fs/new.c", "x\n");
	write_text(slot, "fs/a.o", "object\n");
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
	readme = read_text(slot, "README");
	assert_string_equal(readme, "Linux\n");
	assert_false(exists(slot, "fs/new.c"));
	assert_true(exists(slot, "fs/a.o"));

	/* A non-empty folder that is not a kfix worktree is refused. */
	junk = strdup(F.up);
	assert_int_equal(tree_worktree_checkout(F.mirror, junk, F.c3, oid), -EEXIST);
	free(junk);
	assert_true(asprintf(&junk, "%s/mm", slot) > 0);
	assert_int_equal(tree_worktree_checkout(F.mirror, junk, F.c3, oid), -ENOTEMPTY);
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, "nope", oid), -ENOENT);
}

static void test_edits(void **state)
{
	_cleanup_free_ char *slot = NULL, *err = NULL, *diff = NULL, *text = NULL,
			    *outside = NULL, *link = NULL, *stat = NULL, *big = NULL;
	_cleanup_strv_ char **paths = NULL;
	struct edit ok[] = {
		{ .file = "fs/a.c", .before = "int b;\n", .after = "int b2;\n" },
		{ .file = "fs/a.c", .before = "int b2;\nint c;", .after = "int c;" },
		{ .file = "mm/new.c", .before = "", .after = "// new\n" },
	};
	char oid[TREE_OID_HEX];

	(void)state;
	assert_true(asprintf(&slot, "%s/slot1", F.dir) > 0);
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
	assert_int_equal(tree_diff(slot, F.c3, &diff), 0);
	assert_string_equal(diff, "");
	free(diff);
	diff = NULL;

	assert_int_equal(tree_apply_edits(slot, ok, ARRAY_SIZE(ok), &err), 0);
	assert_null(err);
	text = read_text(slot, "fs/a.c");
	assert_string_equal(text, "int a;\nint c;\n");
	assert_int_equal(tree_diff(slot, F.c3, &diff), 0);
	assert_non_null(strstr(diff, "diff --git a/fs/a.c b/fs/a.c\n"));
	assert_non_null(strstr(diff, "--- a/fs/a.c\n+++ b/fs/a.c\n"));
	assert_non_null(strstr(diff, "-int b;\n"));
	assert_non_null(strstr(diff, "diff --git a/mm/new.c b/mm/new.c\nnew file mode 100644\n"));
	assert_int_equal(tree_diffstat(slot, F.c3, &stat, &paths), 0);
	assert_non_null(strstr(stat, "2 files changed, 1 insertion(+), 1 deletion(-)"));
	assert_int_equal(strv_len(paths), 2);
	assert_string_equal(paths[0], "fs/a.c");
	assert_string_equal(paths[1], "mm/new.c");

	if (F.have_git) {
		_cleanup_free_ char *slot2 = NULL, *pf = NULL;

		assert_true(asprintf(&slot2, "%s/slot2", F.dir) > 0);
		assert_true(asprintf(&pf, "%s/p.diff", F.dir) > 0);
		assert_int_equal(tree_worktree_checkout(F.mirror, slot2, F.c3, oid), 0);
		assert_int_equal(write_file_atomic(pf, diff, strlen(diff), 0644), 0);
		assert_int_equal(run_git(slot2, "apply", "--check", pf), 0);
	} else {
		fprintf(stderr, "git not installed: skipping git apply --check\n");
	}

	/* Failures name the edit and change nothing. */
	struct edit missing[] = {
		{ .file = "fs/a.c", .before = "int a;", .after = "int A;" },
		{ .file = "fs/a.c", .before = "int zz;", .after = "" },
	};
	assert_int_equal(tree_apply_edits(slot, missing, 2, &err), -ENOENT);
	assert_string_equal(err, "edit 2 (fs/a.c): 'before' not found");
	free(text);
	text = read_text(slot, "fs/a.c");
	assert_string_equal(text, "int a;\nint c;\n");
	free(err);

	struct edit fuzzy[] = { { .file = "mm/slab.c", .before = "if  (!x)\n    return;",
				  .after = "" } };
	assert_int_equal(tree_apply_edits(slot, fuzzy, 1, &err), -ENOENT);
	assert_non_null(strstr(err, "matches near line 19 when spaces and tabs are ignored"));
	free(err);

	struct edit amb[] = { { .file = "mm/slab.c", .before = "return", .after = "" } };
	assert_int_equal(tree_apply_edits(slot, amb, 1, &err), -EEXIST);
	assert_string_equal(err, "edit 1 (mm/slab.c): 'before' occurs 3 times "
				 "(lines 12, 14, 20); add context to make it unique");
	free(err);

	struct edit bad[] = {
		{ .file = "../up/README", .before = "Linux", .after = "x" },
		{ .file = "/etc/passwd", .before = "root", .after = "x" },
		{ .file = ".git/config", .before = "[core]", .after = "x" },
		{ .file = "fs/.GIT/x", .before = "a", .after = "x" },
		{ .file = "fs//a.c", .before = "a", .after = "x" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(tree_apply_edits(slot, &bad[i], 1, &err), -EPERM);
		assert_non_null(err);
		free(err);
	}

	/* Symlinks, to a folder or a file outside, are not followed. */
	assert_true(asprintf(&outside, "%s/outside", F.dir) > 0);
	write_text(outside, "secret", "top secret\n");
	assert_true(asprintf(&link, "%s/evil", slot) > 0);
	assert_int_equal(symlink(outside, link), 0);
	free(link);
	assert_true(asprintf(&link, "%s/fs/leak.c", slot) > 0);
	assert_true(asprintf(&big, "%s/secret", outside) > 0);
	assert_int_equal(symlink(big, link), 0);
	struct edit esc[] = {
		{ .file = "evil/secret", .before = "top", .after = "x" },
		{ .file = "fs/leak.c", .before = "top", .after = "x" },
		{ .file = "evil/new", .before = "", .after = "x" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(esc); i++) {
		assert_int_equal(tree_apply_edits(slot, &esc[i], 1, &err), -ELOOP);
		assert_non_null(strstr(err, "symlink"));
		free(err);
	}
	free(text);
	text = read_text(outside, "secret");
	assert_string_equal(text, "top secret\n");

	/* Size limits. */
	free(big);
	big = malloc(EDIT_TEXT_MAX + 2);
	memset(big, 'a', EDIT_TEXT_MAX + 1);
	big[EDIT_TEXT_MAX + 1] = 0;
	struct edit huge[] = { { .file = "fs/a.c", .before = "int a;", .after = big } };
	assert_int_equal(tree_apply_edits(slot, huge, 1, &err), -E2BIG);
	free(err);
	assert_int_equal(tree_apply_edits(slot, ok, EDIT_COUNT_MAX + 1, &err), -E2BIG);
	free(err);
	err = NULL;
	struct edit exists_already[] = { { .file = "fs/a.c", .before = "", .after = "x" } };
	assert_int_equal(tree_apply_edits(slot, exists_already, 1, &err), -EEXIST);
	free(err);
	err = NULL;
	/* Checkout cleans up everything the edits did. */
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
	assert_false(exists(slot, "mm/new.c"));
	assert_false(exists(slot, "evil"));
}

static void test_patch_commit_push(void **state)
{
	_cleanup_free_ char *slot = NULL, *err = NULL, *diff = NULL, *text = NULL,
			    *bare = NULL, *bare_url = NULL;
	struct edit ed[] = { { .file = "fs/a.c", .before = "int c;\n", .after = "int d;\n" } };
	struct tree_signature who = { .name = "kfix", .email = "kfix@example.org",
				      .time = 1700001000 };
	char oid[TREE_OID_HEX], commit[TREE_OID_HEX], commit2[TREE_OID_HEX];
	static const char bad_patch[] =
		"diff --git a/fs/a.c b/fs/a.c\n"
		"--- a/fs/a.c\n+++ b/fs/a.c\n"
		"@@ -1,2 +1,2 @@\n int x;\n-int y;\n+int z;\n";
	static const char evil_patch[] =
		"diff --git a/../x b/../x\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n";

	(void)state;
	assert_true(asprintf(&slot, "%s/slot3", F.dir) > 0);
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
	assert_int_equal(tree_apply_edits(slot, ed, 1, &err), 0);
	assert_int_equal(tree_diff(slot, F.c3, &diff), 0);

	/* The same diff applies to a clean checkout, as a mail too. */
	assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
	{
		_cleanup_free_ char *mail = NULL;
		assert_true(asprintf(&mail, "From 0000 Mon Sep 17 00:00:00 2001\n"
					    "From: A <a@b>\nSubject: [PATCH] fs: d\n\n"
					    "Body.\n---\n fs/a.c | 2 +-\n\n%s-- \n2.39.2\n",
				     diff) > 0);
		assert_int_equal(tree_apply_patch(slot, mail, strlen(mail), &err), 0);
	}
	text = read_text(slot, "fs/a.c");
	assert_string_equal(text, "int a;\nint b;\nint d;\n");
	assert_int_equal(tree_apply_patch(slot, bad_patch, strlen(bad_patch), &err), -ENOEXEC);
	assert_non_null(strstr(err, "patch does not apply to fs/a.c"));
	free(err);
	assert_int_equal(tree_apply_patch(slot, "hello\n", 6, &err), -EINVAL);
	free(err);
	assert_int_equal(tree_apply_patch(slot, evil_patch, strlen(evil_patch), &err), -EPERM);
	free(err);
	err = NULL;

	/* Commit: the same content and signatures give the same id. */
	assert_int_equal(tree_commit(F.mirror, slot, F.c3, "fs: d\n\nBecause.", &who,
				     NULL, commit), 0);
	assert_int_equal(tree_commit(F.mirror, slot, F.c3, "fs: d\n\nBecause.", &who,
				     NULL, commit2), 0);
	assert_string_equal(commit, commit2);
	free(text);
	assert_int_equal(tree_read_file(F.mirror, commit, "fs/a.c", 0, &text, NULL), 0);
	assert_string_equal(text, "int a;\nint b;\nint d;\n");
	assert_int_equal(tree_is_ancestor(F.mirror, F.c3, commit), 1);
	assert_int_equal(tree_log_grep(F.mirror, commit, "Because.", 1, oid), 1);

	/* What the commit changed, and the same as a mail that applies. */
	{
		_cleanup_free_ char *show = NULL, *range = NULL, *small = NULL, *mail = NULL;
		bool trunc = true;

		assert_int_equal(tree_diff_commits(F.mirror, NULL, commit, 0, &show, &trunc), 0);
		assert_false(trunc);
		assert_non_null(strstr(show, "--- a/fs/a.c\n+++ b/fs/a.c\n"));
		assert_non_null(strstr(show, "-int c;\n+int d;\n"));
		assert_int_equal(tree_diff_commits(F.mirror, F.c1, F.c3, 0, &range, &trunc), 0);
		assert_non_null(strstr(range, "diff --git a/fs/a.c b/fs/a.c"));
		assert_non_null(strstr(range, "diff --git a/mm/slab.c b/mm/slab.c"));
		assert_int_equal(tree_diff_commits(F.mirror, F.c1, F.c3, 200, &small, &trunc), 0);
		assert_true(trunc);
		assert_true(strlen(small) <= 200);
		assert_non_null(strstr(small, "diff --git a/fs/a.c b/fs/a.c"));
		assert_null(strstr(small, "mm/slab.c"));

		assert_int_equal(tree_format_patch(F.mirror, commit, NULL, 2, &mail), 0);
		assert_non_null(strstr(mail, "From: kfix <kfix@example.org>\n"));
		assert_non_null(strstr(mail, "Subject: [PATCH v2] fs: d\n"));
		assert_non_null(strstr(mail, "\nBecause.\n---\n"));
		assert_int_equal(tree_worktree_checkout(F.mirror, slot, F.c3, oid), 0);
		assert_int_equal(tree_apply_patch(slot, mail, strlen(mail), &err), 0);
		assert_int_equal(tree_format_patch(F.mirror, F.c1, NULL, 0, &err), -EINVAL);
		err = NULL;
	}

	assert_int_equal(tree_branch_create(F.mirror, "kfix/1/v1", commit, false), 0);
	assert_int_equal(tree_branch_create(F.mirror, "kfix/1/v1", commit, false), 0);
	assert_int_equal(tree_branch_create(F.mirror, "kfix/1/v1", F.c3, false), -EEXIST);
	assert_int_equal(tree_branch_create(F.mirror, "bad..name", F.c3, false), -EINVAL);
	assert_int_equal(tree_resolve(F.mirror, "kfix/1/v1", oid), 0);
	assert_string_equal(oid, commit);
	/* a fetch by another job before the push keeps kfix's branch, which
	 * upstream does not have */
	assert_int_equal(tree_fetch(F.mirror, NULL, 60 * 1000000ull, NULL, NULL), 0);
	assert_int_equal(tree_resolve(F.mirror, "kfix/1/v1", oid), 0);
	assert_string_equal(oid, commit);
	assert_int_equal(tree_note_add(F.mirror, "refs/notes/kfix", commit, "tested\n", &who), 0);
	assert_int_equal(tree_note_add(F.mirror, "refs/notes/kfix", commit, "tested\n", &who), 0);
	assert_int_equal(tree_note_add(F.mirror, "refs/notes/kfix", commit, "retested\n", &who), 0);

	/* Push to a bare repository, twice. */
	assert_true(asprintf(&bare, "%s/pub.git", F.dir) > 0);
	{
		git_repository *r;
		assert_int_equal(git_repository_init(&r, bare, 1), 0);
		git_repository_free(r);
	}
	assert_true(asprintf(&bare_url, "file://%s", bare) > 0);
	const char *specs[] = { "refs/heads/kfix/1/v1:refs/heads/kfix/1/v1",
				"refs/notes/kfix:refs/notes/kfix", NULL };
	assert_int_equal(tree_push(F.mirror, bare_url, specs, NULL, 60 * 1000000ull), 0);
	assert_int_equal(tree_push(F.mirror, bare_url, specs, NULL, 60 * 1000000ull), 0);
	{
		_cleanup_tree_ struct tree *pub = NULL;
		assert_int_equal(tree_open_path(bare, NULL, &pub), 0);
		assert_int_equal(tree_resolve(pub, "kfix/1/v1", oid), 0);
		assert_string_equal(oid, commit);
	}
	/* Moving the published branch to an unrelated commit needs force. */
	const char *rewind[] = { "refs/heads/master:refs/heads/kfix/1/v1", NULL };
	assert_int_equal(tree_branch_create(F.mirror, "master", F.c1, true), 0);
	assert_int_equal(tree_push(F.mirror, bare_url, rewind, NULL, 0), -EREMOTEIO);
	assert_non_null(strstr(tree_error(F.mirror), "refs/heads/master:refs/heads/kfix/1/v1"));
	assert_non_null(strstr(tree_error(F.mirror), "non-fastforward"));
	assert_int_equal(tree_branch_create(F.mirror, "master", F.c3, true), 0);
}

static const char *find_sshd(void)
{
	static const char *const where[] = { "/usr/sbin/sshd", "/usr/local/sbin/sshd",
					     "/sbin/sshd" };

	for (size_t i = 0; i < ARRAY_SIZE(where); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool port_open(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

static void keygen(const char *path)
{
	char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test",
			 "-f", (char *)path, NULL };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct proc_result r = { 0 };

	o.timeout_usec = 30 * 1000000ull;
	assert_int_equal(proc_run(argv, &o, &r), 0);
	assert_int_equal(r.exit_code, 0);
	proc_result_free(&r);
}

/* known_hosts line "[127.0.0.1]:PORT TYPE KEY" from an OpenSSH .pub file. */
static void write_known_hosts(const char *path, int port, const char *pubfile)
{
	_cleanup_free_ char *pub = NULL, *line = NULL;
	char *sp;

	assert_int_equal(read_file_bounded(pubfile, 4096, &pub, NULL), 0);
	sp = strrchr(pub, ' '); /* drop the comment */
	assert_non_null(sp);
	*sp = 0;
	assert_true(asprintf(&line, "[127.0.0.1]:%d %s\n", port, pub) > 0);
	assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
}

/* Push over ssh:// to a real OpenSSH server on 127.0.0.1, with host key
 * verification against known_hosts. */
static void test_push_ssh(void **state)
{
	_cleanup_free_ char *d = NULL, *cfg = NULL, *conf = NULL, *hk = NULL, *ck = NULL,
			    *auth = NULL, *kh = NULL, *bad_kh = NULL, *bare = NULL,
			    *url = NULL, *pub = NULL, *other = NULL, *empty_kh = NULL;
	const char *sshd = find_sshd();
	const char *specs[] = { "refs/heads/kfix/1/v1:refs/heads/kfix/ssh", NULL };
	struct tree_push_auth a = { 0 };
	struct passwd *pw = getpwuid(getuid());
	char oid[TREE_OID_HEX], want[TREE_OID_HEX];
	pid_t pid;
	int port, status;

	(void)state;
	if (!sshd || !F.have_git || !pw || !(git_libgit2_features() & GIT_FEATURE_SSH)) {
		fprintf(stderr, "sshd, git or libgit2 ssh support missing: skipped\n");
		skip();
	}
	if (getuid() == 0 && access("/run/sshd", F_OK) < 0 && mkdir("/run/sshd", 0755) < 0) {
		fprintf(stderr, "sshd needs /run/sshd when run as root: skipped\n");
		skip();
	}
	assert_true(asprintf(&d, "%s/ssh", F.dir) > 0);
	assert_int_equal(mkdir_p(d, 0700), 0);
	assert_true(asprintf(&hk, "%s/host_key", d) > 0);
	assert_true(asprintf(&ck, "%s/id_ed25519", d) > 0);
	assert_true(asprintf(&other, "%s/other_key", d) > 0);
	keygen(hk);
	keygen(ck);
	keygen(other);
	assert_true(asprintf(&pub, "%s.pub", ck) > 0);
	assert_true(asprintf(&auth, "%s/authorized_keys", d) > 0);
	{
		_cleanup_free_ char *k = NULL;
		size_t len;
		assert_int_equal(read_file_bounded(pub, 4096, &k, &len), 0);
		assert_int_equal(write_file_atomic(auth, k, len, 0600), 0);
	}
	port = free_port();
	assert_true(asprintf(&conf,
			     "Port %d\nListenAddress 127.0.0.1\nHostKey %s\n"
			     "AuthorizedKeysFile %s\nPidFile %s/sshd.pid\nStrictModes no\n"
			     "UsePAM no\nPasswordAuthentication no\n"
			     "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
			     "PermitRootLogin prohibit-password\nLogLevel ERROR\n",
			     port, hk, auth, d) > 0);
	assert_true(asprintf(&cfg, "%s/sshd_config", d) > 0);
	assert_int_equal(write_file_atomic(cfg, conf, strlen(conf), 0600), 0);
	pid = F.sshd = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(sshd, sshd, "-D", "-e", "-f", cfg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && !port_open(port); i++)
		usleep(50000);

	assert_true(asprintf(&bare, "%s/pub-ssh.git", F.dir) > 0);
	{
		git_repository *r;
		assert_int_equal(git_repository_init(&r, bare, 1), 0);
		git_repository_free(r);
	}
	assert_true(asprintf(&url, "ssh://%s@127.0.0.1:%d%s", pw->pw_name, port, bare) > 0);
	assert_true(asprintf(&kh, "%s/known_hosts", d) > 0);
	assert_true(asprintf(&bad_kh, "%s/known_hosts.bad", d) > 0);
	assert_true(asprintf(&empty_kh, "%s/known_hosts.empty", d) > 0);
	{
		_cleanup_free_ char *hpub = NULL, *opub = NULL;
		assert_true(asprintf(&hpub, "%s.pub", hk) > 0);
		assert_true(asprintf(&opub, "%s.pub", other) > 0);
		write_known_hosts(kh, port, hpub);
		write_known_hosts(bad_kh, port, opub);
		assert_int_equal(write_file_atomic(empty_kh, "", 0, 0644), 0);
	}
	a.ssh_key = ck;
	a.known_hosts = kh;
	assert_true(port_open(port));
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), 0);
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), 0);
	{
		_cleanup_tree_ struct tree *p = NULL;
		assert_int_equal(tree_open_path(bare, NULL, &p), 0);
		assert_int_equal(tree_resolve(p, "kfix/ssh", oid), 0);
		assert_int_equal(tree_resolve(F.mirror, "kfix/1/v1", want), 0);
		assert_string_equal(oid, want);
	}
	/* A different host key is refused, and so is an unknown host. */
	a.known_hosts = bad_kh;
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), -EPERM);
	assert_non_null(strstr(tree_error(F.mirror), "MISMATCHING host key for 127.0.0.1"));
	a.known_hosts = empty_kh;
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), -EPERM);
	assert_non_null(strstr(tree_error(F.mirror), "unknown host key"));
	a.known_hosts = NULL;
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), -EPERM);
	/* A key the server does not know. */
	a.known_hosts = kh;
	a.ssh_key = other;
	assert_int_equal(tree_push(F.mirror, url, specs, &a, 60 * 1000000ull), -EACCES);

	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	F.sshd = 0;
}

static void test_snapshot(void **state)
{
	_cleanup_free_ char *src = NULL, *scratch = NULL, *slot = NULL, *data = NULL,
			    *diff = NULL, *err = NULL;
	_cleanup_tree_ struct tree *t = NULL;
	char oid[TREE_OID_HEX], oid2[TREE_OID_HEX];
	struct edit ed[] = { { .file = "kernel/fork.c", .before = "fork", .after = "spoon" } };

	(void)state;
	assert_true(asprintf(&src, "%s/linux-6.1", F.dir) > 0);
	assert_true(asprintf(&scratch, "%s/cache/src/linux-6.1.git", F.dir) > 0);
	assert_true(asprintf(&slot, "%s/slot4", F.dir) > 0);
	write_text(src, "kernel/fork.c", "int fork;\n");
	write_text(src, "Makefile", "all:\n");
	/* As in Debian's linux-source tarball: still imported. */
	write_text(src, ".gitignore", "/*\n!/debian/\n");
	assert_int_equal(tree_open_path(src, NULL, &t), -ENOTSUP);
	assert_non_null(strstr(tree_error(NULL), "no scratch folder"));
	assert_int_equal(tree_open_path(src, scratch, &t), 0);
	assert_true(tree_is_snapshot(t));
	assert_false(exists(src, ".git"));
	assert_int_equal(tree_resolve(t, "HEAD", oid), 0);
	assert_int_equal(tree_read_file(t, oid, "kernel/fork.c", 0, &data, NULL), 0);
	assert_string_equal(data, "int fork;\n");
	assert_int_equal(tree_log_grep(t, "HEAD", "x", 0, oid2), -ENOTSUP);
	assert_int_equal(tree_fetch(t, NULL, 0, NULL, NULL), -ENOTSUP);
	assert_int_equal(tree_worktree_checkout(t, slot, oid, NULL), 0);
	assert_int_equal(tree_apply_edits(slot, ed, 1, &err), 0);
	assert_int_equal(tree_diff(slot, oid, &diff), 0);
	assert_non_null(strstr(diff, "+int spoon;\n"));
	/* New files show although the tarball's .gitignore hides everything,
	 * and the next checkout removes them. */
	{
		struct edit nf[] = { { .file = "kernel/new.c", .before = "", .after = "int n;\n" } };
		static const char add_patch[] =
			"diff --git a/kernel/p.c b/kernel/p.c\nnew file mode 100644\n"
			"--- /dev/null\n+++ b/kernel/p.c\n@@ -0,0 +1 @@\n+int p;\n";

		assert_int_equal(tree_apply_edits(slot, nf, 1, &err), 0);
		assert_int_equal(tree_apply_patch(slot, add_patch, strlen(add_patch), &err), 0);
		free(diff);
		assert_int_equal(tree_diff(slot, oid, &diff), 0);
		assert_non_null(strstr(diff, "diff --git a/kernel/new.c b/kernel/new.c\nnew file"));
		assert_non_null(strstr(diff, "diff --git a/kernel/p.c b/kernel/p.c\nnew file"));
		assert_int_equal(tree_worktree_checkout(t, slot, oid, NULL), 0);
		assert_false(exists(slot, "kernel/new.c"));
		assert_false(exists(slot, "kernel/p.c"));
	}
	tree_free(TAKE_PTR(t));

	/* Same content, same commit; changed content, new commit. */
	assert_int_equal(tree_open_path(src, scratch, &t), 0);
	assert_int_equal(tree_resolve(t, "HEAD", oid2), 0);
	assert_string_equal(oid, oid2);
	tree_free(TAKE_PTR(t));
	write_text(src, "kernel/fork.c", "int fork2;\n");
	{
		_cleanup_free_ char *mk = NULL;
		assert_true(asprintf(&mk, "%s/Makefile", src) > 0);
		assert_int_equal(unlink(mk), 0);
	}
	assert_int_equal(tree_open_path(src, scratch, &t), 0);
	assert_int_equal(tree_resolve(t, "HEAD", oid2), 0);
	assert_string_not_equal(oid, oid2);
	free(data);
	assert_int_equal(tree_read_file(t, oid2, "kernel/fork.c", 0, &data, NULL), 0);
	assert_string_equal(data, "int fork2;\n");
	free(data);
	data = NULL;
	assert_int_equal(tree_read_file(t, oid2, "Makefile", 0, &data, NULL), -ENOENT);
	assert_int_equal(tree_open_path("/nonexistent/src", scratch, &t), -ENOENT);
	assert_non_null(strstr(tree_error(NULL), "/nonexistent/src"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mirror_fetch),
		cmocka_unit_test(test_fetch_main),
		cmocka_unit_test(test_fetch_errors),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_cfunc),
		cmocka_unit_test(test_cfunc_at_line),
		cmocka_unit_test(test_grep),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_blame_ancestry),
		cmocka_unit_test(test_worktree),
		cmocka_unit_test(test_edits),
		cmocka_unit_test(test_patch_commit_push),
		cmocka_unit_test(test_push_ssh),
		cmocka_unit_test(test_snapshot),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
