/* Bisection over a tree's history, as git bisect chooses: the candidates
 * are the commits reachable from the bad one and from no good one; the
 * next to test is the one whose candidate ancestors come closest to half
 * of them, so that either answer halves what is left.  Merges count their
 * ancestors on every side, so a culprit on a merged branch is found
 * precisely (bisecting the first-parent line only would name the merge).
 * Also: in-place checkouts of a local repository, and the release tags
 * below a commit (a known-good default for bisection). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "common/strutil.h"
#include "tree-internal.h"

struct cand {
	git_oid oid;
	size_t *parents; /* indices into the candidate array */
	size_t n_parents;
	size_t weight;	 /* candidates among its ancestors, itself included */
	bool skipped;
};

struct range {
	struct cand *c;
	size_t n;
	size_t *order; /* indices sorted by oid, for lookups */
	unsigned *mark;
	unsigned stamp;
};

static void range_clear(struct range *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->c[i].parents);
	free(g->c);
	free(g->order);
	free(g->mark);
}

static int cmp_order(const void *a, const void *b, void *userdata)
{
	const struct range *g = userdata;

	return git_oid_cmp(&g->c[*(const size_t *)a].oid, &g->c[*(const size_t *)b].oid);
}

static ssize_t range_find(const struct range *g, const git_oid *oid)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = git_oid_cmp(&g->c[g->order[mid]].oid, oid);

		if (c == 0)
			return (ssize_t)g->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The candidates, parents before children. */
static int range_walk(struct tree *t, const git_oid *bad, char *const *good, size_t max,
		      struct range *g)
{
	_cleanup_(git_revwalk_freep) git_revwalk *w = NULL;
	size_t cap = 0;
	git_oid oid;
	int r;

	r = git_revwalk_new(&w, t->repo);
	if (r == 0)
		r = git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (r == 0)
		r = git_revwalk_push(w, bad);
	for (size_t i = 0; r == 0 && good && good[i]; i++) {
		_cleanup_(git_commit_freep) git_commit *c = NULL;

		r = tree_lookup_commit_t(t, good[i], &c);
		if (r < 0)
			return r;
		r = git_revwalk_hide(w, git_commit_id(c));
	}
	if (r < 0)
		return tree_fail_git(t, r, "cannot walk the bisection range");
	while ((r = git_revwalk_next(&oid, w)) == 0) {
		if (g->n == max)
			return tree_fail(t, -E2BIG, "more than %zu commits to bisect", max);
		if (g->n == cap) {
			struct cand *n = reallocarray(g->c, cap ? cap * 2 : 1024, sizeof(*n));

			if (!n)
				return -ENOMEM;
			g->c = n;
			cap = cap ? cap * 2 : 1024;
		}
		g->c[g->n++] = (struct cand){ .oid = oid };
	}
	if (r != GIT_ITEROVER)
		return tree_fail_git(t, r, "cannot walk the bisection range");
	return 0;
}

static int range_link(struct tree *t, struct range *g)
{
	g->order = calloc(g->n ? g->n : 1, sizeof(*g->order));
	g->mark = calloc(g->n ? g->n : 1, sizeof(*g->mark));
	if (!g->order || !g->mark)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++)
		g->order[i] = i;
	qsort_r(g->order, g->n, sizeof(*g->order), cmp_order, g);
	for (size_t i = 0; i < g->n; i++) {
		_cleanup_(git_commit_freep) git_commit *c = NULL;
		unsigned np;
		int r = git_commit_lookup(&c, t->repo, &g->c[i].oid);

		if (r < 0)
			return tree_fail_git(t, r, "cannot read a commit of the range");
		np = git_commit_parentcount(c);
		g->c[i].parents = calloc(np ? np : 1, sizeof(size_t));
		if (!g->c[i].parents)
			return -ENOMEM;
		for (unsigned k = 0; k < np; k++) {
			ssize_t p = range_find(g, git_commit_parent_id(c, k));

			if (p >= 0)
				g->c[i].parents[g->c[i].n_parents++] = (size_t)p;
		}
	}
	return 0;
}

/* Ancestors of a merge inside the range, by a walk (a linear commit adds
 * one to its parent's count instead). */
static size_t count_ancestors(struct range *g, size_t from, size_t *stack)
{
	size_t n = 0, top = 0;

	g->stamp++;
	stack[top++] = from;
	g->mark[from] = g->stamp;
	while (top > 0) {
		const struct cand *c = &g->c[stack[--top]];

		n++;
		for (size_t k = 0; k < c->n_parents; k++)
			if (g->mark[c->parents[k]] != g->stamp) {
				g->mark[c->parents[k]] = g->stamp;
				stack[top++] = c->parents[k];
			}
	}
	return n;
}

