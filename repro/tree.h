/* Kernel source trees through libgit2: bare mirrors, per-slot worktrees,
 * reading blobs and functions at a commit, grep, log and blame queries,
 * search/replace edits, diffs, patches, commits, branches, notes and push.
 *
 * Nothing here runs git: every operation goes through libgit2, so no
 * shell or external program ever sees a revision, path or patch text.
 *
 * A tree is either a mirror (CACHE/trees/NAME.git, fetched from a URL),
 * an existing repository, or a plain source folder (e.g. an unpacked
 * tarball).  A plain folder is imported once into a scratch repository
 * whose single "snapshot" commit stands for it, so that worktrees, edits
 * and diffs work the same way; queries that need history return
 * -ENOTSUP for it.
 *
 * A worktree is a folder of its own (one per build slot) with a small
 * repository that borrows the tree's objects (alternates).  Checking out
 * another commit there only rewrites the files that differ, so file
 * mtimes of unchanged files stay put and kernel builds stay incremental.
 *
 * Errors are negative errno values; functions that work on a struct tree
 * keep a human-readable message for the last failure (tree_error()). */
#ifndef KFIX_REPRO_TREE_H
#define KFIX_REPRO_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"

#define TREE_OID_HEX 41			/* 40 hex digits + NUL */
#define TREE_READ_MAX_DEFAULT (8u << 20) /* tree_read_file with max 0 */
#define EDIT_FILE_MAX (8u << 20)	/* largest file an edit may touch */
#define EDIT_TEXT_MAX (256u << 10)	/* largest before/after text */
#define EDIT_COUNT_MAX 256		/* edits per tree_apply_edits call */
#define TREE_PATCH_MAX (16u << 20)	/* largest patch / diff text */

struct tree;

/* Opens (creating when missing) the bare mirror CACHE_DIR/trees/NAME.git
 * whose "origin" remote is url.  name must be a plain file name. */
int tree_open_mirror(const char *cache_dir, const char *name, const char *url,
		     struct tree **ret);
/* Opens an existing repository (bare or not), or imports a plain source
 * folder: its snapshot repository lives in scratch_dir (created when
 * missing; reused and refreshed on later opens, only changed files are
 * re-read).  scratch_dir may be NULL for repositories; for a plain folder
 * without scratch_dir the result is -ENOTSUP. */
int tree_open_path(const char *path, const char *scratch_dir,
		   struct tree **ret);
void tree_free(struct tree *t);
static inline void tree_freep(struct tree **t)
{
	if (*t)
		tree_free(*t);
}
#define _cleanup_tree_ _cleanup_(tree_freep)

/* Message for the last failure of a function taking t ("" if none); with
 * t NULL, why the calling thread's last tree_open_* failed. */
const char *tree_error(const struct tree *t);
/* Path of the repository (the .git folder for a bare mirror). */
const char *tree_path(const struct tree *t);
/* True for an imported plain folder (no history). */
bool tree_is_snapshot(const struct tree *t);

/* Fetching. */
struct tree_progress {
	unsigned total_objects, received_objects, indexed_objects;
	unsigned total_deltas, indexed_deltas;
	uint64_t received_bytes;
};
/* Returns non-zero to cancel the fetch (the fetch then fails -ECANCELED). */
typedef int (*tree_progress_fn)(const struct tree_progress *p, void *userdata);

/* Fetches from origin.  refspec NULL uses the mirror's refspecs (all
 * branches and tags, pruned).  timeout_usec 0 means no limit; the limit
 * is checked whenever data arrives, so the fetch fails with -ETIMEDOUT
 * once it is over (a completely silent server is bounded by TCP). */
int tree_fetch(struct tree *t, const char *refspec, uint64_t timeout_usec,
	       tree_progress_fn progress, void *userdata);

/* Resolves a revision (sha, abbreviated sha, branch, tag, "HEAD~2", ...)
 * to a commit id.  -ENOENT when it is unknown. */
int tree_resolve(struct tree *t, const char *rev, char ret_oid[TREE_OID_HEX]);

/* Reading at a commit. */
/* max 0 means TREE_READ_MAX_DEFAULT; a bigger blob is -EFBIG.  The data is
 * NUL-terminated (not counted in ret_len).  -ENOENT: no such file;
 * -EISDIR: path is a directory. */
