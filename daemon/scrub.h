/* Scrubbing what leaves kfix for strangers to read (a bundle attached to
 * a bug report about kfix): secrets and personal data are replaced before
 * anything is written.
 *
 * Removed: the literal values of the secrets kfix knows (its config's
 * secret keys), credentials in URLs, bearer and basic credentials,
 * "key = value" pairs whose key names a secret, the shapes of well-known
 * token formats, PEM private keys, and e-mail addresses.  An address is
 * replaced by the same placeholder each time it occurs, so a reader can
 * still tell two people apart. */
#ifndef KFIX_DAEMON_SCRUB_H
#define KFIX_DAEMON_SCRUB_H

#include <jansson.h>
#include <stddef.h>

#include "common/macro.h"

/* Known secrets shorter than this are not searched for literally: they
 * would cut ordinary words, and the patterns still apply. */
#define SCRUB_SECRET_MIN 6
#define SCRUB_SECRETS_MAX 256
#define SCRUB_ADDRESSES_MAX 4096
#define SCRUB_TEXT_MAX (64u * 1024 * 1024)

struct scrub;

/* secrets: NULL-terminated, may be NULL; copied. */
int scrub_new(char *const *secrets, struct scrub **ret);
void scrub_free(struct scrub *s);
DEFINE_CLEANUP(struct scrub, scrub_free);

/* A scrubbed copy of text (NUL-terminated). */
int scrub_text(struct scrub *s, const char *text, char **ret);
/* Scrubs every string of j, object keys included, in place. */
int scrub_json(struct scrub *s, json_t *j);
/* How many replacements were made so far. */
size_t scrub_count(const struct scrub *s);

#endif
