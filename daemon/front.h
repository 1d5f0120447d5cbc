/* kfixd's front door: the HTTP server (webhooks, REST API, health and
 * metrics) and the feed pollers, wired to the store.  hooks/ provides the
 * protocol parts; this is where they meet daemon/store.h. */
#ifndef KFIX_DAEMON_FRONT_H
#define KFIX_DAEMON_FRONT_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/macro.h"

#include "hooks/http.h"

struct config;
struct store;
struct front;

/* The [http] keys the front reads at start; on reload only listen and
 * the tokens take effect. */
struct front_conf {
	char **listen;
	struct http_limits limits;
	uint64_t max_forge_body;
	char *api_token, *admin_token; /* NULL: unset */
	char *tls_cert, *tls_key;      /* NULL: unset */
};

int front_conf_from_config(const struct config *cfg, struct front_conf *ret);
/* Frees the strings, wiping the tokens. */
void front_conf_clear(struct front_conf *c);

/* Serves the n_fds sockets passed by systemd (from SD_LISTEN_FDS_START)
 * or else the [http] listen addresses; starts the [feed] pollers.  Mail
 * delivered by webhook is processed by "self_exe --config config_path
 * --run-inbox" (see inbox.h). */
int front_new(sd_event *event, const struct config *cfg, struct store *store,
	      int n_fds, const char *self_exe, const char *config_path,
	      struct front **ret);
void front_free(struct front *f);
/* Per-request lookups (allow-users) use cfg from now on. */
void front_set_config(struct front *f, const struct config *cfg);
/* A reload: the [http] listen addresses (unless systemd passed the
 * sockets), the API tokens, the [hook] sections and the [feed] sections
 * of cfg take effect; listener limits and TLS wait for a restart.  On
 * failure (logged) the running settings stay and cfg is not used. */
int front_reload(struct front *f, const struct config *cfg);
/* The HTTP front is being served (see http_server_alive()). */
bool front_alive(const struct front *f);
DEFINE_CLEANUP(struct front, front_free)

#endif
