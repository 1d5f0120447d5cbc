/* Worktrees: per-slot checkouts that borrow the tree's objects, their
 * diffs, patch application and commits. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/tree-internal.h"

#define WORKTREE_MARKER "kfix.worktree"

static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 1;

	if (!d)
		return errno == ENOENT ? 1 : negerrno();
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
			r = 0;
			break;
		}
	closedir(d);
	return r;
}

/* Points the worktree's object store at the tree's objects.  Returns 1
 * when it pointed at another tree's before: the slot changes trees, and
 * its index and HEAD name objects that may no longer be reachable. */
static int worktree_set_alternates(git_repository *wrepo, const char *objects)
{
	_cleanup_free_ char *path = NULL, *old = NULL, *want = NULL, *index = NULL;
	int r;

	if (asprintf(&path, "%sobjects/info/alternates",
		     git_repository_path(wrepo)) < 0 ||
	    asprintf(&index, "%sindex", git_repository_path(wrepo)) < 0 ||
	    asprintf(&want, "%s\n", objects) < 0)
		return -ENOMEM;
	if (read_file_bounded(path, 64 * 1024, &old, NULL) < 0)
		return write_file_atomic(path, want, strlen(want), 0644);
	if (streq(old, want))
		return 0;
	if (unlink(index) < 0 && errno != ENOENT)
		return negerrno();
	r = write_file_atomic(path, want, strlen(want), 0644);
	return r < 0 ? r : 1;
}

/* A new worktree is made beside dir and renamed into place once it
 * carries the marker: a kill in git_repository_init() must not leave dir
 * holding half a repository, which no later attempt would take. */
static int worktree_create(struct tree *t, const char *dir, git_repository **ret)
{
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_config_freep) git_config *cfg = NULL;
	_cleanup_free_ char *tmp = NULL;
	int r;

	if (asprintf(&tmp, "%s.new", dir) < 0)
		return -ENOMEM;
	r = rm_rf(tmp); /* what a kill left */
	if (r < 0 && r != -ENOENT)
		return tree_fail(t, r, "cannot remove %s", tmp);
	r = mkdir_p(tmp, 0755);
	if (r < 0)
		return tree_fail(t, r, "cannot create %s", tmp);
	r = git_repository_init(&w, tmp, 0);
	if (r < 0)
		return tree_fail_git(t, r, "cannot create worktree %s", tmp);
	r = git_repository_config(&cfg, w);
	if (r == 0)
		r = git_config_set_bool(cfg, WORKTREE_MARKER, 1);
	if (r < 0)
		return tree_fail_git(t, r, "cannot configure worktree");
	git_config_free(TAKE_PTR(cfg));
	git_repository_free(TAKE_PTR(w));
	/* dir is absent or empty (checked by the caller) */
	if (rmdir(dir) < 0 && errno != ENOENT)
		return tree_fail(t, negerrno(), "cannot replace %s", dir);
	if (rename(tmp, dir) < 0)
		return tree_fail(t, negerrno(), "cannot move %s to %s", tmp, dir);
	r = git_repository_open_ext(&w, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (r < 0)
		return tree_fail_git(t, r, "cannot open %s", dir);
	*ret = TAKE_PTR(w);
	return 0;
}

