/* The scheduler: turns bugs that need work into queued jobs. */
#ifndef KFIX_SCHED_H
#define KFIX_SCHED_H

struct config;
struct store;

int sched_run(struct config *cfg, struct store *store);

#endif
