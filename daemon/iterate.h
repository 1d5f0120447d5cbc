/* New versions of a published patch: the "iterate" job is the repair job
 * run with the earlier version and the reviewers' comments in the
 * model's prompts (prompts/iterate.txt).  A validated result becomes the
 * bug's next version (kfix/<bug>/v<N+1>, the older branches untouched),
 * whose mails say what changed since the version before; a result that
 * does not validate leaves the bug where it was, with its patch. */
#ifndef KFIX_DAEMON_ITERATE_H
#define KFIX_DAEMON_ITERATE_H

#include <stdint.h>

#include "common/macro.h"

struct job_ctx;
struct llm;
struct store;

/* Comments given to one job, at most this much (older ones first). */
#define ITERATE_COMMENTS_MAX (48u * 1024)

struct iterate {
	int64_t previous;	/* the patch the new version replaces */
	int previous_version;
	char *previous_diff;
	char *return_state;	/* iterate_return_state() when the job started */
	char *comments;		/* the reviewers' comments, "(none)" if none */
	char *reviewers;	/* "A <a@x>, B <b@y>", or the requester */
	char *prompt;		/* prompts/iterate.txt rendered */
};

/* Queues an iterate job for the bug's newest patch, in the caller's
 * transaction: the bug moves to repairing, the comments waiting on the
 * bug go to the job.  reason: "review" or "request" (by: who asked).
 * -EBUSY when a job is already working on the bug, -ENOENT when it has
 * no published patch. */
int iterate_queue(struct store *s, int64_t bug, const char *reason, const char *by,
		  int priority, int max_attempts);

/* Loads what the job needs (its args, the earlier version, its
 * comments) and renders the prompt.  *ret is set on failure too (for
 * return_state); iterate_clear() it in any case. */
int iterate_load(struct job_ctx *ctx, const char *prompts_dir, struct iterate *ret);
void iterate_clear(struct iterate *it);

/* Where the bug goes when no new version comes of the job: "sent" when a
 * version went upstream and none is waiting for approval, else
 * "awaiting-approval" (approvals may arrive while the job runs). */
const char *iterate_return_state(struct store *s, int64_t bug);

/* "Changes since": lines "- ..." written by the model from both
 * versions and the comments (prompts/changes.txt); when the model gives
 * none, lines derived from who asked for the new version. */
int iterate_changes(struct llm *llm, const struct iterate *it, const char *prompts_dir,
		    const char *diff, char **ret);

#endif
