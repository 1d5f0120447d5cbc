/* Shared by dashboard.c (sessions, forms, routes) and dashboard-views.c
 * (the pages). */
#ifndef KFIX_DAEMON_DASHBOARD_INTERNAL_H
#define KFIX_DAEMON_DASHBOARD_INTERNAL_H

#include <stdint.h>

#include "common/buf.h"
#include "front-internal.h"

/* A page is built in memory up to this size; past it the page says so. */
#define DASH_PAGE_MAX (8u * 1024 * 1024)

struct dash_session {
	enum http_scope scope; /* HTTP_SCOPE_NONE: not logged in */
	char csrf[65];	       /* what forms of this session carry */
};

/* The page's frame: head with the stylesheet and the script, navigation. */
int dash_page_begin(struct buf *b, const char *title, const struct dash_session *s);
int dash_page_end(struct buf *b);
/* Sends b as text/html with the dashboard's security headers. */
int dash_reply_page(struct http_request *req, unsigned status, struct buf *b);
int dash_reply_message(struct http_request *req, unsigned status,
		       const struct dash_session *s, const char *title, const char *text);
/* A moderation form's hidden field. */
int dash_csrf_field(struct buf *b, const struct dash_session *s);

/* "3 min", "2 h", "5 d" since t (unix seconds); "-" for 0. */
const char *dash_age(int64_t t, char *buf, size_t n);

int dash_bugs(struct front *f, struct http_request *req, const struct dash_session *s);
int dash_bug(struct front *f, struct http_request *req, const struct dash_session *s);
int dash_job(struct front *f, struct http_request *req, const struct dash_session *s);
int dash_hosts(struct front *f, struct http_request *req, const struct dash_session *s);

#endif
