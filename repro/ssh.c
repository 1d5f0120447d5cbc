#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/strutil.h"
#include "hostkey.h"
#include "ssh-internal.h"

struct ssh {
	int fd;
	LIBSSH2_SESSION *session;
	uint64_t timeout_usec;
};

struct ssh_job {
	struct ssh *ssh;
	LIBSSH2_CHANNEL *channel;
	bool exited;
};

static pthread_once_t ssh_once = PTHREAD_ONCE_INIT;

static void ssh_global_init(void)
{
	libssh2_init(0);
}

static void set_msg(char **ret_error, const struct ssh_target *t, const char *what)
{
	if (!ret_error)
		return;
	free(*ret_error);
	if (asprintf(ret_error, "%s@%s:%d: %s", t->user, t->host, t->port, what) < 0)
		*ret_error = NULL;
}

static int connect_with_timeout(int fd, const struct sockaddr *sa, socklen_t len,
				uint64_t timeout_usec)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t elen = sizeof(int);
	int err = 0, r;

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	r = poll(&p, 1, (int)(timeout_usec / 1000));
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return -errno;
	return -err;
}

static int tcp_connect(const char *host, int port, uint64_t timeout_usec, int *ret_fd)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *ai = NULL;
	char service[16];
	int r = -EHOSTUNREACH;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &ai) != 0)
		return -EHOSTUNREACH;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		/* Non-blocking only for the bounded connect; libssh2 then
		 * drives the socket in blocking mode with its own timeout. */
		_cleanup_close_ int fd = socket(a->ai_family,
						 a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0) {
			r = -errno;
			continue;
		}
		r = connect_with_timeout(fd, a->ai_addr, a->ai_addrlen, timeout_usec);
		if (r < 0)
			continue;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
			r = -errno;
			continue;
		}
		*ret_fd = TAKE_FD(fd);
		break;
	}
	freeaddrinfo(ai);
	return r;
}

/* Refuses any key that known_hosts does not list for this host (or, when
 * pinning, anywhere in the file): kfix never learns keys on first use. */
static int verify_hostkey(LIBSSH2_SESSION *s, const struct ssh_target *t, char **ret_error)
{
	const struct hostkey_check c = {
		.known_hosts = t->known_hosts,
		.host = t->host,
		.port = t->port,
		.pin_any_host = t->pin_any_host,
	};
	enum hostkey_verdict v;
	const char *key;
	size_t len = 0;
	int type, r;

	key = libssh2_session_hostkey(s, &len, &type);
	r = hostkey_verify(&c, key, len, &v);
	if (r < 0)
		return r;
	if (v == HOSTKEY_MATCH)
		return 0;
	if (ret_error) {
		free(*ret_error);
		*ret_error = NULL;
		(void)hostkey_message(&c, v, ret_error);
	}
	return v == HOSTKEY_FAILURE ? -EPROTO : -EKEYREJECTED;
}

