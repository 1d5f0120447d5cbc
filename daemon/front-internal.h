/* Shared by front.c, intake.c and api.c only. */
#ifndef KFIX_DAEMON_FRONT_INTERNAL_H
#define KFIX_DAEMON_FRONT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "hooks/feed.h"
#include "hooks/http.h"
#include "hooks/metrics.h"
#include "hooks/webhook.h"

struct intake_item;

struct front {
	sd_event *event;
	const struct config *cfg;
	struct store *store;
	struct metrics *metrics;
	struct http_server *http;
	struct webhooks *hooks;
	struct feeds *feeds;
	struct mailq *mailq; /* webhook mail, parsed off the loop */
	char *state_dir;
	int n_fds; /* sockets from systemd: the listeners are not ours to change */
	/* deliveries waiting for the next group commit */
	sd_event_source *flush;
	struct intake_item *pending, **pending_tail;
	size_t n_pending;
	uint64_t commit_delay; /* usec */
	char ui_key[65];       /* signs the dashboard's sessions, drawn at start */
};

int intake_setup(struct front *f, char **ret_error);
void intake_free(struct front *f);
int api_setup(struct front *f);
int dashboard_setup(struct front *f);

#endif
