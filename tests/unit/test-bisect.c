/* Unit tests of repro/tree-bisect.c on real repositories made with
 * libgit2: random histories with branches and merges, a random culprit,
 * an oracle that says "bad" exactly for the culprit's descendants and
 * random untestable commits; the bisection must name the culprit (or a
 * set of skipped commits containing it) in about log2(N) tests.  Also the
 * in-place checkout of a work tree and the release tags below a commit. */
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
#include <git2.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static char dir[256];

/* A commit with the given parents whose tree holds one file. */
static void make_commit(git_repository *repo, const char *ref, git_oid *const *parents,
			size_t n, const char *file, const char *content, int64_t when,
			const char *msg, git_oid *ret)
{
	git_signature *sig;
	git_treebuilder *tb;
	git_tree *tree;
	git_commit *pc[8];
	git_oid blob, toid;

	assert_true(n <= 8);
	assert_int_equal(git_signature_new(&sig, "A U Thor", "author@example.org", when, 0), 0);
	assert_int_equal(git_blob_create_from_buffer(&blob, repo, content, strlen(content)), 0);
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, file, &blob, GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&toid, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&tree, repo, &toid), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(git_commit_lookup(&pc[i], repo, parents[i]), 0);
	assert_int_equal(git_commit_create(ret, repo, ref, sig, sig, NULL, msg, tree, n,
					   (const git_commit **)pc), 0);
	for (size_t i = 0; i < n; i++)
		git_commit_free(pc[i]);
	git_tree_free(tree);
	git_signature_free(sig);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	git_libgit2_init();
	snprintf(dir, sizeof(dir), "%s/kfix-bisect-XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("KFIX_TEST_KEEP"))
		rm_rf(dir);
	git_libgit2_shutdown();
	return 0;
}

struct history {
	git_repository *repo;
	git_oid *c;
	size_t n;
};

/* n commits: mostly linear, with side branches forked from a random
 * earlier commit and merged back, as kernel history is. */
static void make_history(const char *path, size_t n, unsigned seed, struct history *h)
{
	srand(seed);
	assert_int_equal(git_repository_init(&h->repo, path, 1), 0);
	h->c = calloc(n, sizeof(*h->c));
	h->n = n;
	for (size_t i = 0; i < n; i++) {
		git_oid *par[2];
		size_t np = 0;
		char msg[64], content[64];

		if (i > 0)
			par[np++] = &h->c[i - 1];
		/* a merge of a side line that forked a few commits back */
		if (i > 4 && rand() % 5 == 0)
			par[np++] = &h->c[i - 2 - (size_t)rand() % (i - 2 < 6 ? i - 2 : 6)];
		snprintf(msg, sizeof(msg), "commit %zu\n", i);
		snprintf(content, sizeof(content), "%zu\n", i);
		make_commit(h->repo, NULL, par, np, "f", content, 1700000000 + (int64_t)i, msg,
			    &h->c[i]);
	}
	assert_int_equal(git_reference_create(NULL, h->repo, "refs/heads/master", &h->c[n - 1], 1,
					      NULL), 0);
}

static void history_free(struct history *h)
{
	git_repository_free(h->repo);
	free(h->c);
}

static bool is_bad(git_repository *repo, const git_oid *c, const git_oid *culprit)
{
	return git_oid_equal(c, culprit) || git_graph_descendant_of(repo, c, culprit) == 1;
}

