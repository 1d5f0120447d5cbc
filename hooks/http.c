#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "auth.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/strutil.h"
#include "http.h"
#include "metrics.h"

#define HTTP_MAX_ROUTES 64
#define HTTP_MAX_LISTENERS 16
/* MHD runs at least this often; the liveness check allows ten ticks. */
#define HTTP_TICK_MS 500
#define HTTP_ALIVE_USEC (10ULL * HTTP_TICK_MS * 1000)

struct route {
	char *method, *path;
	bool prefix;
	enum http_scope scope;
	http_handler_fn fn;
	void *userdata;
};

struct listener {
	struct http_server *srv;
	struct MHD_Daemon *mhd;
	int fd;
	char *address; /* as configured; NULL for a socket from systemd */
	bool closing;  /* no longer listening; open connections finish */
	sd_event_source *io, *timer, *kick;
	uint64_t last_run; /* CLOCK_MONOTONIC usec of the last MHD_run */
	bool idle;	   /* no connection: only the listening socket wakes it */
};

struct http_server {
	sd_event *event;
	struct http_limits limits;
	struct metrics *metrics;
	char *read_token, *admin_token;
	uint64_t token_generation; /* bumped when a token changes */
	char *tls_cert, *tls_key;
	struct route routes[HTTP_MAX_ROUTES];
	size_t n_routes;
	struct listener *listeners[HTTP_MAX_LISTENERS];
	size_t n_listeners;
	struct http_request *suspended; /* list, resumed with 503 on free */
	uint64_t buffered;		/* body bytes not yet handed to a handler */
	struct { char *prefix; uint64_t max; } body_limits[HTTP_MAX_ROUTES];
	size_t n_body_limits;
};

struct http_request {
	struct listener *l;
	struct MHD_Connection *conn;
	const struct route *route;
	char *method, *path;
	struct buf body;
	bool too_large, suspended, want_suspend, queued;
	enum http_scope scope;
	struct MHD_Response *response;
	unsigned status;
	uint64_t start_usec;
	uint64_t accounted;		/* its share of srv->buffered */
	uint64_t max_body;		/* this path's limit */
	struct http_request *prev, *next; /* in srv->suspended */
};

int http_server_set_body_limit(struct http_server *s, const char *prefix, uint64_t max)
{
	if (s->n_body_limits >= HTTP_MAX_ROUTES)
		return -E2BIG;
	s->body_limits[s->n_body_limits].prefix = strdup(prefix);
	if (!s->body_limits[s->n_body_limits].prefix)
		return -ENOMEM;
	s->body_limits[s->n_body_limits++].max = max;
	return 0;
}

/* The smallest limit of the prefixes url starts with, else the server's. */
static uint64_t body_limit(const struct http_server *s, const char *url)
{
	uint64_t max = s->limits.max_body;

	for (size_t i = 0; i < s->n_body_limits; i++)
		if (startswith(url, s->body_limits[i].prefix) && s->body_limits[i].max < max)
			max = s->body_limits[i].max;
	return max;
}

int http_server_new(sd_event *event, const struct http_limits *limits,
		    struct metrics *metrics, struct http_server **ret)
{
	struct http_server *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->event = sd_event_ref(event);
	s->limits = *limits;
	s->metrics = metrics;
	*ret = s;
	return 0;
}

static void listener_free(struct listener *l);
static void suspended_unlink(struct http_request *r);

void http_server_free(struct http_server *s)
{
	if (!s)
		return;
	/* MHD may not be stopped with suspended connections */
	while (s->suspended)
		http_reply_error(s->suspended, 503, "server shutting down");
	for (size_t i = 0; i < s->n_listeners; i++)
		listener_free(s->listeners[i]);
	for (size_t i = 0; i < s->n_routes; i++) {
		free(s->routes[i].method);
		free(s->routes[i].path);
	}
	for (size_t i = 0; i < s->n_body_limits; i++)
		free(s->body_limits[i].prefix);
	if (s->read_token)
		explicit_bzero(s->read_token, strlen(s->read_token));
	if (s->admin_token)
		explicit_bzero(s->admin_token, strlen(s->admin_token));
	free(s->read_token);
	free(s->admin_token);
	free(s->tls_cert);
	free(s->tls_key);
	sd_event_unref(s->event);
	free(s);
}

