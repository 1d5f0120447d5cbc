/* kfixd's main loop: modules started in a fixed order on one sd-event
 * loop and stopped in reverse. */
#ifndef KFIX_DAEMON_H
#define KFIX_DAEMON_H

struct config;
struct daemon;

/* Blocks the signals the loop handles; call first thing, so a SIGTERM
 * that arrives during start-up waits for the loop instead of killing. */
void daemon_block_signals(void);
/* Reads the configuration as kfixd runs it: the file's syntax and keys,
 * then what only a module can judge (a build host).  On failure
 * *ret_error, when set, says where and why. */
/* The checks of kfixd --check-config beyond the file's syntax and types:
 * each problem (and warning) is a line on out, *ret_problems the number
 * of problems. */
int daemon_check_config(const struct config *cfg, const char *path, FILE *out,
			unsigned *ret_problems);
int daemon_load_config(const char *path, struct config **ret, char **ret_error);
int daemon_new(const char *config_path, const char *self_exe,
	       struct daemon **ret);
/* Runs until SIGTERM/SIGINT; returns 0 on a clean stop. */
int daemon_run(struct daemon *d);
void daemon_free(struct daemon *d);

#endif
