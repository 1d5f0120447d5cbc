/* Search/replace edits, as the model writes them:
 *   [ { "file": "net/core/sock.c", "before": "exact old text",
 *       "after": "new text", "why": "..." } ]
 * applied to files of a base tree; the unified diff is produced by
 * libgit2, never written by the model. */
#ifndef KFIX_AGENT_EDITS_H
#define KFIX_AGENT_EDITS_H

#include <jansson.h>
#include <stddef.h>

/* Each "before" must occur exactly once in its file (after the earlier
 * edits of the same file).  Returns 0 and a git-style diff, or a negative
 * errno and a message for the model (-EINVAL: a bad edit). */
int edits_apply(const char *src_dir, const json_t *edits, char **ret_diff,
		char **ret_error);

/* The same over any reader of base files (e.g. blobs at a commit). */
typedef int (*edits_read_fn)(void *ud, const char *path, char **ret, size_t *ret_len);
int edits_apply_fn(edits_read_fn rd, void *ud, const json_t *edits, char **ret_diff,
		   char **ret_error);

/* A git-style diff of one file from two versions (libgit2). */
int edits_diff_buffers(const char *path, const char *old, const char *new,
		       char **ret_diff);

#endif