int tree_read_file(struct tree *t, const char *rev, const char *path,
		   size_t max, char **ret_data, size_t *ret_len);
/* Finds the definition of C function func in path (brace-aware scan that
 * skips comments, strings and prototypes; the return type on the line
 * before is included).  ret_first_line is 1-based.  -ENOENT when there is
 * no definition. */
int tree_read_function(struct tree *t, const char *rev, const char *path,
		       const char *func, char **ret_text,
		       unsigned *ret_first_line);
/* The same scan on text in memory (used by tree_read_function).  func may
 * be a crash frame's name: syscall wrappers (__x64_sys_NAME, __se_sys_,
 * __do_sys_, __ia32_compat_sys_, ...) find SYSCALL_DEFINEn(NAME, ...). */
int c_find_function(const char *text, size_t len, const char *func,
		    size_t *ret_start, size_t *ret_end, unsigned *ret_first_line);
/* The definition whose text holds line (1-based), found by position and
 * not by name, so that functions a macro defines are found too:
 * ret_name is the offset of the defining identifier (the function's
 * name, or the macro's), ret_start..ret_end the definition with its
 * return type line.  -ENOENT when line is outside every definition. */
int c_function_at_line(const char *text, size_t len, unsigned line, size_t *ret_name,
		       size_t *ret_start, size_t *ret_end, unsigned *ret_first_line);
/* The syscall a wrapper symbol stands for: "__x64_sys_read", "__se_sys_read",
 * "__do_sys_read", "sys_read" give "read" (a pointer into sym); compat
 * wrappers set *ret_compat (may be NULL).  NULL when sym is no syscall. */
const char *c_syscall_name(const char *sym, bool *ret_compat);

/* Unified diff between two commits of t ("git diff OLD NEW"); old NULL
 * means new's first parent (what "git show NEW" shows).  max 0:
 * TREE_PATCH_MAX; a longer diff is cut at a file boundary where possible
 * and *ret_truncated set (may be NULL). */
int tree_diff_commits(struct tree *t, const char *old, const char *new_rev,
		      size_t max, char **ret_diff, bool *ret_truncated);

/* Queries. */
enum {
	TREE_GREP_REGEX = 1 << 0, /* POSIX extended regex, else a fixed string */
	TREE_GREP_ICASE = 1 << 1,
};
/* line is the matching line without its newline (not NUL-terminated
 * beyond line_len).  Return non-zero to stop. */
typedef int (*tree_grep_fn)(const char *path, unsigned line_no,
			    const char *line, size_t line_len, void *userdata);
/* Searches the text files at rev (binary blobs are skipped), optionally
 * only under path_prefix ("fs/ext4/" or a file).  Stops after max_hits
 * (0: no limit).  Returns the number of hits reported (>= 0), or -EINVAL
 * for a bad regex (message in tree_error). */
int tree_grep(struct tree *t, const char *rev, const char *path_prefix,
	      const char *pattern, unsigned flags, size_t max_hits,
	      tree_grep_fn cb, void *userdata);

/* The entries of folder path ("" for the top) at rev, in git's order:
 * name, and whether it is a folder.  Return non-zero to stop.  -ENOTDIR
 * when path is not a folder. */
typedef int (*tree_dir_fn)(const char *name, bool is_dir, void *userdata);
int tree_list_dir(struct tree *t, const char *rev, const char *path, tree_dir_fn cb,
		  void *userdata);
/* Walks the history reachable from from_rev, newest first, and finds the
 * first commit whose message contains needle (e.g.
 * "Reported-by: syzbot+0123abcd").  Looks at max_commits commits (0: no
 * limit).  Returns 1 and sets ret_commit when found, 0 when not. */
int tree_log_grep(struct tree *t, const char *from_rev, const char *needle,
		  size_t max_commits, char ret_commit[TREE_OID_HEX]);

