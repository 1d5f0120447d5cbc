/* The publisher: delivers outbox entries through a transport chosen by
 * config.  Entries are recorded before the attempt and marked sent after,
 * and every entry carries a fixed idempotency key, so a crash between the
 * two re-delivers the same message (which receivers deduplicate), never a
 * different one and never nothing. */
#ifndef KFIX_OUTBOX_H
#define KFIX_OUTBOX_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "child.h"

struct config;
struct store;
struct store_outbox;
struct outbox_transport;

/* The [mail] keys the outbox reads; defaults are the schema's. */
struct outbox_conf {
	int64_t max_tries;
	const struct outbox_transport *transport; /* NULL: an unknown one */
	char *spool_dir;			  /* spool only */
	char *smtp_url, *smtp_user, *smtp_password; /* smtp only; NULL: unset */
};

/* Fails with the message outbox_new gives for a transport not set up. */
int outbox_conf_from_config(const struct config *cfg, struct outbox_conf *ret,
			    char **ret_error);
void outbox_conf_clear(struct outbox_conf *c);

/* A transport's answer: 0 delivered, -EAGAIN try again later, any other
 * negative errno a permanent failure (the entry is parked). */
struct outbox_transport {
	const char *name;
	int (*open)(const struct outbox_conf *c, void **ret_state, char **ret_error);
	int (*deliver)(void *state, const struct store_outbox *o, char **ret_error);
	void (*close)(void *state);
};

struct outbox;

int outbox_new(const struct config *cfg, struct store *store,
	       struct outbox **ret, char **ret_error);
/* After a reload: the outbox keeps no copy of the configuration. */
void outbox_set_config(struct outbox *o, const struct config *cfg);
void outbox_free(struct outbox *o);
/* Delivers what is due, at most max entries, each claimed by owner
 * (store_outbox_claim) first; *ret_sent counts deliveries. */
int outbox_run(struct outbox *o, const char *owner, int max, int *ret_sent);
/* In the daemon: when entries are due and no delivery process runs,
 * starts "self_exe --run-outbox", so that a slow SMTP server or git
 * remote never stalls the event loop (and the HTTP front door). */
int outbox_spawn(struct outbox *o, sd_event *event, const char *self_exe,
		 const char *config_path);
/* Whether a delivery process runs (its end calls the wake hook). */
bool outbox_busy(const struct outbox *o);
void outbox_set_wake(struct outbox *o, struct wake wake);

/* The spool transport's file name for a message key (without ".eml"):
 * distinct keys give distinct names, whatever they hold. */
void outbox_spool_name(const char *key, char *out, size_t n);

#endif
