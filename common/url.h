/* URLs as curl's parser reads them: one parser for every URL kfix takes
 * from its configuration or from a stranger's mail. */
#ifndef KFIX_URL_H
#define KFIX_URL_H

#include <stdbool.h>

struct url {
	char scheme[16];	/* lower-case */
	char user[128];		/* "" when none */
	bool password;		/* the URL carries one */
	char host[256];		/* lower-case; an IPv6 address without its [] */
	int port;		/* 0 when none is given */
	char path[1024];	/* "/" when none is given */
	bool query;		/* a ?query or a #fragment follows */
};

/* Parses an absolute URL of any scheme, with a host.  -EINVAL for text
 * that is not one, -ENAMETOOLONG for a part longer than struct url
 * holds, -ENOMEM. */
int url_parse(const char *text, struct url *ret);

/* The host is this machine: 127.0.0.0/8, ::1 or localhost. */
bool url_is_loopback(const struct url *u);

#endif
