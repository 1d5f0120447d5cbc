/* Running a program with a time limit and a cap on captured output.
 * Arguments are passed as a vector: no shell ever sees them. */
#ifndef KFIX_PROC_H
#define KFIX_PROC_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct proc_opts {
	const char *cwd;
	char *const *env;	 /* NULL: inherit */
	const void *stdin_data;	 /* NULL: /dev/null */
	size_t stdin_len;
	uint64_t timeout_usec;	 /* 0: no limit */
	size_t output_max;	 /* captured stdout+stderr; 0: 1 MiB */
	int tee_fd;		 /* >= 0: also copy all output here */
	/* Called with each chunk of output as it arrives, so that a long
	 * job (a kernel build) can be followed while it runs. */
	void (*on_output)(void *userdata, const char *data, size_t len);
	void *userdata;
	bool discard_stderr;
	/* Set (by a signal handler) to stop: the child's group gets SIGTERM,
	 * then SIGKILL, and proc_run returns -ECANCELED.  Checked at least
	 * twice a second, so that a thread not given the signal sees it. */
	const volatile sig_atomic_t *cancel;
};

struct proc_result {
	int exit_code;	/* -1 when killed by a signal */
	int signal;	/* terminating signal, 0 if exited */
	bool timed_out;
	char *output;	/* NUL-terminated, at most output_max bytes */
	size_t output_len;
	bool output_truncated;
};

#define PROC_OPTS_DEFAULT ((struct proc_opts){ .tee_fd = -1 })

/* Runs argv[0] (searched in PATH) and waits.  The child gets its own
 * process group, which is killed as a whole on time-out and after exit so
 * nothing it started outlives it. */
int proc_run(char *const argv[], const struct proc_opts *opts,
	     struct proc_result *ret);
void proc_result_free(struct proc_result *r);

#endif
