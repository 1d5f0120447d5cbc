/* Webhook endpoints: POST /hooks/mail, /hooks/syzbot, /hooks/forge (and
 * /hooks/<type>/<name> to pick one [hook "name"] section).
 *
 * A delivery is authenticated with the hook's secret before its body is
 * parsed: kfix's own scheme (X-Kfix-Timestamp and X-Kfix-Signature:
 * sha256=HMAC(secret, "<timestamp>." body), timestamp within the replay
 * window), GitHub (X-Hub-Signature-256), Gitea/Forgejo (X-Gitea-Signature,
 * X-Forgejo-Signature) or GitLab (X-Gitlab-Token).  A valid delivery is
 * handed to the sink, which stores it and answers. */
#ifndef KFIX_HOOKS_WEBHOOK_H
#define KFIX_HOOKS_WEBHOOK_H

#include <stddef.h>

#include "common/macro.h"
#include "forge.h"
#include "http.h"
#include "mail/parse.h"
#include "syzbot.h"

#define WEBHOOK_ID_MAX 256

struct config;
struct metrics;

struct webhook_delivery {
	const char *hook;	 /* [hook "name"] */
	const char *type;	 /* "mail", "syzbot", "forge" */
	const char *provider;	 /* "kfix", "github", ... */
	const char *event;	 /* "mail", "bug", "push", "comment", "other" */
	const char *key;	 /* unique per delivery: duplicates share it */
	const char *body;
	size_t len;
	const char *extid;		 /* syzbot */
	const struct syzbot_bug *bug;	 /* syzbot */
	const struct forge_event *forge; /* forge */
	const char *message_id;		 /* mail (parsed later, off the loop) */
};

struct webhook_sink {
	/* Stores d and answers req, now or later after
	 * http_request_suspend(); d is valid only during the call. */
	int (*deliver)(void *userdata, const struct webhook_delivery *d,
		       struct http_request *req);
};

struct webhooks;

/* Reads the [hook "name"] sections and routes POST /hooks/ on srv. */
int webhooks_new(struct http_server *srv, const struct config *cfg,
		 struct metrics *metrics, const struct webhook_sink *sink,
		 void *userdata, struct webhooks **ret, char **ret_error);
/* Checks the [hook] sections (secrets readable, values valid). */
int webhooks_check(const struct config *cfg, char **ret_error);
/* Replaces the hooks by those of cfg (a reload); on failure the old ones
 * stay. */
int webhooks_reload(struct webhooks *w, const struct config *cfg, char **ret_error);
void webhooks_free(struct webhooks *w);
DEFINE_CLEANUP(struct webhooks, webhooks_free)
size_t webhooks_count(struct webhooks *w);

/* The Message-ID of a raw RFC 5322 message, without angle brackets;
 * -EBADMSG when the header block is malformed, -ENOENT without one. */
int webhook_mail_message_id(const char *msg, size_t len, char **ret);

#endif