static unsigned ceil_log2(size_t n)
{
	unsigned k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

/* One bisection with an oracle; returns the number of tests. */
static unsigned bisect(struct tree *t, git_repository *repo, const char *good0, const char *bad0,
		       const git_oid *culprit, bool (*untestable)(const char *), int *ret_result,
		       char ret_commit[TREE_OID_HEX])
{
	char **good = NULL, **skip = NULL, bad[TREE_OID_HEX];
	unsigned tests = 0;

	snprintf(bad, sizeof(bad), "%s", bad0);
	assert_int_equal(strv_push(&good, good0), 0);
	for (;;) {
		struct tree_bisect_step s;
		git_oid o;

		assert_int_equal(tree_bisect_next(t, bad, good, skip, 0, &s), 0);
		if (s.result != TREE_BISECT_TEST) {
			*ret_result = s.result;
			memcpy(ret_commit, s.commit, TREE_OID_HEX);
			break;
		}
		assert_true(++tests < 200);
		assert_int_equal(git_oid_fromstr(&o, s.commit), 0);
		if (untestable && untestable(s.commit))
			assert_int_equal(strv_push(&skip, s.commit), 0);
		else if (is_bad(repo, &o, culprit))
			snprintf(bad, sizeof(bad), "%s", s.commit);
		else
			assert_int_equal(strv_push(&good, s.commit), 0);
	}
	strv_free(good);
	strv_free(skip);
	return tests;
}

static void hex(const git_oid *o, char out[TREE_OID_HEX])
{
	git_oid_tostr(out, TREE_OID_HEX, o);
}

/* Every culprit of random histories is found, in about log2(N) tests. */
static void test_random_histories(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 12; seed++) {
		struct history h = {};
		struct tree *t = NULL;
		char path[320], g[TREE_OID_HEX], b[TREE_OID_HEX], found[TREE_OID_HEX];
		size_t n = 40 + seed * 37;

		snprintf(path, sizeof(path), "%s/h%u.git", dir, seed);
		make_history(path, n, seed, &h);
		assert_int_equal(tree_open_path(path, NULL, &t), 0);
		hex(&h.c[0], g);
		hex(&h.c[n - 1], b);
		for (size_t k = 1; k < n; k += n / 7) {
			char want[TREE_OID_HEX];
			unsigned tests;
			int result;

			hex(&h.c[k], want);
			tests = bisect(t, h.repo, g, b, &h.c[k], NULL, &result, found);
			assert_int_equal(result, TREE_BISECT_FOUND);
			assert_string_equal(found, want);
			/* merges make halves uneven; git bisect allows the same */
			assert_true(tests <= ceil_log2(n) + 3);
		}
		tree_free(t);
		history_free(&h);
	}
}

/* A long linear history: exactly binary search. */
static void test_linear(void **state)
{
	struct history h = {};
	struct tree *t = NULL;
	char path[320], g[TREE_OID_HEX], b[TREE_OID_HEX], found[TREE_OID_HEX], want[TREE_OID_HEX];
	git_repository *repo;
	int result;

	(void)state;
	snprintf(path, sizeof(path), "%s/linear.git", dir);
	assert_int_equal(git_repository_init(&repo, path, 1), 0);
	h.repo = repo;
	h.n = 1025;
	h.c = calloc(h.n, sizeof(*h.c));
	for (size_t i = 0; i < h.n; i++) {
		git_oid *par[1] = { i ? &h.c[i - 1] : NULL };
		char content[32];

		snprintf(content, sizeof(content), "%zu\n", i);
		make_commit(repo, NULL, par, i ? 1 : 0, "f", content, 1700000000 + (int64_t)i,
			    "linear\n", &h.c[i]);
	}
	assert_int_equal(tree_open_path(path, NULL, &t), 0);
	hex(&h.c[0], g);
	hex(&h.c[h.n - 1], b);
	hex(&h.c[700], want);
	assert_int_equal(bisect(t, repo, g, b, &h.c[700], NULL, &result, found), 10);
	assert_int_equal(result, TREE_BISECT_FOUND);
	assert_string_equal(found, want);
	/* the bad end is the culprit: found without testing it */
	hex(&h.c[h.n - 1], want);
	assert_int_equal(bisect(t, repo, g, b, &h.c[h.n - 1], NULL, &result, found), 10);
	assert_string_equal(found, want);

	/* bad below good, and bad equal to good */
	{
		struct tree_bisect_step s;
		char *good[] = { b, NULL };

		assert_int_equal(tree_bisect_next(t, g, good, NULL, 0, &s), -EINVAL);
		assert_int_equal(tree_bisect_next(t, b, good, NULL, 0, &s), -EINVAL);
		/* a range over the limit */
		good[0] = g;
		assert_int_equal(tree_bisect_next(t, b, good, NULL, 100, &s), -E2BIG);
		assert_non_null(strstr(tree_error(t), "more than 100 commits"));
		assert_int_equal(tree_bisect_next(t, "no-such-rev", good, NULL, 0, &s), -ENOENT);
	}
	tree_free(t);
	history_free(&h);
}

static char untestable_set[64][TREE_OID_HEX];
static size_t n_untestable;

