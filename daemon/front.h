/* kfixd's front door: the HTTP server (webhooks, REST API, health and
 * metrics) and the feed pollers, wired to the store.  hooks/ provides the
 * protocol parts; this is where they meet daemon/store.h. */
#ifndef KFIX_DAEMON_FRONT_H
#define KFIX_DAEMON_FRONT_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/macro.h"

struct config;
struct store;
struct front;

/* Serves the n_fds sockets passed by systemd (from SD_LISTEN_FDS_START)
 * or else the [http] listen addresses; starts the [feed] pollers. */
int front_new(sd_event *event, const struct config *cfg, struct store *store,
	      int n_fds, struct front **ret);
void front_free(struct front *f);
/* After a reload: listeners, hooks and feeds keep their settings until a
 * restart; per-request lookups (allow-users) use the new config. */
void front_set_config(struct front *f, const struct config *cfg);
DEFINE_CLEANUP(struct front, front_free)

#endif
