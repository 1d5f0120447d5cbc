/* A small client over libssh2: connect with a verified host key, run a
 * command on an exec channel with bounded output and a time limit.  Files
 * are copied as a command's stdin because the guest's dropbear has no
 * SFTP. */
#ifndef KFIX_REPRO_SSH_INTERNAL_H
#define KFIX_REPRO_SSH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"

struct ssh;

struct ssh_target {
	const char *host;
	int port;
	const char *user;
	const char *key;	 /* private key file; NULL: no key auth */
	const char *known_hosts; /* OpenSSH known_hosts, checked for host:port */
	bool pin_any_host;	 /* known_hosts pins a key whatever the host name */
	uint64_t timeout_usec;	 /* connect, handshake and each blocking step */
	/* > 0: give up (-ETIMEDOUT) when the server sends nothing this long
	 * after the TCP connect.  A port forwarded by qemu accepts at once
	 * while the guest is still booting, and the guest only sees that
	 * connection's SYN again when qemu retransmits it, seconds later:
	 * a fresh connection is quicker. */
	uint64_t banner_timeout_usec;
};

/* Errors: -ECONNREFUSED/-EHOSTUNREACH/-ETIMEDOUT (network), -EPROTO
 * (handshake), -EKEYREJECTED (host key unknown or different), -EACCES
 * (authentication).  *ret_error (when non-NULL) explains. */
int ssh_connect(const struct ssh_target *t, struct ssh **ret, char **ret_error);
void ssh_free(struct ssh *s);
DEFINE_CLEANUP(struct ssh, ssh_free);

struct ssh_exec_result {
	int exit_status;     /* -1 when unknown (connection lost) */
	bool lost;	     /* the connection dropped before the command ended */
	bool timed_out;
	char *output;	     /* stdout and stderr, NUL-terminated */
	size_t output_len;
};
void ssh_exec_result_free(struct ssh_exec_result *r);

/* Runs cmd (a remote shell sees it: quote every argument with
 * ssh_quote), feeding in/in_len as stdin. */
int ssh_exec(struct ssh *s, const char *cmd, const void *in, size_t in_len,
	     uint64_t timeout_usec, size_t output_max,
	     struct ssh_exec_result *ret);

/* A long command (a remote build): stdin streamed from a file, output
 * passed on as it arrives.  With hold_stdin the channel's stdin stays
 * open until the command ends, so that a watcher on the remote side can
 * stop the command as soon as the channel closes (time-out, kfix killed,
 * connection lost). */
struct ssh_stream_opts {
	int in_fd;		/* >= 0: sent as stdin; -1: none */
	bool hold_stdin;	/* no EOF on stdin while the command runs */
	int out_fd;		/* >= 0: stdout and stderr written here, not kept */
	void (*on_output)(void *userdata, const char *data, size_t len);
	void *userdata;
	uint64_t timeout_usec;	/* 0: none */
	size_t output_max;	/* kept in the result when out_fd < 0 */
};
int ssh_exec_stream(struct ssh *s, const char *cmd, const struct ssh_stream_opts *o,
		    struct ssh_exec_result *ret);

/* A command left running (a VM): its stdin stays open until
 * ssh_job_finish sends EOF. */
struct ssh_job;
int ssh_job_start(struct ssh *s, const char *cmd, struct ssh_job **ret);
/* True once the command has exited (non-blocking). */
bool ssh_job_exited(struct ssh_job *j);
/* Sends EOF on stdin, waits up to timeout for the exit, frees the job. */
int ssh_job_finish(struct ssh_job *j, uint64_t timeout_usec, int *ret_status);

/* 'arg' with embedded single quotes escaped for a POSIX shell. */
char *ssh_quote(const char *arg);

/* The shell text of a watcher for a remote script whose channel's stdin
 * is on fd 3 and which started a process whose pid is in $VAR: once the
 * channel ends (kfix stopped it, exited, was killed or lost the
 * connection), it signals that process and its process group, TERM and
 * after 10 s KILL, until both are gone.  Then, if the process was still
 * running when the channel ended, it runs the shell text 'then' (NULL:
 * nothing).  Ends in '&'; closes fds 3 and 9 (a lock) for itself. */
int ssh_watch_script(const char *var, const char *then, char **ret);

#endif