int http_server_set_tokens(struct http_server *s, const char *read_token,
			   const char *admin_token)
{
	char *rt = read_token && *read_token ? strdup(read_token) : NULL;
	char *at = admin_token && *admin_token ? strdup(admin_token) : NULL;

	if ((read_token && *read_token && !rt) || (admin_token && *admin_token && !at)) {
		free(rt);
		free(at);
		return -ENOMEM;
	}
	if (!streq(rt ?: "", s->read_token ?: "") || !streq(at ?: "", s->admin_token ?: ""))
		s->token_generation++;
	free(s->read_token);
	free(s->admin_token);
	s->read_token = rt;
	s->admin_token = at;
	return 0;
}

uint64_t http_server_token_generation(const struct http_server *s)
{
	return s->token_generation;
}

enum http_scope http_server_token_scope(const struct http_server *s, const char *token)
{
	if (!token || !*token)
		return HTTP_SCOPE_NONE;
	if (s->admin_token && auth_secret_equal(token, s->admin_token))
		return HTTP_SCOPE_ADMIN;
	if (s->read_token && auth_secret_equal(token, s->read_token))
		return HTTP_SCOPE_READ;
	return HTTP_SCOPE_NONE;
}

bool http_server_tls(const struct http_server *s)
{
	return s->tls_cert != NULL;
}

int http_server_set_tls(struct http_server *s, const char *cert_pem,
			const char *key_pem)
{
	char *c = strdup(cert_pem), *k = strdup(key_pem);

	if (!c || !k) {
		free(c);
		free(k);
		return -ENOMEM;
	}
	free(s->tls_cert);
	free(s->tls_key);
	s->tls_cert = c;
	s->tls_key = k;
	return 0;
}

int http_server_route(struct http_server *s, const char *method,
		      const char *path, enum http_scope scope,
		      http_handler_fn fn, void *userdata)
{
	struct route *rt;
	size_t n = strlen(path);

	if (s->n_routes >= HTTP_MAX_ROUTES)
		return -ENOSPC;
	rt = &s->routes[s->n_routes];
	rt->method = strdup(method);
	rt->path = strdup(path);
	if (!rt->method || !rt->path) {
		free(rt->method);
		free(rt->path);
		return -ENOMEM;
	}
	rt->prefix = n > 0 && path[n - 1] == '*';
	if (rt->prefix)
		rt->path[n - 1] = '\0';
	rt->scope = scope;
	rt->fn = fn;
	rt->userdata = userdata;
	s->n_routes++;
	return 0;
}

/* ---- requests ---- */

const char *http_request_method(struct http_request *r)
{
	return r->method;
}

const char *http_request_path(struct http_request *r)
{
	return r->path;
}