static int range_weigh(struct range *g)
{
	_cleanup_free_ size_t *stack = calloc(g->n ? g->n : 1, sizeof(size_t));

	if (!stack)
		return -ENOMEM;
	/* parents come first in the array */
	for (size_t i = 0; i < g->n; i++) {
		struct cand *c = &g->c[i];

		if (c->n_parents == 0)
			c->weight = 1;
		else if (c->n_parents == 1)
			c->weight = g->c[c->parents[0]].weight + 1;
		else
			c->weight = count_ancestors(g, i, stack);
	}
	return 0;
}

static unsigned log2_ceil(size_t n)
{
	unsigned k = 0;

	while (((size_t)1 << k) < n && k < 63)
		k++;
	return k;
}

int tree_bisect_next(struct tree *t, const char *bad, char *const *good, char *const *skip,
		     size_t max_commits, struct tree_bisect_step *ret)
{
	_cleanup_(git_commit_freep) git_commit *b = NULL;
	_cleanup_(range_clear) struct range g = {};
	struct tree_bisect_step s = {};
	size_t best = 0, best_dist = 0, left = 0;
	bool have = false;
	int r;

	if (t->snapshot)
		return tree_fail(t, -ENOTSUP, "an imported folder has no history");
	r = tree_lookup_commit_t(t, bad, &b);
	if (r < 0)
		return r;
	r = range_walk(t, git_commit_id(b), good, max_commits ? max_commits : 1000000, &g);
	if (r >= 0)
		r = range_link(t, &g);
	if (r >= 0)
		r = range_weigh(&g);
	if (r < 0)
		return r;
	if (g.n == 0)
		return tree_fail(t, -EINVAL, "the bad commit is an ancestor of a good one");
	for (size_t i = 0; skip && skip[i]; i++) {
		git_oid o;
		ssize_t k;

		if (git_oid_fromstr(&o, skip[i]) == 0 && (k = range_find(&g, &o)) >= 0)
			g.c[k].skipped = true;
	}
	for (size_t i = 0; i < g.n; i++) {
		size_t w = g.c[i].weight, d = w < g.n - w ? w : g.n - w;

		left += !g.c[i].skipped;
		/* the bad commit itself (weight n, distance 0) is never chosen */
		if (!g.c[i].skipped && d > 0 && (!have || d > best_dist)) {
			best = i;
			best_dist = d;
			have = true;
		}
	}
	s.remaining = g.n;
	if (g.n == 1) {
		s.result = TREE_BISECT_FOUND;
		git_oid_tostr(s.commit, TREE_OID_HEX, git_commit_id(b));
	} else if (!have) {
		/* only skipped commits (and the bad one) are left: the first
		 * bad commit is one of them, as git bisect says */
		s.result = TREE_BISECT_ONLY_SKIPPED;
		git_oid_tostr(s.commit, TREE_OID_HEX, git_commit_id(b));
	} else {
		s.result = TREE_BISECT_TEST;
		git_oid_tostr(s.commit, TREE_OID_HEX, &g.c[best].oid);
	}
	s.steps_left = log2_ceil(left);
	*ret = s;
	return 0;
}

