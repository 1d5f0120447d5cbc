/* kfixd's main loop: modules started in a fixed order on one sd-event
 * loop and stopped in reverse. */
#ifndef KFIX_DAEMON_H
#define KFIX_DAEMON_H

struct daemon;

int daemon_new(const char *config_path, const char *self_exe,
	       struct daemon **ret);
/* Runs until SIGTERM/SIGINT; returns 0 on a clean stop. */
int daemon_run(struct daemon *d);
void daemon_free(struct daemon *d);

#endif
