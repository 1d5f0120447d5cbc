/* Following public-inbox archives (v2: epochs git/N.git, one message per
 * commit in the file "m") with libgit2: fetch, walk the commits that are
 * new since the stored position, hand each message to the parser. */
#ifndef KFIX_MAIL_INBOX_H
#define KFIX_MAIL_INBOX_H

#include <stddef.h>

#include "common/macro.h"

struct mail;
struct inbox;

/* m is NULL when the message does not parse (it is skipped, not fatal).
 * pos is the position just after this message ("EPOCH:COMMIT"), for a
 * caller that stores it together with what the message caused.  A
 * negative return stops the poll; the position then stays before this
 * message, so it is offered again next time. */
typedef int (*inbox_message_fn)(const struct mail *m, const char *raw, size_t len,
				const char *pos, void *userdata);

/* url: the inbox root ("https://lore.kernel.org/netdev" or a local
 * inbox folder); the epochs are url/git/N.git.  cache_dir holds the
 * mirrors (one bare repository per epoch), one folder per archive. */
int inbox_open(const char *url, const char *cache_dir, struct inbox **ret,
	       char **ret_error);
void inbox_free(struct inbox *ib);
DEFINE_CLEANUP(struct inbox, inbox_free)

/* Fetches and walks at most max new messages after pos ("EPOCH:COMMIT",
 * NULL or "" for the start of the archive).  *ret_pos gets the position to
 * store (the daemon keeps it, e.g. in its kv table) even on failure, so
 * what was handed over is not handed over twice. */
int inbox_poll(struct inbox *ib, const char *pos, int max, inbox_message_fn fn,
	       void *userdata, char **ret_pos, int *ret_count, char **ret_error);
/* The position just after the archive's newest message (its last epoch's
 * head), for following an archive from now on rather than from its first
 * message; only the last epoch is fetched. */
int inbox_head(struct inbox *ib, char **ret_pos, char **ret_error);

#endif