const char *http_request_header(struct http_request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_request_query(struct http_request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_request_body(struct http_request *r, size_t *ret_len)
{
	*ret_len = r->body.len;
	return r->body.data ? r->body.data : "";
}

int http_request_path_id(struct http_request *r, const char *base, int64_t *ret_id,
			 const char **ret_rest)
{
	const char *p = startswith(r->path, base);
	unsigned long long v;
	char *end;

	if (!p || *p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || v == 0 || v > INT64_MAX || (*end && *end != '/'))
		return -EINVAL;
	*ret_id = (int64_t)v;
	*ret_rest = *end ? end + 1 : "";
	return 0;
}

const char *http_request_route(struct http_request *r)
{
	return r->route ? r->route->path : "none";
}

enum http_scope http_request_scope(struct http_request *r)
{
	return r->scope;
}

bool http_server_alive(const struct http_server *s)
{
	uint64_t now = clock_mono_usec();

	for (size_t i = 0; i < s->n_listeners; i++) {
		const struct listener *l = s->listeners[i];

		if (!l->closing && !l->idle && now - l->last_run > HTTP_ALIVE_USEC)
			return false;
	}
	return true;
}

static void listener_kick(struct listener *l);

int http_reply(struct http_request *r, unsigned status, const char *ctype,
	       const void *data, size_t len)
{
	struct MHD_Response *resp;

	if (r->response)
		return -EALREADY;
	resp = MHD_create_response_from_buffer(len, (void *)data,
					       MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return -ENOMEM;
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	r->response = resp;
	r->status = status;
	if (r->suspended) {
		r->suspended = false;
		suspended_unlink(r);
		MHD_resume_connection(r->conn);
		listener_kick(r->l);
	}
	return 0;
}

int http_reply_header(struct http_request *r, const char *name, const char *value)
{
	if (!r->response)
		return -EINVAL;
	return MHD_add_response_header(r->response, name, value) == MHD_YES ? 0 : -EINVAL;
}

int http_reply_json(struct http_request *r, unsigned status, json_t *j)
{
	_cleanup_free_ char *s = NULL;
	int ret;

	if (!j)
		return -ENOMEM;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!s)
		return -ENOMEM;
	ret = http_reply(r, status, "application/json", s, strlen(s));
	return ret;
}

int http_reply_error(struct http_request *r, unsigned status, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return http_reply_json(r, status, json_pack("{s:o}", "error", json_str_or_null(msg)));
}

void http_request_suspend(struct http_request *r)
{
	r->want_suspend = true;
}

static void suspended_unlink(struct http_request *r)
{
	struct http_server *s = r->l->srv;

	if (r->prev)
		r->prev->next = r->next;
	else if (s->suspended == r)
		s->suspended = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

/* The body is the handler's now: it no longer counts against the
 * budget of what strangers can make kfixd hold. */
static void request_release_budget(struct http_request *r)
{
	r->l->srv->buffered -= r->accounted;
	r->accounted = 0;
}

static void request_free(struct http_request *r)
{
	if (!r)
		return;
	request_release_budget(r);
	if (r->response)
		MHD_destroy_response(r->response);
	buf_free(&r->body);
	free(r->method);
	free(r->path);
	free(r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_request *r = *con_cls;
	struct http_server *s = cls;
	char labels[160];

	if (!r)
		return;
	if (s->metrics) {
		snprintf(labels, sizeof(labels), "route=\"%s\",code=\"%u\"",
			 http_request_route(r), r->queued ? r->status : 0);
		metrics_counter_add(s->metrics, "kfix_http_requests_total",
				    "HTTP requests by route and status (0: aborted).",
				    labels, 1);
		snprintf(labels, sizeof(labels), "route=\"%s\"", http_request_route(r));
		metrics_observe(s->metrics, "kfix_http_request_duration_seconds",
				"Time from request start to the end of the answer.",
				labels, (double)(clock_mono_usec() - r->start_usec) / 1e6);
	}
	*con_cls = NULL;
	request_free(r);
}

static enum MHD_Result queue(struct http_request *r)
{
	enum MHD_Result ret = MHD_queue_response(r->conn, r->status, r->response);

	r->queued = ret == MHD_YES;
	return ret;
}

static const struct route *route_find(struct http_server *s, const char *method,
				      const char *path, bool *ret_path_known)
{
	*ret_path_known = false;
	for (size_t i = 0; i < s->n_routes; i++) {
		const struct route *rt = &s->routes[i];
		bool match = rt->prefix ? startswith(path, rt->path) != NULL
					: streq(path, rt->path);

		if (!match)
			continue;
		*ret_path_known = true;
		if (streq(rt->method, method))
			return rt;
	}
	return NULL;
}

/* The scope the request's bearer token grants. */
static enum http_scope token_scope(struct http_server *s, struct http_request *r)
{
	return http_server_token_scope(s, auth_bearer(http_request_header(r, "Authorization")));
}

/* A 405's Allow: the methods of the routes of that path. */
static void reply_not_allowed(struct http_server *s, struct http_request *r)
{
	char allow[64] = "";

	for (size_t i = 0; i < s->n_routes; i++) {
		const struct route *rt = &s->routes[i];
		bool match = rt->prefix ? startswith(r->path, rt->path) != NULL
					: streq(r->path, rt->path);

		if (match && !strstr(allow, rt->method) &&
		    strlen(allow) + strlen(rt->method) + 3 < sizeof(allow))
			snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
				 *allow ? ", " : "", rt->method);
	}
	if (http_reply_error(r, 405, "method not allowed") >= 0 && r->response)
		MHD_add_response_header(r->response, "Allow", allow);
}

static void dispatch(struct http_server *s, struct http_request *r)
{
	bool known;
	int ret;

	r->route = route_find(s, r->method, r->path, &known);
	if (!r->route) {
		if (known)
			reply_not_allowed(s, r);
		else
			http_reply_error(r, 404, "not found");
		return;
	}
	if (r->too_large) {
		http_reply_error(r, 413, "body larger than %llu bytes",
				 (unsigned long long)r->max_body);
		return;
	}
	r->scope = token_scope(s, r);
	if (r->scope < r->route->scope) {
		if (s->metrics)
			metrics_counter_add(s->metrics, "kfix_http_auth_failures_total",
					    "Requests refused for a missing or wrong token.",
					    NULL, 1);
		/* RFC 6750: the challenge, and why a token fell short */
		if (r->scope == HTTP_SCOPE_NONE) {
			if (http_reply_error(r, 401, "a valid bearer token is needed") >= 0 &&
			    r->response)
				MHD_add_response_header(r->response, "WWW-Authenticate",
							"Bearer realm=\"kfix\"");
		} else if (http_reply_error(r, 403, "this needs the admin token") >= 0 && r->response)
			MHD_add_response_header(r->response, "WWW-Authenticate",
						"Bearer realm=\"kfix\", error=\"insufficient_scope\"");
		return;
	}
	ret = r->route->fn(r, r->route->userdata);
	if (ret < 0 && !r->response) {
		r->want_suspend = false;
		http_reply_error(r, 500, "internal error: %s", strerror(-ret));
	}
}

static struct http_request *request_new(struct listener *l,
					struct MHD_Connection *c,
					const char *url, const char *method)
{
	struct http_request *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->l = l;
	r->conn = c;
	r->start_usec = clock_mono_usec();
	r->max_body = body_limit(l->srv, url);
	r->body = BUF_INIT(r->max_body);
	r->method = strdup(method);
	r->path = strdup(url);
	if (!r->method || !r->path) {
		request_free(r);
		return NULL;
	}
	return r;
}

/* Drops the connection of a request that broke a limit no answer would
 * reach in time, counted by reason. */
static enum MHD_Result refuse(struct http_server *s, const char *why)
{
	char labels[64];

	if (s->metrics) {
		snprintf(labels, sizeof(labels), "reason=\"%s\"", why);
		metrics_counter_add(s->metrics, "kfix_http_dropped_total",
				    "Connections dropped for a request past a limit.", labels, 1);
	}
	return MHD_NO;
}

static bool declared_too_large(const struct http_request *r, struct MHD_Connection *c)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	uint64_t n;

	return cl && parse_uint64(cl, &n) >= 0 && n > r->max_body;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c,
				 const char *url, const char *method,
				 const char *version, const char *data,
				 size_t *data_size, void **con_cls)
{
	struct listener *l = cls;
	struct http_server *s = l->srv;
	struct http_request *r = *con_cls;

	if (!r) {
		r = request_new(l, c, url, method);
		if (!r)
			return MHD_NO;
		*con_cls = r;
		if (declared_too_large(r, c)) {
			/* refuse before reading a byte of the body */
			bool known;

			r->route = route_find(s, method, url, &known);
			http_reply_error(r, 413, "body larger than %llu bytes",
					 (unsigned long long)r->max_body);
			return queue(r);
		}
		return MHD_YES;
	}
	if (r->response && !r->suspended)
		return r->queued ? MHD_YES : queue(r);
	if (*data_size > 0) {
		size_t n = *data_size;

		*data_size = 0;
		/* The idle time-out restarts on every byte: a body trickled
		 * slowly enough would hold its slot for ever. */
		if (s->limits.request_usec && clock_mono_usec() - r->start_usec > s->limits.request_usec)
			return refuse(s, "request-timeout");
		if (s->limits.max_buffered && s->buffered + n > s->limits.max_buffered)
			return refuse(s, "buffer-budget");
		if (!r->too_large && buf_append(&r->body, data, n) < 0)
			r->too_large = true;
		else if (!r->too_large) {
			r->accounted += n;
			s->buffered += n;
		}
		/* a chunked body past the limit: drop the connection */
		return r->too_large ? MHD_NO : MHD_YES;
	}
	request_release_budget(r);
	dispatch(s, r);
	if (r->response)
		return queue(r);
	if (r->want_suspend) {
		r->want_suspend = false;
		r->suspended = true;
		r->next = s->suspended;
		if (s->suspended)
			s->suspended->prev = r;
		s->suspended = r;
		MHD_suspend_connection(c);
		return MHD_YES;
	}
	http_reply_error(r, 500, "handler gave no answer");
	return queue(r);
}

/* ---- listeners in the event loop ---- */

static int listener_run(struct listener *l)
{
	const union MHD_DaemonInfo *ci;
	MHD_UNSIGNED_LONG_LONG ms;
	bool timeout, had_connections;
	uint64_t now;
	int r;

	ci = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	had_connections = !ci || ci->num_connections > 0;
	MHD_run(l->mhd);
	l->last_run = clock_mono_usec();
	/* At its connection limit MHD takes the listening socket out of its
	 * epoll set and puts it back only from MHD_run, after the last
	 * connection closed: nothing in the set would wake us again.  So
	 * while connections are open, and once more after the last one
	 * closed, MHD runs again within a tick, whatever it asks for; then
	 * the listening socket is back in the set and an idle kfixd sleeps. */
	timeout = MHD_get_timeout(l->mhd, &ms) == MHD_YES;
	ci = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	l->idle = !timeout && !had_connections && ci && ci->num_connections == 0 && !l->closing;
	if (l->idle)
		return sd_event_source_set_enabled(l->timer, SD_EVENT_OFF);
	if (!timeout || ms > HTTP_TICK_MS)
		ms = HTTP_TICK_MS;
	r = sd_event_now(l->srv->event, CLOCK_MONOTONIC, &now);
	if (r < 0)
		return r;
	r = sd_event_source_set_time(l->timer, now + (uint64_t)ms * 1000);
	if (r >= 0)
		r = sd_event_source_set_enabled(l->timer, SD_EVENT_ONESHOT);
	return r;
}

static void listener_kick(struct listener *l)
{
	/* run MHD on the next loop iteration to send resumed answers */
	if (sd_event_source_set_enabled(l->kick, SD_EVENT_ONESHOT) < 0)
		log_warning("http: cannot schedule resumed answers");
}

static int on_io(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
	int r = listener_run(userdata);

	if (r < 0)
		log_warning("http: cannot arm the timer: %s", strerror(-r));
	return 0;
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
	return on_io(es, -1, 0, userdata);
}

static int on_kick(sd_event_source *es, void *userdata)
{
	return on_io(es, -1, 0, userdata);
}

/* fmt is libmicrohttpd's own format string, never a client's text */
_printf_(2, 0) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("http: %s", msg);
}

static void listener_free(struct listener *l)
{
	if (!l)
		return;
	sd_event_source_disable_unref(l->io);
	sd_event_source_disable_unref(l->timer);
	sd_event_source_disable_unref(l->kick);
	if (l->mhd)
		MHD_stop_daemon(l->mhd); /* closes the listening socket too */
	else if (l->fd >= 0)
		close(l->fd);
	free(l->address);
	free(l);
}
DEFINE_CLEANUP(struct listener, listener_free)

static int listener_start(struct http_server *s, struct listener *l)
{
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	unsigned timeout_s = (unsigned)((s->limits.timeout_usec + 999999) / 1000000);
	int r;

	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, s },
		{ MHD_OPTION_LISTEN_SOCKET, l->fd, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->limits.max_connections, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		  (intptr_t)(s->limits.max_per_ip ? s->limits.max_per_ip : s->limits.max_connections),
		  NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout_s, NULL },
		{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->limits.max_header, NULL },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s },
		{ MHD_OPTION_END, 0, NULL }, /* room for the TLS pair */
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (s->tls_cert) {
		flags |= MHD_USE_TLS;
		opts[7] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert };
		opts[8] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key };
	}
	l->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_access, l,
				  MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!l->mhd)
		return -EIO;
	info = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info)
		return -EIO;
	r = sd_event_add_io(s->event, &l->io, info->epoll_fd, EPOLLIN, on_io, l);
	if (r >= 0)
		r = sd_event_add_time(s->event, &l->timer, CLOCK_MONOTONIC, 0, 1,
				      on_timer, l);
	if (r >= 0)
		r = sd_event_add_defer(s->event, &l->kick, on_kick, l);
	if (r >= 0)
		r = sd_event_source_set_enabled(l->kick, SD_EVENT_OFF);
	if (r >= 0)
		r = listener_run(l);
	return r;
}

