/* Answering forge reviews: when a new version of a patch is pushed after
 * review comments on a forge (intake_review_forge), each thread those
 * comments came from gets one comment linking the new branch, posted
 * through the forge's API (hooks/forge-api.h) by the outbox, once the
 * branch's push went out.  The hook's api-url and api-token say where
 * and as whom. */
#ifndef KFIX_DAEMON_FORGE_REPLY_H
#define KFIX_DAEMON_FORGE_REPLY_H

#include <stdint.h>

struct config;
struct store;
struct store_outbox;
struct store_patch;

/* Queues the answers for patch (version >= 2), pushed as branch at oid by
 * the outbox entry push_key; inside the caller's transaction. */
int forge_reply_queue(struct store *s, const struct store_patch *patch, const char *branch,
		      const char *oid, const char *push_key);
/* The outbox's delivery of a "forge" entry: 0 when posted, 1 when the
 * thread already holds it (an earlier try the forge took before a crash),
 * -EAGAIN to try again later (the push is not out yet, the forge is busy). */
int forge_reply_deliver(const struct config *cfg, struct store *s, const struct store_outbox *e,
			char **ret_error);

#endif