int ssh_connect(const struct ssh_target *t, struct ssh **ret, char **ret_error)
{
	_cleanup_(ssh_freep) struct ssh *s = NULL;
	uint64_t timeout = t->timeout_usec ? t->timeout_usec : 30 * 1000000ULL;
	int r;

	pthread_once(&ssh_once, ssh_global_init);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->timeout_usec = timeout;
	r = tcp_connect(t->host, t->port, timeout, &s->fd);
	if (r < 0) {
		set_msg(ret_error, t, strerror(-r));
		return r;
	}
	if (t->banner_timeout_usec > 0) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };

		r = poll(&p, 1, (int)(t->banner_timeout_usec / 1000));
		if (r <= 0) {
			set_msg(ret_error, t, "no SSH banner");
			return r < 0 ? -errno : -ETIMEDOUT;
		}
	}
	s->session = libssh2_session_init();
	if (!s->session)
		return -ENOMEM;
	libssh2_session_set_timeout(s->session, (long)(timeout / 1000));
	if (libssh2_session_handshake(s->session, s->fd) != 0) {
		set_msg(ret_error, t, "SSH handshake failed");
		return -EPROTO;
	}
	r = verify_hostkey(s->session, t, ret_error);
	if (r < 0)
		return r;
	if (!t->key ||
	    libssh2_userauth_publickey_fromfile(s->session, t->user, NULL, t->key, NULL) != 0) {
		set_msg(ret_error, t, "authentication failed");
		return -EACCES;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

void ssh_free(struct ssh *s)
{
	if (!s)
		return;
	if (s->session) {
		libssh2_session_set_timeout(s->session, 2000);
		libssh2_session_disconnect(s->session, "bye");
		libssh2_session_free(s->session);
	}
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

void ssh_exec_result_free(struct ssh_exec_result *r)
{
	free(r->output);
	r->output = NULL;
}

static void channel_freep(LIBSSH2_CHANNEL **c)
{
	if (*c)
		libssh2_channel_free(*c);
}

static bool session_lost(struct ssh *s)
{
	int e = libssh2_session_last_errno(s->session);

	return e == LIBSSH2_ERROR_SOCKET_RECV || e == LIBSSH2_ERROR_SOCKET_SEND ||
	       e == LIBSSH2_ERROR_SOCKET_DISCONNECT || e == LIBSSH2_ERROR_CHANNEL_CLOSED;
}

static int write_all(LIBSSH2_CHANNEL *c, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = libssh2_channel_write(c, p, n);

		if (w < 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return libssh2_channel_send_eof(c) < 0 ? -EIO : 0;
}

int ssh_exec(struct ssh *s, const char *cmd, const void *in, size_t in_len,
	     uint64_t timeout_usec, size_t output_max, struct ssh_exec_result *ret)
{
	_cleanup_(channel_freep) LIBSSH2_CHANNEL *c = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(output_max ? output_max : 1024 * 1024);
	uint64_t deadline = timeout_usec ? clock_mono_usec() + timeout_usec : UINT64_MAX;
	struct ssh_exec_result res = { .exit_status = -1 };
	char chunk[16384];

	c = libssh2_channel_open_session(s->session);
	if (!c)
		return session_lost(s) ? -ECONNRESET : -EIO;
	libssh2_channel_handle_extended_data2(c, LIBSSH2_CHANNEL_EXTENDED_DATA_MERGE);
	if (libssh2_channel_exec(c, cmd) != 0)
		return -EIO;
	if (write_all(c, in, in ? in_len : 0) < 0)
		res.lost = true;
	/* Reads in short blocking slices so that the overall limit holds. */
	libssh2_session_set_timeout(s->session, 500);
	while (!res.lost) {
		ssize_t n = libssh2_channel_read(c, chunk, sizeof(chunk));

		if (n > 0) {
			buf_append_trunc(&out, chunk, (size_t)n);
			continue;
		}
		if (n == 0 && libssh2_channel_eof(c))
			break;
		if (n < 0 && n != LIBSSH2_ERROR_TIMEOUT && n != LIBSSH2_ERROR_EAGAIN) {
			res.lost = true;
			break;
		}
		if (clock_mono_usec() > deadline) {
			res.timed_out = true;
			break;
		}
	}
	if (!res.lost && !res.timed_out) {
		libssh2_channel_close(c);
		libssh2_channel_wait_closed(c);
		res.exit_status = libssh2_channel_get_exit_status(c);
	}
	libssh2_session_set_timeout(s->session, (long)(s->timeout_usec / 1000));
	if (!out.data && buf_puts(&out, "") < 0)
		return -ENOMEM;
	res.output = buf_steal(&out, &res.output_len);
	*ret = res;
	return 0;
}

static int fd_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Streams the file as the channel's stdin; false when the channel broke. */
static bool send_fd(LIBSSH2_CHANNEL *c, int fd, bool eof)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = libssh2_channel_write(c, chunk + off, (size_t)(n - off));

			if (w < 0)
				return false;
			off += w;
		}
	}
	return !eof || libssh2_channel_send_eof(c) >= 0;
}

int ssh_exec_stream(struct ssh *s, const char *cmd, const struct ssh_stream_opts *o,
		    struct ssh_exec_result *ret)
{
	_cleanup_(channel_freep) LIBSSH2_CHANNEL *c = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(o->output_max ? o->output_max : 1024 * 1024);
	uint64_t deadline = o->timeout_usec ? clock_mono_usec() + o->timeout_usec : UINT64_MAX;
	struct ssh_exec_result res = { .exit_status = -1 };
	char chunk[16384];
	int r;

	c = libssh2_channel_open_session(s->session);
	if (!c)
		return session_lost(s) ? -ECONNRESET : -EIO;
	libssh2_channel_handle_extended_data2(c, LIBSSH2_CHANNEL_EXTENDED_DATA_MERGE);
	if (libssh2_channel_exec(c, cmd) != 0)
		return session_lost(s) ? -ECONNRESET : -EIO;
	if (o->in_fd >= 0 && !send_fd(c, o->in_fd, true))
		res.lost = true;
	else if (o->in_fd < 0 && !o->hold_stdin && libssh2_channel_send_eof(c) < 0)
		res.lost = true;
	libssh2_session_set_timeout(s->session, 500);
	while (!res.lost) {
		ssize_t n = libssh2_channel_read(c, chunk, sizeof(chunk));

		if (n > 0) {
			if (o->on_output)
				o->on_output(o->userdata, chunk, (size_t)n);
			if (o->out_fd >= 0) {
				r = fd_write_all(o->out_fd, chunk, (size_t)n);
				if (r < 0) {
					libssh2_session_set_timeout(s->session,
								    (long)(s->timeout_usec / 1000));
					return r;
				}
			} else
				buf_append_trunc(&out, chunk, (size_t)n);
			continue;
		}
		if (n == 0 && libssh2_channel_eof(c))
			break;
		if (n < 0 && n != LIBSSH2_ERROR_TIMEOUT && n != LIBSSH2_ERROR_EAGAIN) {
			res.lost = true;
			break;
		}
		if (clock_mono_usec() > deadline) {
			res.timed_out = true;
			break;
		}
	}
	if (!res.lost) {
		/* On a time-out, closing the channel closes the command's
		 * stdin, which its watcher takes as the order to stop. */
		libssh2_session_set_timeout(s->session, 5000);
		libssh2_channel_close(c);
		if (!res.timed_out) {
			libssh2_channel_wait_closed(c);
			res.exit_status = libssh2_channel_get_exit_status(c);
		}
	}
	libssh2_session_set_timeout(s->session, (long)(s->timeout_usec / 1000));
	if (!out.data && buf_puts(&out, "") < 0)
		return -ENOMEM;
	res.output = buf_steal(&out, &res.output_len);
	*ret = res;
	return 0;
}