struct tree_commit_info {
	const char *oid;	 /* 40 hex */
	const char *subject;	 /* first line of the message */
	const char *message;	 /* whole message */
	const char *author_name, *author_email;
	int64_t author_time;	 /* unix seconds */
	unsigned parents;
};
typedef int (*tree_log_fn)(const struct tree_commit_info *c, void *userdata);
struct tree_log_opts {
	const char *from;	    /* revision; NULL: HEAD */
	const char *const *paths;   /* NULL-terminated; only commits that
				       change one of them (file or folder) */
	size_t max_results;	    /* 0: no limit */
	size_t max_walk;	    /* commits looked at; 0: 100000 */
	bool include_merges;
};
/* Calls cb for each matching commit, newest first; cb returns non-zero to
 * stop.  Returns the number of commits reported. */
int tree_log(struct tree *t, const struct tree_log_opts *opts, tree_log_fn cb,
	     void *userdata);

/* Calls cb once for rev itself (a log from rev sorted by time may start
 * with a parent whose date is later). */
int tree_commit_show(struct tree *t, const char *rev, tree_log_fn cb, void *userdata);
/* rev's subject (the first line of its message). */
int tree_commit_subject(struct tree *t, const char *rev, char **ret);

/* final_line and orig_line are 1-based; orig_path is the path in commit. */
typedef int (*tree_blame_fn)(unsigned final_line, const char *commit,
			     const char *orig_path, unsigned orig_line,
			     void *userdata);
/* Blames lines first..last (1-based, inclusive; last 0: to the end) of
 * path as of rev.  Calls cb once per line. */
int tree_blame_lines(struct tree *t, const char *rev, const char *path,
		     unsigned first, unsigned last, tree_blame_fn cb,
		     void *userdata);
/* 1 when ancestor is commit or one of its ancestors, 0 when not. */
int tree_is_ancestor(struct tree *t, const char *ancestor, const char *commit);

/* Bisection (as git bisect chooses the next commit to test). */
enum {
	TREE_BISECT_TEST,	  /* commit is the next to test */
	TREE_BISECT_FOUND,	  /* commit is the first bad commit */
	TREE_BISECT_ONLY_SKIPPED, /* only skipped commits are left before the bad one */
};
struct tree_bisect_step {
	int result;
	char commit[TREE_OID_HEX];
	size_t remaining;    /* candidates left, skipped ones and the bad one included */
	unsigned steps_left; /* about log2 of the untested candidates */
};
/* The next step of a bisection between bad and the good commits (NULL-
 * terminated), skipping the commits in skip; at most max_commits
 * candidates (0: a million), else -E2BIG.  -EINVAL when bad is an
 * ancestor of a good commit. */
int tree_bisect_next(struct tree *t, const char *bad, char *const *good, char *const *skip,
		     size_t max_commits, struct tree_bisect_step *ret);
/* The candidates (newest first), at most max: who the first bad commit
 * may be when only skipped commits are left. */
int tree_bisect_candidates(struct tree *t, const char *bad, char *const *good, size_t max,
			   char ***ret);
/* The nearest release tag (vX.Y[.Z], no -rc) strictly below rev. */
#define TREE_REF_MAX 256
int tree_release_below(struct tree *t, const char *rev, char ret_tag[TREE_REF_MAX],
		       char ret_oid[TREE_OID_HEX]);

/* The values of a commit's trailers named key ("Signed-off-by"), in
 * order, each once. */
int tree_commit_trailers(struct tree *t, const char *rev, const char *key, char ***ret);

/* A local repository's own work tree (tree_open_path of a non-bare
 * repository).  tree_head: the branch HEAD names (*ret_ref NULL when
 * detached) and its commit.  tree_checkout_here: checks out rev in place,
 * refusing to overwrite local changes, then points HEAD at ref (a branch
 * whose commit is rev) or, with ref NULL, detaches it at rev. */
int tree_head(struct tree *t, char **ret_ref, char ret_oid[TREE_OID_HEX]);
int tree_checkout_here(struct tree *t, const char *rev, const char *ref);

/* Worktrees. */
/* Makes dir (created when missing) a checkout of rev.  A folder used
 * before is reused: only files that differ are rewritten, local edits are
 * reverted and untracked files removed (ignored files, e.g. build output,
 * are kept).  Returns the commit id checked out in ret_oid (may be NULL). */
int tree_worktree_checkout(struct tree *t, const char *dir, const char *rev,
			   char ret_oid[TREE_OID_HEX]);

