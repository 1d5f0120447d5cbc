/* Who really sent a mail.  A From: line is what the sender typed: a
 * #kfix command or a syzbot report acts only when the mail is
 * authenticated for its From: domain, by a DKIM signature kfix verifies
 * itself (libopendkim) or by an Authentication-Results header that a
 * configured, trusted MTA added. */
#ifndef KFIX_MAIL_AUTH_H
#define KFIX_MAIL_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

/* Where syzbot sends from (syzbot@ and syzbot+EXTID@). */
#define SYZBOT_DOMAIN "syzkaller.appspotmail.com"

struct config;
struct mail_auth;

/* Ways a mail can be authenticated; a tree's command-auth lists those it
 * accepts. */
enum {
	MAIL_AUTH_DKIM = 1 << 0,	/* a DKIM signature verified by kfix */
	MAIL_AUTH_AUTHRES = 1 << 1,	/* dkim=pass from [mail] trusted-authserv-id */
	MAIL_AUTH_NONE = 1 << 2,	/* no check at all: for trusted transports only */
};

struct mail_auth_opts {
	/* DKIM keys from a file of "selector._domainkey.domain TXT-value"
	 * lines instead of DNS ([mail] dkim-keys; tests, offline setups) */
	const char *key_file;
	/* the authserv-id of the MTA whose Authentication-Results count */
	const char *authserv_id;
};

/* Reads [mail] dkim-keys and trusted-authserv-id (strings owned by cfg). */
void mail_auth_opts_from_config(const struct config *cfg, struct mail_auth_opts *ret);

/* "dkim authres none" as configured; -EINVAL for another word. */
int mail_auth_methods_parse(const char *list, unsigned *ret);

/* Verifies raw (a whole RFC 5322 message): its DKIM signatures, its
 * trusted Authentication-Results, its From: and Sender:. */
int mail_auth_check(const char *raw, size_t len, const struct mail_auth_opts *o,
		    struct mail_auth **ret);
void mail_auth_free(struct mail_auth *a);
DEFINE_CLEANUP(struct mail_auth, mail_auth_free);

/* Whether the mail's single From: mailbox is authenticated by one of
 * methods: a verified signature or trusted result for its domain or a
 * parent of it (DMARC's relaxed alignment).  A mail with several From:
 * mailboxes, or a Sender: other than From:, never is.  *ret_reason says
 * why not (static text). */
bool mail_auth_from_ok(const struct mail_auth *a, unsigned methods, const char **ret_reason);
/* s with CRLF line ends (bare LF made CRLF), as DKIM hashes a message;
 * NUL-terminated, NULL on ENOMEM. */
char *mail_auth_crlf(const char *s, size_t len, size_t *ret_len);
/* The From: domain (lower case) and what vouched for it, for events. */
const char *mail_auth_from_domain(const struct mail_auth *a);
const char *mail_auth_summary(const struct mail_auth *a);

#endif