static int worktree_open_or_create(struct tree *t, const char *dir,
				   git_repository **ret, bool *ret_switched)
{
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_config_freep) git_config *cfg = NULL;
	_cleanup_free_ char *objects = NULL;
	char real[PATH_MAX];
	int marker = 0, r;

	if (!realpath(git_repository_path(t->repo), real))
		return tree_fail(t, negerrno(), "cannot resolve %s", t->path);
	if (asprintf(&objects, "%s/objects", real) < 0)
		return -ENOMEM;
	r = git_repository_open_ext(&w, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (r == GIT_ENOTFOUND) {
		r = dir_is_empty(dir);
		if (r < 0)
			return tree_fail(t, r, "cannot read %s", dir);
		if (r == 0)
			return tree_fail(t, -ENOTEMPTY,
					 "%s is not empty and not a kfix worktree", dir);
		r = worktree_create(t, dir, &w);
		if (r < 0)
			return r;
	} else if (r < 0) {
		return tree_fail_git(t, r, "cannot open %s", dir);
	} else {
		r = git_repository_config(&cfg, w);
		if (r == 0)
			(void)git_config_get_bool(&marker, cfg, WORKTREE_MARKER);
		if (!marker)
			return tree_fail(t, -EEXIST,
					 "%s is a repository not made by kfix", dir);
	}
	r = worktree_set_alternates(w, objects);
	if (r < 0)
		return tree_fail(t, r, "cannot write alternates in %s", dir);
	*ret_switched = r > 0;
	/* Reopen so that the object database sees the alternates. */
	git_repository_free(TAKE_PTR(w));
	r = git_repository_open_ext(&w, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (r < 0)
		return tree_fail_git(t, r, "cannot open %s", dir);
	*ret = TAKE_PTR(w);
	return 0;
}

int tree_worktree_checkout(struct tree *t, const char *dir, const char *rev,
			   char ret_oid[TREE_OID_HEX])
{
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_commit_freep) git_commit *c = NULL, *wc = NULL;
	_cleanup_(git_tree_freep) git_tree *empty = NULL;
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	bool switched = false;
	git_oid empty_oid;
	int r;

	if (!dir || !*dir)
		return tree_fail(t, -EINVAL, "no worktree folder");
	r = tree_lookup_commit_t(t, rev, &c);
	if (r < 0)
		return r;
	r = worktree_open_or_create(t, dir, &w, &switched);
	if (r < 0)
		return r;
	if (switched) {
		/* Compare with nothing: every file is written anew, and what
		 * the old tree left is removed. */
		r = git_tree_create_updated(&empty_oid, w, NULL, 0, NULL);
		if (r == 0)
			r = git_tree_lookup(&empty, w, &empty_oid);
		if (r < 0)
			return tree_fail_git(t, r, "cannot reset worktree %s", dir);
		opts.baseline = empty;
	}
	r = git_commit_lookup(&wc, w, git_commit_id(c));
	if (r < 0)
		return tree_fail_git(t, r, "commit not visible in worktree %s", dir);
	/* FORCE reverts local edits; files already matching the target are
	 * recognised by the index's stat data and left untouched. */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	r = git_checkout_tree(w, (git_object *)wc, &opts);
	if (r < 0)
		return tree_fail_git(t, r, "checkout in %s failed", dir);
	r = git_repository_set_head_detached(w, git_commit_id(wc));
	if (r < 0)
		return tree_fail_git(t, r, "cannot set HEAD in %s", dir);
	if (ret_oid)
		git_oid_tostr(ret_oid, TREE_OID_HEX, git_commit_id(wc));
	return 0;
}

int tree_open_worktree(const char *dir, git_repository **ret)
{
	git_repository *w = NULL;
	int r;

	r = git_repository_open_ext(&w, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (r < 0)
		return r;
	if (git_repository_is_bare(w)) {
		git_repository_free(w);
		return GIT_EBAREREPO;
	}
	*ret = w;
	return 0;
}

int tree_worktree_track_new(const char *dir, const char *const *paths, size_t n)
{
	_cleanup_libgit2_ int lib = git_libgit2_init();
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_index_freep) git_index *index = NULL;
	int r;

	if (lib < 0)
		return -EIO;
	if (n == 0 || tree_open_worktree(dir, &w) < 0)
		return 0; /* not a worktree: nothing to track */
	r = git_repository_index(&index, w);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = git_index_add_bypath(index, paths[i]);
	if (r == 0)
		r = git_index_write(index);
	return tree_errno(r);
}

int tree_worktree_diff(git_repository *repo, const char *base, git_diff **ret)
{
	_cleanup_(git_commit_freep) git_commit *c = NULL;
	_cleanup_(git_tree_freep) git_tree *tr = NULL;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	int r;

	r = tree_lookup_commit(repo, base, &c);
	if (r < 0)
		return r;
	r = git_commit_tree(&tr, c);
	if (r < 0)
		return r;
	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		     GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_INCLUDE_TYPECHANGE;
	return git_diff_tree_to_workdir_with_index(ret, repo, tr, &opts);
}

/* The diff refers to the repository: both are handed out. */
static int diff_open(const char *dir, const char *base, git_repository **ret_repo,
		     git_diff **ret)
{
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	int r;

	r = tree_open_worktree(dir, &w);
	if (r < 0)
		return tree_errno(r);
	r = tree_worktree_diff(w, base, ret);
	if (r == GIT_ENOTFOUND || r == GIT_EINVALIDSPEC)
		return -ENOENT;
	if (r < 0)
		return tree_errno(r);
	*ret_repo = TAKE_PTR(w);
	return 0;
}

int tree_diff(const char *dir, const char *base, char **ret_diff)
{
	_cleanup_libgit2_ int lib = git_libgit2_init();
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	_cleanup_git_buf_ git_buf buf = GIT_BUF_INIT;
	char *s;
	int r;

	if (lib < 0)
		return -EIO;
	r = diff_open(dir, base, &w, &d);
	if (r < 0)
		return r;
	r = git_diff_to_buf(&buf, d, GIT_DIFF_FORMAT_PATCH);
	if (r < 0)
		return tree_errno(r);
	if (buf.size > TREE_PATCH_MAX)
		return -E2BIG;
	s = strndup(buf.ptr ? buf.ptr : "", buf.size);
	if (!s)
		return -ENOMEM;
	*ret_diff = s;
	return 0;
}

static const char *delta_path(const git_diff_delta *d)
{
	return d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
}