int http_server_add_fd(struct http_server *s, int fd)
{
	_cleanup_(listener_freep) struct listener *l = NULL;
	int r;

	if (s->n_listeners >= HTTP_MAX_LISTENERS) {
		close(fd);
		return -ENOSPC;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->srv = s;
	l->fd = fd;
	r = listener_start(s, l);
	if (r < 0)
		return r;
	s->listeners[s->n_listeners++] = TAKE_PTR(l);
	return 0;
}

static int parse_address(const char *address, struct sockaddr_storage *ss,
			 socklen_t *ret_len)
{
	_cleanup_free_ char *host = NULL;
	const char *colon, *port;
	uint64_t p;

	if (address[0] == '[') {
		const char *end = strchr(address, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		host = strndup(address + 1, (size_t)(end - address - 1));
		port = end + 2;
	} else {
		colon = strrchr(address, ':');
		if (!colon)
			return -EINVAL;
		host = strndup(address, (size_t)(colon - address));
		port = colon + 1;
	}
	if (!host)
		return -ENOMEM;
	if (parse_uint64(port, &p) < 0 || p > 65535)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)p);
		*ret_len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)p);
		*ret_len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -EINVAL;
}

int http_address_check(const char *address)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_address(address, &ss, &len);
}

int http_server_listen(struct http_server *s, const char *address)
{
	struct sockaddr_storage ss;
	socklen_t len;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *a = strdup(address);
	int one = 1, r;

	r = parse_address(address, &ss, &len);
	if (r < 0)
		return r;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negerrno();
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 256) < 0)
		return negerrno();
	if (!a)
		return -ENOMEM;
	r = http_server_add_fd(s, TAKE_FD(fd));
	if (r < 0)
		return r;
	s->listeners[s->n_listeners - 1]->address = TAKE_PTR(a);
	return 0;
}

