/* What kfix does with one mail, whether it came through the mail webhook
 * or from a followed public-inbox archive: a syzbot report becomes a bug
 * (its Message-ID kept to thread under it), a syzbot "#syz test" result
 * becomes evidence on kfix's patch, a #kfix command from an allowed sender
 * becomes a "request.CMD" event (others get one polite refusal), and a
 * patch by someone else that names a known syzbot bug becomes an
 * "archive.other-patch" event on it. */
#ifndef KFIX_DAEMON_INTAKE_MAIL_H
#define KFIX_DAEMON_INTAKE_MAIL_H

#include <stdbool.h>

#include "common/macro.h"

struct config;
struct mail;
struct store;
struct store_inbox;

struct intake_mail;

/* Copies out of m what kfix acts on (m may be freed afterwards). */
int intake_mail_new(const struct mail *m, struct intake_mail **ret);
void intake_mail_free(struct intake_mail *im);
DEFINE_CLEANUP(struct intake_mail, intake_mail_free)

/* false when the mail can only be ignored (nothing of it is for kfix). */
bool intake_mail_wanted(const struct intake_mail *im);

/* Applies the mail stored as inbox row in (just added: in->id, key,
 * hook and raw payload set) and records the row's outcome, inside the
 * caller's transaction. */
int intake_mail_apply(struct store *s, const struct config *cfg,
		      const struct intake_mail *im, const struct store_inbox *in);

#endif
