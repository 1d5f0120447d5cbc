/* Publishing a validated patch: a commit on the base as branch
 * kfix/<bug>/v<N> with the explanation as a git note, pushed to the tree's
 * remote, and patch mail -- first to the moderation address, then, once a
 * moderator approves, to the maintainers with the moderator's
 * Signed-off-by.  Pushes and mail go through the outbox. */
#ifndef KFIX_PUBLISH_H
#define KFIX_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

struct job_ctx;
struct store_outbox;
struct config;

/* Job kind "publish": args {"patch": ID, "stage": "moderation"|"upstream",
 * "by": "Name <addr>" (upstream only)}. */
int job_publish_run(struct job_ctx *ctx);

struct store;
/* Queues a publish job for patch: stage "moderation" or "upstream" (by:
 * the approver, "Name <addr>", who signs off). */
int publish_queue(struct store *s, int64_t patch, const char *stage,
		  const char *by);

/* A moderator's decision, the one path of the API, the dashboard and
 * kfixctl: state "approved" (by, "Name <addr>", signs off and the patch
 * is queued for upstream) or "rejected", in one transaction.  -EINVAL
 * when an approval lacks a "Name <addr>", -ENOENT for no such patch,
 * -EPERM when it is not awaiting approval, else the store's error. */
bool publish_approver_valid(const char *by);
int publish_decide(struct store *s, int64_t patch, const char *state, const char *by,
		   const char *reason);

/* Outbox transport for kind "push": payload {"tree", "url", "refspecs"}. */
int publish_push_deliver(const struct config *cfg, const struct store_outbox *o,
			 char **ret_error);

/* Splits a commit message into subject, body and trailers (the last
 * paragraph when every line of it is "Key: value").  Returned strings
 * point into the caller's copy, which the function modifies. */
struct publish_msg {
	char *subject, *body;
	struct { char *key, *value; } trailer[32];
	unsigned n_trailers;
};
int publish_split_message(char *msg, struct publish_msg *ret);

#endif
