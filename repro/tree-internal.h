/* Private parts of the tree module shared by its files. */
#ifndef KFIX_REPRO_TREE_INTERNAL_H
#define KFIX_REPRO_TREE_INTERNAL_H

#include <git2.h>
#include <stdarg.h>

#include "common/macro.h"
#include "repro/tree.h"

struct tree {
	git_repository *repo;
	char *path;
	bool snapshot;
	char error[1024];
};

DEFINE_CLEANUP(git_repository, git_repository_free)
DEFINE_CLEANUP(git_commit, git_commit_free)
DEFINE_CLEANUP(git_tree, git_tree_free)
DEFINE_CLEANUP(git_tree_entry, git_tree_entry_free)
DEFINE_CLEANUP(git_blob, git_blob_free)
DEFINE_CLEANUP(git_object, git_object_free)
DEFINE_CLEANUP(git_remote, git_remote_free)
DEFINE_CLEANUP(git_revwalk, git_revwalk_free)
DEFINE_CLEANUP(git_diff, git_diff_free)
DEFINE_CLEANUP(git_diff_stats, git_diff_stats_free)
DEFINE_CLEANUP(git_index, git_index_free)
DEFINE_CLEANUP(git_reference, git_reference_free)
DEFINE_CLEANUP(git_signature, git_signature_free)
DEFINE_CLEANUP(git_blame, git_blame_free)
DEFINE_CLEANUP(git_note, git_note_free)
DEFINE_CLEANUP(git_config, git_config_free)
DEFINE_CLEANUP(git_odb, git_odb_free)

static inline void git_buf_disposep(git_buf *b)
{
	git_buf_dispose(b);
}
#define _cleanup_git_buf_ _cleanup_(git_buf_disposep)

/* Holds a libgit2 library reference for the lifetime of the variable, for
 * functions that work on a folder rather than on a struct tree. */
static inline void git_libgit2_shutdownp(int *r)
{
	if (*r >= 0)
		git_libgit2_shutdown();
}
#define _cleanup_libgit2_ _cleanup_(git_libgit2_shutdownp)

/* Maps a libgit2 error code to a negative errno. */
int tree_errno(int git_error);
/* Records a message in t (with libgit2's last error appended when
 * with_git) and returns r. */
int tree_fail(struct tree *t, int r, const char *fmt, ...) _printf_(3, 4);
int tree_fail_git(struct tree *t, int git_error, const char *fmt, ...)
	_printf_(3, 4);
/* A malloc'd "what: libgit2 message" for the ret_error of folder functions. */
char *tree_git_message(const char *fmt, ...) _printf_(1, 2);

/* Resolves rev to a commit of repo.  Like tree_open_worktree() and
 * tree_worktree_diff(), it returns libgit2's code, not an errno: callers
 * tell GIT_ENOTFOUND from GIT_EAMBIGUOUS, and tree_fail_git() appends
 * libgit2's message. */
int tree_lookup_commit(git_repository *repo, const char *rev,
		       git_commit **ret);
int tree_lookup_commit_t(struct tree *t, const char *rev, git_commit **ret);
/* Opens a worktree created by tree_worktree_checkout (a libgit2 code). */
int tree_open_worktree(const char *dir, git_repository **ret);
/* Adds files an edit or patch created to the worktree's index, so that
 * diffs and checkouts see them even where a .gitignore would hide them
 * (Debian's linux-source ignores every top-level entry).  A folder that
 * is not a worktree is left alone. */
int tree_worktree_track_new(const char *dir, const char *const *paths, size_t n);
/* The diff of a worktree against base's tree, untracked files included
 * (a libgit2 code). */
int tree_worktree_diff(git_repository *repo, const char *base, git_diff **ret);
/* Checks a tree-relative path: not absolute, no "", ".", ".." or ".git"
 * component.  *ret_error (static text) says what is wrong. */
int tree_path_check(const char *path, const char **ret_error);
/* Builds the snapshot repository of a plain folder. */
int tree_snapshot_import(struct tree *t, const char *src, const char *scratch);

#endif