static bool untestable(const char *c)
{
	for (size_t i = 0; i < n_untestable; i++)
		if (streq(untestable_set[i], c))
			return true;
	return false;
}

/* Unbuildable commits are skipped: the culprit is still found when it
 * can be tested, and is among the candidates named when it cannot. */
static void test_skips(void **state)
{
	(void)state;
	for (unsigned seed = 20; seed < 28; seed++) {
		struct history h = {};
		struct tree *t = NULL;
		char path[320], g[TREE_OID_HEX], b[TREE_OID_HEX], found[TREE_OID_HEX];
		size_t n = 150, culprit = 30 + (seed * 13) % 100;
		int result;

		snprintf(path, sizeof(path), "%s/s%u.git", dir, seed);
		make_history(path, n, seed, &h);
		assert_int_equal(tree_open_path(path, NULL, &t), 0);
		hex(&h.c[0], g);
		hex(&h.c[n - 1], b);
		/* a run of unbuildable commits around the culprit's parent */
		n_untestable = 0;
		for (size_t k = culprit - 3; k < culprit; k++)
			hex(&h.c[k], untestable_set[n_untestable++]);
		for (size_t k = 5; k < n - 1; k += 11)
			hex(&h.c[k], untestable_set[n_untestable++]);
		(void)bisect(t, h.repo, g, b, &h.c[culprit], untestable, &result, found);
		{
			char want[TREE_OID_HEX];

			hex(&h.c[culprit], want);
			if (result == TREE_BISECT_FOUND) {
				assert_string_equal(found, want);
			} else {
				assert_int_equal(result, TREE_BISECT_ONLY_SKIPPED);
				/* found is the last bad commit tested, which
				 * descends from the culprit */
				git_oid o;

				assert_int_equal(git_oid_fromstr(&o, found), 0);
				assert_true(is_bad(h.repo, &o, &h.c[culprit]));
			}
		}
		/* the culprit itself unbuildable: never FOUND as another */
		hex(&h.c[culprit], untestable_set[n_untestable++]);
		(void)bisect(t, h.repo, g, b, &h.c[culprit], untestable, &result, found);
		assert_int_equal(result, TREE_BISECT_ONLY_SKIPPED);
		{
			char **cand = NULL, *good[] = { g, NULL };
			char want[TREE_OID_HEX];

			hex(&h.c[culprit], want);
			assert_int_equal(tree_bisect_candidates(t, found, good, 1000, &cand), 0);
			assert_true(strv_contains(cand, want));
			strv_free(cand);
		}
		tree_free(t);
		history_free(&h);
	}
}

/* In-place checkouts keep local changes and put HEAD back on its branch;
 * the release below a commit skips -rc tags. */
