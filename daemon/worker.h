/* Worker slots: leased jobs run as child processes (kfixd --run-job), so a
 * job that crashes or hangs is killed and recorded while the daemon lives
 * on. */
#ifndef KFIX_WORKER_H
#define KFIX_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "child.h"

struct config;
struct store;
struct workers;

/* [kfix] keys the worker slots read; defaults are the schema's. */
struct worker_conf {
	int workers;		 /* job slots */
	uint64_t lease_usec;	 /* a job's lease, renewed while it runs */
	uint64_t job_timeout_usec;
	uint64_t retry_delay_usec; /* after a job process died */
};

int worker_conf_from_config(const struct config *cfg, struct worker_conf *ret);

int workers_new(sd_event *event, const struct config *cfg, struct store *store,
		const char *config_path, const char *self_exe,
		const char *owner, struct workers **ret);
/* A reload: later leases and jobs use cfg's values; untouched on failure. */
int workers_set_config(struct workers *w, const struct config *cfg);
/* Called when a job process ends. */
void workers_set_wake(struct workers *w, struct wake wake);
/* Leases runnable jobs until every slot is busy. */
int workers_fill(struct workers *w);
int workers_running(const struct workers *w);
/* Every configured slot runs a job: a due job waits for one to end. */
bool workers_full(const struct workers *w);
/* Kills running jobs and gives their leases back for the next start. */
void workers_free(struct workers *w);

#endif
