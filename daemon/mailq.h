/* Webhook mail, processed outside the event loop.
 *
 * The front stores a delivered mail as a "pending" inbox row after cheap
 * checks only (signature, size, header and MIME part counts).  A helper
 * process, "kfixd --run-mailq", parses each pending mail with GMime,
 * checks its DKIM signature (which may ask DNS) and applies it, with a
 * memory and a time limit of its own: neither a hostile mail nor a slow
 * name server can stall the loop or grow the daemon.  The daemon holds
 * the HTTP request until its row is processed, so that the sender still
 * learns what became of the mail, and answers 202 when that takes
 * longer than MAILQ_WAIT_USEC.  A row is claimed ("parsing") before it is
 * parsed: a mail that kills its parser twice is given up ("failed"),
 * never retried for ever, and a restart picks up what was pending. */
#ifndef KFIX_DAEMON_MAILQ_H
#define KFIX_DAEMON_MAILQ_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/macro.h"

#define MAILQ_WAIT_USEC (15ULL * 1000000)
/* requests held at once; more are answered 202 at once */
#define MAILQ_WAITERS_MAX 256

struct config;
struct http_request;
struct store;
struct mailq;

/* [mail] keys the queue reads; defaults are the schema's. */
struct mailq_conf {
	uint64_t parse_timeout_usec;	/* the helper's time limit */
	uint64_t parse_memory_max;	/* memory one mail's parse may take */
};

int mailq_conf_from_config(const struct config *cfg, struct mailq_conf *ret);

int mailq_new(sd_event *event, struct store *store, const struct config *cfg,
	      const char *self_exe, const char *config_path, struct mailq **ret);
/* Answers every held request (202) and stops the helper. */
void mailq_free(struct mailq *ib);
DEFINE_CLEANUP(struct mailq, mailq_free)
/* A reload: the next helper uses cfg's limits; untouched on failure. */
int mailq_set_config(struct mailq *ib, const struct config *cfg);
/* Holds req until the row id is processed, then answers it with the
 * row's state (202 "pending" when too many wait); the caller has
 * suspended req.  Always answers it, now or later. */
int mailq_wait(struct mailq *ib, struct http_request *req, int64_t id);
/* Starts the helper when mail is pending and none runs. */
int mailq_spawn(struct mailq *ib);

/* The body of "kfixd --run-mailq": processes the pending mail and
 * returns the process's exit code. */
int mailq_run_child(const char *config_path);

#endif
