/* Followed mailing-list archives ([archive "NAME"], public-inbox v2): the
 * scheduler queues one "archive-poll" job per archive every
 * poll-interval, never two at once; the job fetches the archive in its
 * own process (libgit2 blocks) and hands every new message to the same
 * intake as the mail webhook.  The archive's position is in the kv table
 * ("archive/NAME/position") and moves in the transaction that stores the
 * message's effects, so a kill loses nothing and repeats nothing. */
#ifndef KFIX_DAEMON_ARCHIVE_H
#define KFIX_DAEMON_ARCHIVE_H

#include <stdint.h>

struct config;
struct store;

/* Job kind "archive-poll" (job_kind_archive_poll): args {"archive": NAME}. */

/* Queues the polls that are due. */
int archive_schedule(const struct config *cfg, struct store *store);
/* When the next poll is due (seconds since the epoch); -ENOENT when no
 * archive is followed or every poll is pending. */
int archive_next_due(const struct config *cfg, struct store *store, int64_t *ret_sec);

#endif
