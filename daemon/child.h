/* What every kfixd child process (a job, an outbox run) starts with: its
 * own copy of the configuration and its own store connection, since
 * SQLite connections and the parent's objects do not cross a fork+exec. */
#ifndef KFIX_CHILD_H
#define KFIX_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

struct config;
struct store;

/* A helper process of the daemon: "self_exe --config C <flag>", watched
 * by the event loop. */
struct child {
	pid_t pid; /* 0 when none runs */
	sd_event_source *src;
};

/* Asks the daemon to look at the store again soon: a child that ended
 * frees a slot, which no write to the store announces. */
struct wake {
	void (*fn)(void *userdata);
	void *userdata;
};

static inline void wake_call(const struct wake *w)
{
	if (w->fn)
		w->fn(w->userdata);
}

/* Starts one unless it runs; on_exit is called from the loop when it
 * exits, and calls child_exited(). */
int child_spawn(struct child *c, sd_event *event, const char *self_exe,
		const char *config_path, const char *flag,
		sd_event_child_handler_t on_exit, void *userdata);
void child_exited(struct child *c);
/* Gives a running one wait_ms to finish what it does, then kills it. */
void child_stop(struct child *c, unsigned wait_ms);
/* In the helper: dies with the daemon; false when the daemon is gone. */
bool child_bind_to_parent(void);
/* The name a daemon's leases and claims go by: "HOST:PID". */
void child_owner_name(char *buf, size_t n, pid_t pid);

/* Loads config_path and opens the store of its state-dir; logs why not. */
int child_open(const char *config_path, struct config **ret_cfg,
	       struct store **ret_store);

/* The body of "kfixd --run-outbox": delivers what is due in the outbox
 * and returns the process exit code. */
int outbox_run_child(const char *config_path);

#endif