static void test_checkout_and_tags(void **state)
{
	git_repository *repo;
	struct tree *t = NULL;
	git_oid c[5];
	char path[320], file[400], h[TREE_OID_HEX], tag[TREE_REF_MAX], oid[TREE_OID_HEX];
	char *ref = NULL, *text = NULL;
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%s/work", dir);
	assert_int_equal(git_repository_init(&repo, path, 0), 0);
	for (size_t i = 0; i < 5; i++) {
		git_oid *par[1] = { i ? &c[i - 1] : NULL };
		char content[32];

		snprintf(content, sizeof(content), "version %zu\n", i);
		make_commit(repo, "HEAD", par, i ? 1 : 0, "f.c", content, 1700000000 + (int64_t)i,
			    i < 4 ? "c\n" : "ipc: c\n\nSigned-off-by: is not a trailer here\n\n"
			    "Signed-off-by: A Uthor <author@example.org>\n"
			    "Acked-by: Rev Iewer <rev@example.org>\n"
			    "signed-off-by: Main Tainer <maint@example.org>\n"
			    "Signed-off-by: A Uthor <author@example.org>\n", &c[i]);
	}
	{
		git_object *o;
		git_oid tid;

		assert_int_equal(git_object_lookup(&o, repo, &c[1], GIT_OBJECT_COMMIT), 0);
		assert_int_equal(git_tag_create_lightweight(&tid, repo, "v6.0", o, 0), 0);
		git_object_free(o);
		assert_int_equal(git_object_lookup(&o, repo, &c[3], GIT_OBJECT_COMMIT), 0);
		assert_int_equal(git_tag_create_lightweight(&tid, repo, "v6.1-rc1", o, 0), 0);
		git_object_free(o);
	}
	{
		git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;

		co.checkout_strategy = GIT_CHECKOUT_FORCE;
		assert_int_equal(git_checkout_head(repo, &co), 0);
	}
	assert_int_equal(tree_open_path(path, NULL, &t), 0);
	assert_int_equal(tree_head(t, &ref, h), 0);
	assert_string_equal(ref, "refs/heads/master");

	{
		char **sob = NULL;

		assert_int_equal(tree_commit_trailers(t, "HEAD", "Signed-off-by", &sob), 0);
		assert_int_equal(strv_len(sob), 2);
		assert_string_equal(sob[0], "A Uthor <author@example.org>");
		assert_string_equal(sob[1], "Main Tainer <maint@example.org>");
		strv_free(sob);
		assert_int_equal(tree_commit_trailers(t, "HEAD~1", "Signed-off-by", &sob), 0);
		assert_int_equal(strv_len(sob), 0);
		strv_free(sob);
	}
	/* v6.1-rc1 at c3 is no release: below HEAD (c4) the release is v6.0 */
	assert_int_equal(tree_release_below(t, "HEAD", tag, oid), 0);
	assert_string_equal(tag, "v6.0");
	assert_int_equal(tree_release_below(t, "v6.0", tag, oid), -ENOENT);

	assert_int_equal(tree_checkout_here(t, "HEAD~3", NULL), 0);
	snprintf(file, sizeof(file), "%s/f.c", path);
	assert_int_equal(read_file_bounded(file, 1024, &text, &len), 0);
	assert_string_equal(text, "version 1\n");
	free(text);
	{
		char *r2 = NULL, h2[TREE_OID_HEX];

		assert_int_equal(tree_head(t, &r2, h2), 0);
		assert_null(r2);
		assert_string_not_equal(h2, h);
	}
	/* a hand edit stops the next checkout */
	assert_int_equal(write_file_atomic(file, "edited\n", 7, 0644), 0);
	assert_true(tree_checkout_here(t, h, ref) < 0);
	assert_non_null(strstr(tree_error(t), "local changes"));
	assert_int_equal(read_file_bounded(file, 1024, &text, &len), 0);
	assert_string_equal(text, "edited\n");
	free(text);
	assert_int_equal(write_file_atomic(file, "version 1\n", 10, 0644), 0);
	assert_int_equal(tree_checkout_here(t, h, ref), 0);
	assert_int_equal(read_file_bounded(file, 1024, &text, &len), 0);
	assert_string_equal(text, "version 4\n");
	free(text);
	free(ref);
	ref = NULL;
	assert_int_equal(tree_head(t, &ref, h), 0);
	assert_string_equal(ref, "refs/heads/master");
	free(ref);
	tree_free(t);
	git_repository_free(repo);
}

static int on_info(const struct tree_commit_info *ci, void *userdata)
{
	snprintf(userdata, 64, "%s|%s", ci->subject, ci->author_email);
	return 1;
}

/* A child dated before its parent (clock skew, rebases) is still the
 * commit shown for its own id. */
static void test_commit_show(void **state)
{
	git_repository *repo;
	struct tree *t = NULL;
	git_oid c[2];
	git_oid *par[1] = { &c[0] };
	char path[320], hexc[TREE_OID_HEX], got[64] = "";

	(void)state;
	snprintf(path, sizeof(path), "%s/skew.git", dir);
	assert_int_equal(git_repository_init(&repo, path, 1), 0);
	make_commit(repo, NULL, NULL, 0, "f", "a\n", 2000000000, "parent, dated later\n", &c[0]);
	make_commit(repo, NULL, par, 1, "f", "b\n", 1000000000, "child, dated earlier\n", &c[1]);
	assert_int_equal(tree_open_path(path, NULL, &t), 0);
	hex(&c[1], hexc);
	assert_int_equal(tree_commit_show(t, hexc, on_info, got), 0);
	assert_string_equal(got, "child, dated earlier|author@example.org");
	assert_int_equal(tree_commit_show(t, "0000000000000000000000000000000000000001", on_info, got),
			 -ENOENT);
	tree_free(t);
	git_repository_free(repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_random_histories),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_checkout_and_tags),
		cmocka_unit_test(test_commit_show),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