int ssh_job_start(struct ssh *s, const char *cmd, struct ssh_job **ret)
{
	_cleanup_(channel_freep) LIBSSH2_CHANNEL *c = NULL;
	struct ssh_job *j;

	c = libssh2_channel_open_session(s->session);
	if (!c)
		return -EIO;
	libssh2_channel_handle_extended_data2(c, LIBSSH2_CHANNEL_EXTENDED_DATA_MERGE);
	if (libssh2_channel_exec(c, cmd) != 0)
		return -EIO;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->ssh = s;
	j->channel = TAKE_PTR(c);
	*ret = j;
	return 0;
}

bool ssh_job_exited(struct ssh_job *j)
{
	char chunk[4096];
	ssize_t n;

	if (j->exited)
		return true;
	/* The job's output is not kept (the VM console goes to a file);
	 * draining it keeps the channel window open. */
	libssh2_session_set_blocking(j->ssh->session, 0);
	do
		n = libssh2_channel_read(j->channel, chunk, sizeof(chunk));
	while (n > 0);
	if (libssh2_channel_eof(j->channel) || (n < 0 && n != LIBSSH2_ERROR_EAGAIN))
		j->exited = true;
	libssh2_session_set_blocking(j->ssh->session, 1);
	return j->exited;
}

int ssh_job_finish(struct ssh_job *j, uint64_t timeout_usec, int *ret_status)
{
	uint64_t deadline = clock_mono_usec() + timeout_usec;
	int status = -1;

	if (!j)
		return 0;
	libssh2_channel_send_eof(j->channel);
	while (!ssh_job_exited(j) && clock_mono_usec() < deadline)
		usleep(50 * 1000);
	if (j->exited) {
		libssh2_session_set_timeout(j->ssh->session, 2000);
		libssh2_channel_close(j->channel);
		libssh2_channel_wait_closed(j->channel);
		status = libssh2_channel_get_exit_status(j->channel);
		libssh2_session_set_timeout(j->ssh->session, (long)(j->ssh->timeout_usec / 1000));
	}
	libssh2_channel_free(j->channel);
	free(j);
	if (ret_status)
		*ret_status = status;
	return status >= 0 ? 0 : -ETIMEDOUT;
}

char *ssh_quote(const char *arg)
{
	_cleanup_buf_ struct buf b = BUF_INIT(strlen(arg) * 4 + 3);

	if (buf_puts(&b, "'") < 0)
		return NULL;
	for (const char *p = arg; *p; p++)
		if ((*p == '\'' ? buf_puts(&b, "'\\''") : buf_append(&b, p, 1)) < 0)
			return NULL;
	if (buf_puts(&b, "'") < 0)
		return NULL;
	return buf_steal(&b, NULL);
}

/* Signalling the process alone is not enough: a signal can reach it
 * before it made its group (setsid) or, in coreutils 9.1's timeout, while
 * it forks, when it exits and leaves its child running; the group alone
 * misses a process that has not made its group yet.  Hence both, again
 * and again until neither is left. */
int ssh_watch_script(const char *var, const char *then, char **ret)
{
	return asprintf(ret,
			"( cat <&3; exec 3<&-; r=; kill -s 0 $%1$s && r=1; s=TERM; i=0; "
			"while kill -s 0 $%1$s || kill -s 0 -- -$%1$s; do "
			"[ $i -lt 10 ] || s=KILL; kill -s $s $%1$s; kill -s $s -- -$%1$s; "
			"i=$((i + 1)); sleep 1; done; [ -z \"$r\" ] || { %2$s; } "
			") >/dev/null 2>&1 </dev/null 9>&- & ",
			var, then ? then : ":") < 0
		       ? -ENOMEM
		       : 0;
}
