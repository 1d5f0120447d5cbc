/* Cost of choosing the next revision to bisect, and revisions tested per
 * bisection, on generated histories shaped like a kernel release (a
 * mainline of commits with a merge of a short side line about every
 * eighth commit), for ranges of 2500 to 20000 commits: the weighing must
 * stay about linear in the range, and the revisions tested about log2 of
 * it.  CPU time, so that a loaded machine does not skew the ratios. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <git2.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree.h"

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int commit(git_repository *repo, const git_oid *tree_id, git_oid *const *parents,
		  size_t n, unsigned i, git_oid *ret)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *pc[2] = { NULL, NULL };
	char msg[32];
	int r;

	snprintf(msg, sizeof(msg), "c%u\n", i);
	r = git_signature_new(&sig, "B", "b@example.org", 1600000000 + i, 0);
	if (r == 0)
		r = git_tree_lookup(&tree, repo, tree_id);
	for (size_t k = 0; r == 0 && k < n; k++)
		r = git_commit_lookup(&pc[k], repo, parents[k]);
	if (r == 0)
		r = git_commit_create(ret, repo, NULL, sig, sig, NULL, msg, tree, n,
				      (const git_commit **)pc);
	for (size_t k = 0; k < n; k++)
		git_commit_free(pc[k]);
	git_tree_free(tree);
	git_signature_free(sig);
	return r;
}

/* n commits; oids in ret (oldest first). */
static int history(git_repository *repo, size_t n, git_oid *ret)
{
	git_treebuilder *tb;
	git_oid empty;
	int r = git_treebuilder_new(&tb, repo, NULL);

	if (r == 0)
		r = git_treebuilder_write(&empty, tb);
	git_treebuilder_free(tb);
	srand(7);
	for (size_t i = 0; r == 0 && i < n; i++) {
		git_oid *par[2];
		size_t np = 0;

		if (i > 0)
			par[np++] = &ret[i - 1];
		if (i > 16 && i % 8 == 0)
			par[np++] = &ret[i - 2 - (size_t)rand() % 12];
		r = commit(repo, &empty, par, np, (unsigned)i, &ret[i]);
	}
	return r;
}

int main(void)
{
	static const size_t sizes[] = { 2500, 5000, 10000, 20000 };
	const char *tmp = getenv("TMPDIR");
	char dir[256];
	double base = 0;

	git_libgit2_init();
	snprintf(dir, sizeof(dir), "%s/kfix-bench-bisect-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	printf("%-8s %-14s %-10s %-8s %s\n", "commits", "choose (ms)", "per 2500", "tested",
	       "log2");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		git_oid *c = calloc(n, sizeof(*c));
		git_repository *repo = NULL;
		struct tree *t = NULL;
		char path[320], good[TREE_OID_HEX], bad[TREE_OID_HEX], culprit[TREE_OID_HEX];
		char **goods = NULL;
		struct tree_bisect_step st;
		unsigned tested = 0, lg = 0;
		double t0, one;

		snprintf(path, sizeof(path), "%s/h%zu.git", dir, n);
		if (!c || git_repository_init(&repo, path, 1) < 0 || history(repo, n, c) < 0 ||
		    tree_open_path(path, NULL, &t) < 0) {
			fprintf(stderr, "cannot make the history of %zu commits\n", n);
			return 1;
		}
		git_oid_tostr(good, sizeof(good), &c[0]);
		git_oid_tostr(bad, sizeof(bad), &c[n - 1]);
		git_oid_tostr(culprit, sizeof(culprit), &c[n / 3 + 17]);
		strv_push(&goods, good);
		t0 = cpu();
		for (int k = 0; k < 5; k++)
			if (tree_bisect_next(t, bad, goods, NULL, 0, &st) < 0)
				return 1;
		one = (cpu() - t0) / 5;
		/* a whole bisection with an oracle: bad below the culprit */
		while (st.result == TREE_BISECT_TEST) {
			git_oid o, co;

			tested++;
			git_oid_fromstr(&o, st.commit);
			git_oid_fromstr(&co, culprit);
			if (git_oid_equal(&o, &co) || git_graph_descendant_of(repo, &o, &co) == 1)
				snprintf(bad, sizeof(bad), "%s", st.commit);
			else
				strv_push(&goods, st.commit);
			if (tree_bisect_next(t, bad, goods, NULL, 0, &st) < 0)
				return 1;
		}
		if (st.result != TREE_BISECT_FOUND || strcmp(st.commit, culprit) != 0) {
			fprintf(stderr, "the bisection of %zu commits missed the culprit\n", n);
			return 1;
		}
		while (((size_t)1 << lg) < n)
			lg++;
		if (s == 0)
			base = one;
		printf("%-8zu %-14.2f %-10.2f %-8u %u\n", n, one * 1e3,
		       base > 0 ? one / base / ((double)n / (double)sizes[0]) : 0, tested, lg);
		strv_free(goods);
		tree_free(t);
		git_repository_free(repo);
		free(c);
	}
	rm_rf(dir);
	git_libgit2_shutdown();
	return 0;
}