/* Search/replace edits (the agent's edit contract). */
struct edit {
	char *file;   /* relative to the tree's top */
	char *before; /* must occur exactly once; "" creates a new file */
	char *after;
	char *why;    /* free text, not used here */
};
/* Applies all edits in order (later edits see earlier ones) or none: every
 * edit is checked before any file is written.  Paths must stay inside dir:
 * absolute paths, "..", ".git" components and symlinks are refused.  On
 * failure *ret_error (when non-NULL) names the edit and the reason, e.g.
 * "edit 2 (mm/slub.c): 'before' occurs 3 times; add context to make it
 * unique". */
int tree_apply_edits(const char *dir, const struct edit *edits, size_t n,
		     char **ret_error);
void edit_free_array(struct edit *edits, size_t n);

/* Unified diff of the worktree against base ("diff --git a/F b/F" headers,
 * index lines; `git apply` and `git am` accept it).  Untracked files are
 * included as new files, ignored files are not.  "" when nothing changed. */
int tree_diff(const char *dir, const char *base, char **ret_diff);
/* `git diff --stat`-like summary; ret_paths (may be NULL) gets the changed
 * paths (NULL-terminated). */
int tree_diffstat(const char *dir, const char *base, char **ret_stat,
		  char ***ret_paths);
/* Applies a unified diff or a mail from `git format-patch` to the
 * worktree's files.  Nothing is changed unless the whole patch applies;
 * -EINVAL (unparsable) or -ENOEXEC (does not apply) with *ret_error. */
int tree_apply_patch(const char *dir, const char *patch, size_t len,
		     char **ret_error);

/* Commits, branches, notes, push. */
struct tree_signature {
	const char *name, *email;
	int64_t time; /* unix seconds; 0: now */
	int offset;   /* minutes east of UTC */
};
/* Commits the worktree's changes against base as one commit whose parent
 * is base, into t's repository (no branch is moved).  committer NULL uses
 * author.  The same content, message and signatures give the same id. */
int tree_commit(struct tree *t, const char *dir, const char *base,
		const char *message, const struct tree_signature *author,
		const struct tree_signature *committer,
		char ret_oid[TREE_OID_HEX]);
/* Creates refs/heads/NAME at oid.  Existing at the same oid: 0 (no-op);
 * at another oid: -EEXIST unless force. */
int tree_branch_create(struct tree *t, const char *name, const char *oid,
		       bool force);
/* Attaches text to oid under notes_ref (e.g. "refs/notes/kfix"),
 * replacing an older note; the same text again is a no-op. */
int tree_note_add(struct tree *t, const char *notes_ref, const char *oid,
		  const char *text, const struct tree_signature *sig);

/* The commit as a `git format-patch` mail ("From <sha> Mon Sep 17 ...",
 * From:, Date:, Subject: [PREFIX vN] ..., body, "---", diffstat, diff).
 * prefix NULL means "PATCH"; reroll 0 or 1 adds no version. */
int tree_format_patch(struct tree *t, const char *rev, const char *prefix,
		      unsigned reroll, char **ret_mail);

struct tree_push_auth {
	const char *username;	 /* ssh user / https user; NULL: from URL or "git" */
	const char *ssh_key;	 /* private key file (ssh://, user@host:path) */
	const char *ssh_pubkey;	 /* NULL: ssh_key + ".pub" when it exists */
	const char *known_hosts; /* required for ssh: unknown or mismatching
				    host keys are refused (-EPERM) */
	const char *token;	 /* https password/token */
};
/* Pushes refspecs (e.g. "refs/heads/kfix/1/v1:refs/heads/kfix/1/v1", or
 * with a leading '+' to force) to url: ssh://[user@]host[:port]/path,
 * https://host/path or file:///path (no auth needed).  Errors: -EPERM for
 * an unknown or mismatching ssh host key (or no known_hosts given),
 * -EACCES when the credentials are refused, -EREMOTEIO when the remote
 * rejects a ref (e.g. not a fast-forward), -ETIMEDOUT; tree_error() has
 * the details.  Pushing what is already there is a success. */
int tree_push(struct tree *t, const char *url, const char *const *refspecs,
	      const struct tree_push_auth *auth, uint64_t timeout_usec);

#endif
