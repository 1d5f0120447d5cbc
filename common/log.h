/* Logging to the journal (with structured KFIX_* fields) or to stderr.
 *
 * Each job runs in its own process, so the bug/job context is process
 * state set once with log_set_context(); the daemon, which speaks about
 * many jobs, passes the context per call with log_job(). */
#ifndef KFIX_LOG_H
#define KFIX_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

enum log_target {
	LOG_TARGET_AUTO,    /* journal when stderr is connected to it */
	LOG_TARGET_STDERR,
	LOG_TARGET_JOURNAL,
};

void log_setup(const char *ident, enum log_target target);
void log_set_level(int prio);
int log_get_level(void);
/* Accepts syslog names ("err", "warning", "info", "debug", ...) or 0-7. */
int log_parse_level(const char *s, int *ret_prio);
void log_set_context(const char *bug, const char *job);

void log_internal(int prio, const char *bug, const char *job, const char *file,
		  int line, const char *func, const char *fmt, ...)
	_printf_(7, 8);

#define log_full(prio, ...)                                                    \
	log_internal(prio, NULL, NULL, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/* bug and job are ids as strings (NULL when not applicable). */
#define log_job(prio, bug, job, ...)                                           \
	log_internal(prio, bug, job, __FILE__, __LINE__, __func__, __VA_ARGS__)

#endif