int tree_bisect_candidates(struct tree *t, const char *bad, char *const *good, size_t max,
			   char ***ret)
{
	_cleanup_(git_commit_freep) git_commit *b = NULL;
	_cleanup_(range_clear) struct range g = {};
	_cleanup_strv_ char **v = NULL;
	int r;

	r = tree_lookup_commit_t(t, bad, &b);
	if (r < 0)
		return r;
	r = range_walk(t, git_commit_id(b), good, max, &g);
	if (r < 0)
		return r;
	for (size_t i = g.n; i-- > 0;) {
		char hex[TREE_OID_HEX];

		git_oid_tostr(hex, sizeof(hex), &g.c[i].oid);
		if (strv_push(&v, hex) < 0)
			return -ENOMEM;
	}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

/* ---- in-place checkouts of a local repository ---- */

int tree_head(struct tree *t, char **ret_ref, char ret_oid[TREE_OID_HEX])
{
	_cleanup_(git_reference_freep) git_reference *h = NULL;
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	char *ref = NULL;
	int r;

	r = git_repository_head(&h, t->repo);
	if (r < 0)
		return tree_fail_git(t, r, "no HEAD");
	r = tree_lookup_commit_t(t, "HEAD", &c);
	if (r < 0)
		return r;
	if (!git_repository_head_detached(t->repo) && !(ref = strdup(git_reference_name(h))))
		return -ENOMEM;
	git_oid_tostr(ret_oid, TREE_OID_HEX, git_commit_id(c));
	*ret_ref = ref;
	return 0;
}

int tree_checkout_here(struct tree *t, const char *rev, const char *ref)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	int r;

	if (git_repository_is_bare(t->repo) || t->snapshot)
		return tree_fail(t, -ENOTSUP, "%s has no work tree of its own", t->path);
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	/* SAFE: a file someone changed by hand stops the checkout instead of
	 * being overwritten; unchanged files keep their mtimes, so builds in
	 * the tree stay incremental */
	opts.checkout_strategy = GIT_CHECKOUT_SAFE;
	r = git_checkout_tree(t->repo, (git_object *)c, &opts);
	if (r == GIT_ECONFLICT)
		return tree_fail_git(t, r, "%s has local changes; not checking out %.12s", t->path,
				     rev);
	if (r < 0)
		return tree_fail_git(t, r, "checkout of %.12s in %s failed", rev, t->path);
	r = ref ? git_repository_set_head(t->repo, ref)
		: git_repository_set_head_detached(t->repo, git_commit_id(c));
	if (r < 0)
		return tree_fail_git(t, r, "cannot set HEAD in %s", t->path);
	return 0;
}

/* ---- release tags ---- */

static bool release_tag(const char *name)
{
	/* v6.1, v6.1.12 and v2.6.39: not -rc or any other suffix */
	if (name[0] != 'v' || !isdigit((unsigned char)name[1]))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return false;
	return true;
}

int tree_release_below(struct tree *t, const char *rev, char ret_tag[TREE_REF_MAX],
		       char ret_oid[TREE_OID_HEX])
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	git_describe_options d = GIT_DESCRIBE_OPTIONS_INIT;
	git_describe_format_options f = GIT_DESCRIBE_FORMAT_OPTIONS_INIT;
	int r;

	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	d.describe_strategy = GIT_DESCRIBE_TAGS;
	d.pattern = "v[0-9]*";
	f.abbreviated_size = 0; /* the tag alone */
	/* the nearest tag may be an -rc: look below it until a release */
	for (int i = 0; i < 64; i++) {
		_cleanup_(git_commit_freep) git_commit *parent = NULL, *tc = NULL;
		_cleanup_git_buf_ git_buf name = GIT_BUF_INIT;
		git_describe_result *res = NULL;

		if (git_commit_parentcount(c) == 0)
			return tree_fail(t, -ENOENT, "no release tag below %.12s", rev);
		r = git_commit_parent(&parent, c, 0);
		if (r == 0)
			r = git_describe_commit(&res, (git_object *)parent, &d);
		if (r == 0)
			r = git_describe_format(&name, res, &f);
		git_describe_result_free(res);
		if (r == GIT_ENOTFOUND)
			return tree_fail(t, -ENOENT, "no release tag below %.12s", rev);
		if (r < 0)
			return tree_fail_git(t, r, "cannot describe %.12s", rev);
		r = tree_lookup_commit_t(t, name.ptr, &tc);
		if (r < 0)
			return r;
		if (release_tag(name.ptr) && strlen(name.ptr) < TREE_REF_MAX) {
			snprintf(ret_tag, TREE_REF_MAX, "%s", name.ptr);
			git_oid_tostr(ret_oid, TREE_OID_HEX, git_commit_id(tc));
			return 0;
		}
		git_commit_free(c);
		c = TAKE_PTR(tc);
	}
	return tree_fail(t, -ENOENT, "no release tag within 64 tags below %.12s", rev);
}

/* ---- the people of a commit ---- */

int tree_commit_trailers(struct tree *t, const char *rev, const char *key, char ***ret)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	git_message_trailer_array a = { 0 };
	_cleanup_strv_ char **v = NULL;
	int r;

	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	/* libgit2 finds the trailer block as git interpret-trailers does */
	r = git_message_trailers(&a, git_commit_message(c) ?: "");
	if (r < 0)
		return tree_fail_git(t, r, "cannot read the trailers of %.12s", rev);
	for (size_t i = 0; i < a.count && r >= 0; i++)
		if (strcasecmp(a.trailers[i].key, key) == 0 && !strv_contains(v, a.trailers[i].value))
			r = strv_push(&v, a.trailers[i].value);
	git_message_trailer_array_free(&a);
	if (r < 0)
		return r;
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}
