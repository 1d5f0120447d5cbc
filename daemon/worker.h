/* Worker slots: leased jobs run as child processes (kfixd --run-job), so a
 * job that crashes or hangs is killed and recorded while the daemon lives
 * on. */
#ifndef KFIX_WORKER_H
#define KFIX_WORKER_H

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "child.h"

struct config;
struct store;
struct workers;

int workers_new(sd_event *event, struct config *cfg, struct store *store,
		const char *config_path, const char *self_exe,
		const char *owner, struct workers **ret);
void workers_set_config(struct workers *w, struct config *cfg);
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
