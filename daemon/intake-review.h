/* Review replies on kfix's patch threads: a reply whose In-Reply-To or
 * References name one of kfix's patch mails (moderation or upstream) is
 * kept against that patch with the trailers its sender gave and the
 * comments it makes (with the quoted lines they answer).  The trailers go
 * onto the patch's later mails; comments from a sender who may ask for a
 * new version wait for the scheduler's iterate job. */
#ifndef KFIX_DAEMON_INTAKE_REVIEW_H
#define KFIX_DAEMON_INTAKE_REVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/macro.h"

struct config;
struct mail;
struct store;

/* Comments longer than this are cut at a line end (and say so). */
#define REVIEW_COMMENTS_MAX (16u * 1024)
/* Trailers kept from one reply. */
#define REVIEW_TRAILERS_MAX 8
/* Replies kept per patch version; later ones are recorded as ignored. */
#define REVIEWS_PER_PATCH_MAX 32

struct intake_review;

/* NULL in *ret when m is no reply or carries neither trailers nor
 * comments.  has_command: the mail also carries a #kfix command (its
 * text then accompanies the command and asks for no new version). */
int intake_review_new(const struct mail *m, bool has_command, struct intake_review **ret);
void intake_review_free(struct intake_review *r);
DEFINE_CLEANUP(struct intake_review, intake_review_free)

/* Records the reply against the kfix patch its thread names.  *ret_bug:
 * the patch's bug, 0 when the thread names no kfix patch; *ret_reason: a
 * static text when the reply was not kept. */
int intake_review_apply(struct store *s, const struct config *cfg,
			const struct intake_review *r, int64_t *ret_bug, const char **ret_reason);

/* A review comment on a forge, on version `version` of the bug's patch
 * (branch kfix/BUG/vN), from a user the hook allows: kept like a mail
 * reply that asks for a new version.  key is unique per comment (a
 * replayed delivery counts once); thread says where to answer
 * ({"hook", "provider", "repo", "number", "project"}).  *ret_reason: a static
 * text when the comment was not kept. */
struct intake_forge_review {
	int64_t bug;
	int version;
	const char *key, *author, *comments;
	const json_t *thread;
};
int intake_review_forge(struct store *s, const struct intake_forge_review *r,
			const char **ret_reason);

/* The trailers collected on the bug's versions up to version, as a JSON
 * array of {"key", "value"}, each pair once. */
int intake_review_trailers(struct store *s, int64_t bug_id, int version, json_t **ret);

#endif
