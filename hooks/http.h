/* The HTTP server of kfixd: libmicrohttpd driven by the sd-event loop.
 *
 * Each listening socket gets one MHD daemon in external epoll mode: its
 * epoll fd is an sd-event io source and MHD_get_timeout() arms one timer,
 * so the server never polls.  Requests are routed by method and path;
 * routes declare the bearer-token scope they need.  A handler either
 * answers at once or suspends the request and answers later (the daemon
 * does this to commit many webhook deliveries in one transaction). */
#ifndef KFIX_HOOKS_HTTP_H
#define KFIX_HOOKS_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/macro.h"

struct http_server;
struct http_request;
struct metrics;

enum http_scope {
	HTTP_SCOPE_NONE,  /* open (health, metrics, webhooks sign their bodies) */
	HTTP_SCOPE_READ,  /* api-token or admin-token */
	HTTP_SCOPE_ADMIN, /* admin-token */
};

struct http_limits {
	uint64_t max_body;	     /* bytes */
	uint64_t max_header;	     /* bytes of request line and headers */
	unsigned max_connections;    /* per listening socket */
	unsigned max_per_ip;	     /* connections from one address, per socket */
	uint64_t timeout_usec;	     /* idle connection timeout */
	uint64_t request_usec;	     /* a request's whole body, trickled or not */
	uint64_t max_buffered;	     /* bodies held before their handler, all requests */
};

/* Returns 0 after answering or suspending the request, <0 for a 500. */
typedef int (*http_handler_fn)(struct http_request *req, void *userdata);

int http_server_new(sd_event *event, const struct http_limits *limits,
		    struct metrics *metrics, struct http_server **ret);
/* Requests whose path starts with prefix may carry at most max body
 * bytes (less than max_body: forge events are small, mail is not). */
int http_server_set_body_limit(struct http_server *s, const char *prefix, uint64_t max);
/* Every listener's server ran within the last few seconds: what the
 * watchdog asks before it tells systemd kfixd is alive. */
bool http_server_alive(const struct http_server *s);
void http_server_free(struct http_server *s);
DEFINE_CLEANUP(struct http_server, http_server_free)

/* Tokens for the READ and ADMIN scopes; NULL disables that token.  With
 * no token at all, routes that need a scope answer 401. */
int http_server_set_tokens(struct http_server *s, const char *read_token,
			   const char *admin_token);
/* The scope a token grants (compared in constant time). */
enum http_scope http_server_token_scope(const struct http_server *s, const char *token);
/* Changes whenever a token does: a session issued under an older
 * generation is no longer valid. */
uint64_t http_server_token_generation(const struct http_server *s);
/* PEM certificate and key: serve HTTPS on every listener added later. */
int http_server_set_tls(struct http_server *s, const char *cert_pem,
			const char *key_pem);
bool http_server_tls(const struct http_server *s);

/* path is exact, or a prefix when it ends in '*'.  First match wins. */
int http_server_route(struct http_server *s, const char *method,
		      const char *path, enum http_scope scope,
		      http_handler_fn fn, void *userdata);

/* Serves an already listening socket (taken over, closed on free). */
int http_server_add_fd(struct http_server *s, int fd);
/* "127.0.0.1:8470", "[::1]:8470"; numeric addresses only. */
int http_server_listen(struct http_server *s, const char *address);
/* After a reload: listens on exactly these addresses (as given to
 * http_server_listen): new ones are opened, listeners no longer named
 * stop accepting at once (their open connections are served to the end),
 * sockets from systemd stay.  All or nothing: when one address cannot be
 * opened, nothing changes and *ret_failed names it. */
/* 0 when address is what [http] listen takes: a numeric IPv4 or
 * [IPv6] address and a port (names are not resolved); -EINVAL if not. */
int http_address_check(const char *address);
int http_server_set_listen(struct http_server *s, char *const *addresses,
			   const char **ret_failed);
/* The "host:port" a listener is bound to (for logs and tests); -EBADF
 * for one that stopped listening. */
int http_server_local_address(struct http_server *s, size_t i, char *buf,
			      size_t n);
size_t http_server_n_listeners(struct http_server *s);
/* Open connections over all listeners (idle keep-alive ones included). */
size_t http_server_n_connections(struct http_server *s);

const char *http_request_method(struct http_request *r);
const char *http_request_path(struct http_request *r);
/* Header and query values; NULL when absent. */
const char *http_request_header(struct http_request *r, const char *name);
const char *http_request_query(struct http_request *r, const char *name);
const char *http_request_body(struct http_request *r, size_t *ret_len);
/* The id after base in the path and what follows it: "/api/v1/bugs/12/events"
 * with base "/api/v1/bugs/" gives 12 and "events".  -EINVAL when the path
 * does not start with base and a positive decimal id. */
int http_request_path_id(struct http_request *r, const char *base, int64_t *ret_id,
			 const char **ret_rest);
/* The route pattern that matched, a bounded label for metrics. */
const char *http_request_route(struct http_request *r);
enum http_scope http_request_scope(struct http_request *r);

/* Answers: the data is copied.  A suspended request is resumed. */
int http_reply(struct http_request *r, unsigned status, const char *ctype,
	       const void *data, size_t len);
/* One more header on the answer just given (before the handler returns). */
int http_reply_header(struct http_request *r, const char *name, const char *value);
/* Takes the reference to j. */
int http_reply_json(struct http_request *r, unsigned status, json_t *j);
/* {"error": "..."}; the message must not contain secrets. */
int http_reply_error(struct http_request *r, unsigned status,
		     const char *fmt, ...) _printf_(3, 4);

/* Keeps the request open after the handler returns; answer it later
 * with http_reply*(). */
void http_request_suspend(struct http_request *r);

#endif
