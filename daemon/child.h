/* What every kfixd child process (a job, an outbox run) starts with: its
 * own copy of the configuration and its own store connection, since
 * SQLite connections and the parent's objects do not cross a fork+exec. */
#ifndef KFIX_CHILD_H
#define KFIX_CHILD_H

struct config;
struct store;

/* Loads config_path and opens the store of its state-dir; logs why not. */
int child_open(const char *config_path, struct config **ret_cfg,
	       struct store **ret_store);

/* The body of "kfixd --run-outbox": delivers what is due in the outbox
 * and returns the process exit code. */
int outbox_run_child(const char *config_path);

#endif