static size_t listener_connections(struct listener *l)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return info ? info->num_connections : 0;
}

/* Stops accepting and frees the port at once; the connections already
 * open (suspended requests among them) are served to their end. */
static void listener_close(struct listener *l)
{
	MHD_socket fd = MHD_quiesce_daemon(l->mhd);

	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	l->fd = -1;
	l->closing = true;
}

/* Frees closed listeners whose last connection has ended. */
static void listeners_collect(struct http_server *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->n_listeners; i++) {
		struct listener *l = s->listeners[i];

		if (l->closing && listener_connections(l) == 0) {
			listener_free(l);
			continue;
		}
		s->listeners[j++] = l;
	}
	s->n_listeners = j;
}

int http_server_set_listen(struct http_server *s, char *const *addresses,
			   const char **ret_failed)
{
	bool keep[HTTP_MAX_LISTENERS] = { false };
	size_t n_before;
	int r;

	listeners_collect(s);
	n_before = s->n_listeners;
	for (size_t a = 0; addresses && addresses[a]; a++) {
		bool found = false;

		for (size_t i = 0; i < n_before && !found; i++) {
			struct listener *l = s->listeners[i];

			if (!l->closing && streq_ptr(l->address, addresses[a]))
				found = keep[i] = true;
		}
		if (found)
			continue;
		r = http_server_listen(s, addresses[a]);
		if (r < 0) {
			/* all or nothing: the new ones go again */
			while (s->n_listeners > n_before)
				listener_free(s->listeners[--s->n_listeners]);
			if (ret_failed)
				*ret_failed = addresses[a];
			return r;
		}
	}
	for (size_t i = 0; i < n_before; i++)
		if (!keep[i] && !s->listeners[i]->closing && s->listeners[i]->address)
			listener_close(s->listeners[i]);
	return 0;
}

size_t http_server_n_listeners(struct http_server *s)
{
	return s->n_listeners;
}

size_t http_server_n_connections(struct http_server *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_listeners; i++)
		n += listener_connections(s->listeners[i]);
	return n;
}

int http_server_local_address(struct http_server *s, size_t i, char *buf,
			      size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	if (i >= s->n_listeners)
		return -ENOENT;
	if (s->listeners[i]->closing)
		return -EBADF;
	if (getsockname(s->listeners[i]->fd, (struct sockaddr *)&ss, &len) < 0)
		return negerrno();
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(buf, n, "%s:%u", host, ntohs(a->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(buf, n, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		snprintf(buf, n, "fd:%d", s->listeners[i]->fd);
	}
	return 0;
}