int tree_diffstat(const char *dir, const char *base, char **ret_stat,
		  char ***ret_paths)
{
	_cleanup_libgit2_ int lib = git_libgit2_init();
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	_cleanup_(git_diff_stats_freep) git_diff_stats *st = NULL;
	_cleanup_git_buf_ git_buf buf = GIT_BUF_INIT;
	_cleanup_strv_ char **paths = NULL;
	_cleanup_free_ char *s = NULL;
	int r;

	if (lib < 0)
		return -EIO;
	r = diff_open(dir, base, &w, &d);
	if (r < 0)
		return r;
	r = git_diff_get_stats(&st, d);
	if (r < 0)
		return tree_errno(r);
	r = git_diff_stats_to_buf(&buf, st,
				  GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY,
				  72);
	if (r < 0)
		return tree_errno(r);
	s = strndup(buf.ptr ? buf.ptr : "", buf.size);
	if (!s)
		return -ENOMEM;
	if (ret_paths) {
		paths = calloc(1, sizeof(char *));
		if (!paths)
			return -ENOMEM;
		for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
			r = strv_push(&paths, delta_path(git_diff_get_delta(d, i)));
			if (r < 0)
				return r;
		}
		*ret_paths = TAKE_PTR(paths);
	}
	if (ret_stat)
		*ret_stat = TAKE_PTR(s);
	return 0;
}

struct apply_state {
	const char *last_path;
	char *bad_path;
};

/* Files a patch creates go into the index, like the ones edits create. */
static int track_added(const char *dir, git_diff *d)
{
	_cleanup_free_ const char **added = NULL;
	size_t n = 0, total = git_diff_num_deltas(d);

	added = calloc(total ? total : 1, sizeof(char *));
	if (!added)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++) {
		const git_diff_delta *dl = git_diff_get_delta(d, i);

		if (dl->status == GIT_DELTA_ADDED || dl->status == GIT_DELTA_RENAMED ||
		    dl->status == GIT_DELTA_COPIED)
			added[n++] = dl->new_file.path;
	}
	return tree_worktree_track_new(dir, added, n);
}

static int apply_delta_cb(const git_diff_delta *delta, void *payload)
{
	struct apply_state *s = payload;
	const char *paths[2] = { delta->old_file.path, delta->new_file.path };

	s->last_path = delta_path(delta);
	for (size_t i = 0; i < 2; i++) {
		if (!paths[i] || (i == 0 && delta->status == GIT_DELTA_ADDED))
			continue;
		if (tree_path_check(paths[i], NULL) < 0) {
			free(s->bad_path);
			s->bad_path = strdup(paths[i]);
			return -1;
		}
	}
	return 0;
}

int tree_apply_patch(const char *dir, const char *patch, size_t len,
		     char **ret_error)
{
	_cleanup_libgit2_ int lib = git_libgit2_init();
	_cleanup_(git_repository_freep) git_repository *w = NULL;
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	git_apply_options opts = GIT_APPLY_OPTIONS_INIT;
	struct apply_state s = { 0 };
	_cleanup_free_ char *bad = NULL;
	int r;

	if (lib < 0)
		return -EIO;
	if (len > TREE_PATCH_MAX) {
		if (ret_error)
			*ret_error = strdup("patch is too large");
		return -E2BIG;
	}
	r = tree_open_worktree(dir, &w);
	if (r < 0) {
		if (ret_error)
			*ret_error = tree_git_message("cannot open worktree");
		return tree_errno(r);
	}
	r = git_diff_from_buffer(&d, patch, len);
	if (r == 0 && git_diff_num_deltas(d) == 0)
		r = GIT_ENOTFOUND;
	if (r < 0) {
		if (ret_error)
			*ret_error = r == GIT_ENOTFOUND ?
					     strdup("no diff found in the patch") :
					     tree_git_message("cannot parse the patch");
		return -EINVAL;
	}
	opts.delta_cb = apply_delta_cb;
	opts.payload = &s;
	opts.flags = GIT_APPLY_CHECK;
	for (int pass = 0; pass < 2; pass++) {
		s.last_path = NULL;
		r = git_apply(w, d, GIT_APPLY_LOCATION_WORKDIR, &opts);
		bad = TAKE_PTR(s.bad_path);
		if (bad) {
			if (ret_error && asprintf(ret_error,
						  "patch touches a forbidden path: %.200s",
						  bad) < 0)
				*ret_error = NULL;
			return -EPERM;
		}
		if (r < 0) {
			if (ret_error)
				*ret_error = tree_git_message(
					"patch does not apply%s%.200s",
					s.last_path ? " to " : "",
					s.last_path ? s.last_path : "");
			return r == GIT_EAPPLYFAIL || r == GIT_ECONFLICT ||
					       r == GIT_ENOTFOUND ?
				       -ENOEXEC :
				       tree_errno(r);
		}
		opts.flags = 0;
	}
	r = track_added(dir, d);
	if (r < 0 && ret_error)
		*ret_error = strdup("cannot record the new files in the index");
	return r;
}
