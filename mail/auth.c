/* See auth.h.  DKIM is verified with Debian's libopendkim (RFC 6376's
 * canonicalisation, key records and signature rules are its, not ours);
 * the header reading here is only what the decision needs. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "common/buf.h"
#include "common/conf.h"
#include "common/strutil.h"
#include "mail-internal.h"

/* <sys/param.h>, which dkim.h includes, has its own */
#undef MIN
#undef MAX
#include <opendkim/dkim.h>

#define AUTH_DOMAINS_MAX 8
#define AUTH_DOMAIN_MAX 254
#define DKIM_DNS_TIMEOUT 10

struct mail_auth {
	unsigned n_from;	/* From: mailboxes (From: fields count too) */
	char from_domain[AUTH_DOMAIN_MAX + 1];
	char from_addr[MAIL_FIELD_MAX];
	char sender_addr[MAIL_FIELD_MAX];
	char dkim[AUTH_DOMAINS_MAX][AUTH_DOMAIN_MAX + 1];	/* verified d= */
	size_t n_dkim;
	char authres[AUTH_DOMAINS_MAX][AUTH_DOMAIN_MAX + 1];	/* trusted dkim=pass */
	size_t n_authres;
	bool authres_seen;	/* the trusted MTA's header was there */
	char summary[512];
};

void mail_auth_opts_from_config(const struct config *cfg, struct mail_auth_opts *ret)
{
	*ret = (struct mail_auth_opts){ 0 };
	(void)config_get_string(cfg, "mail", NULL, "dkim-keys", &ret->key_file);
	(void)config_get_string(cfg, "mail", NULL, "trusted-authserv-id", &ret->authserv_id);
}

int mail_auth_methods_parse(const char *list, unsigned *ret)
{
	_cleanup_free_ char *copy = strdup(list ? list : "dkim");
	unsigned m = 0;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, " ,\t", &save); w; w = strtok_r(NULL, " ,\t", &save)) {
		if (streq(w, "dkim"))
			m |= MAIL_AUTH_DKIM;
		else if (streq(w, "authres"))
			m |= MAIL_AUTH_AUTHRES;
		else if (streq(w, "none"))
			m |= MAIL_AUTH_NONE;
		else
			return -EINVAL;
	}
	if (!m)
		return -EINVAL;
	*ret = m;
	return 0;
}

void mail_auth_free(struct mail_auth *a)
{
	free(a);
}

static void lower_copy(char *dst, size_t n, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < n; i++)
		dst[i] = (char)tolower((unsigned char)s[i]);
	dst[i] = '\0';
}

/* --- header reading ---------------------------------------------------------- */

/* The mailboxes of an address list: commas outside quotes, comments and
 * angle brackets separate them; a group (':' at the top) is several. */
static unsigned count_mailboxes(const char *v)
{
	unsigned n = 0, depth = 0;
	bool quoted = false, angle = false, any = false;

	for (const char *p = v; *p; p++) {
		if (quoted) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				quoted = false;
			continue;
		}
		if (*p == '"')
			quoted = true;
		else if (*p == '(')
			depth++;
		else if (*p == ')' && depth)
			depth--;
		else if (depth)
			continue;
		else if (*p == '<')
			angle = true;
		else if (*p == '>')
			angle = false;
		else if (!angle && *p == ',') {
			n += any;
			any = false;
			continue;
		} else if (!angle && *p == ':')
			return 2;
		if (!isspace((unsigned char)*p))
			any = true;
	}
	return n + any;
}

/* The addr-spec of a single mailbox, lower case. */
static void mailbox_addr(const char *v, char *out, size_t n)
{
	const char *lt = strrchr(v, '<'), *s = v, *e;

	if (lt && strchr(lt, '>')) {
		s = lt + 1;
		e = strchr(lt, '>');
	} else {
		while (isspace((unsigned char)*s))
			s++;
		for (e = s; *e && !isspace((unsigned char)*e) && *e != '('; e++)
			;
	}
	lower_copy(out, n, s, (size_t)(e - s));
}

static const char *domain_of(const char *addr)
{
	const char *at = strrchr(addr, '@');

	return at ? at + 1 : "";
}

static void add_domain(char list[][AUTH_DOMAIN_MAX + 1], size_t *n, const char *d, size_t len)
{
	while (len > 0 && (d[len - 1] == '.' || isspace((unsigned char)d[len - 1])))
		len--;
	if (*n >= AUTH_DOMAINS_MAX || len == 0 || len > AUTH_DOMAIN_MAX)
		return;
	lower_copy(list[*n], AUTH_DOMAIN_MAX + 1, d, len);
	(*n)++;
}

/* Authentication-Results: AUTHSERV-ID [VERSION]; dkim=pass header.d=D
 * ...; only the first such header of the trusted MTA (the one it added,
 * above whatever the sender wrote) counts. */
static void read_authres(struct mail_auth *a, const char *v, const char *trusted)
{
	const char *p = v, *semi;
	size_t n;

	while (isspace((unsigned char)*p))
		p++;
	n = strcspn(p, " \t;");
	if (!trusted || a->authres_seen || n != strlen(trusted) || strncasecmp(p, trusted, n) != 0)
		return;
	a->authres_seen = true;
	for (semi = strchr(p, ';'); semi; semi = strchr(semi + 1, ';')) {
		const char *r = semi + 1, *end = strchr(r, ';') ?: r + strlen(r), *d;

		while (isspace((unsigned char)*r))
			r++;
		if (strncasecmp(r, "dkim=pass", 9) != 0 || (r[9] && !isspace((unsigned char)r[9])))
			continue;
		for (d = r; d < end; d++)
			if (strncasecmp(d, "header.d=", 9) == 0) {
				d += 9;
				add_domain(a->authres, &a->n_authres, d, strcspn(d, " \t;()"));
				break;
			}
	}
}

/* Walks the header fields (unfolded) of raw. */
static int read_headers(struct mail_auth *a, const char *raw, size_t len, const char *trusted)
{
	_cleanup_buf_ struct buf f = BUF_INIT(MAIL_HEADER_SIZE_MAX);
	const char *p = raw, *end = raw + len;

	for (;;) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		bool done = p >= end || n == 0 || (n == 1 && p[0] == '\r');

		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (done || (p[0] != ' ' && p[0] != '\t')) {
			/* the field before this line is complete */
			if (f.len > 0) {
				char *v = strchr(f.data, ':');

				if (v) {
					*v++ = '\0';
					if (strcasecmp(f.data, "From") == 0) {
						a->n_from += count_mailboxes(v);
						mailbox_addr(v, a->from_addr, sizeof(a->from_addr));
					} else if (strcasecmp(f.data, "Sender") == 0)
						mailbox_addr(v, a->sender_addr, sizeof(a->sender_addr));
					else if (strcasecmp(f.data, "Authentication-Results") == 0)
						read_authres(a, v, trusted);
				}
			}
			f.len = 0;
			if (f.data)
				f.data[0] = '\0';
		}
		if (done)
			break;
		if (buf_append(&f, p, n) < 0)
			return -E2BIG;
		p = nl ? nl + 1 : end;
	}
	snprintf(a->from_domain, sizeof(a->from_domain), "%s", domain_of(a->from_addr));
	return 0;
}

/* --- DKIM ------------------------------------------------------------------------ */

/* The message with CRLF line ends, as DKIM hashes it: mail arrives with
 * bare LF from files, archives and webhooks, and libopendkim's own fix
 * does not cover the end of the headers when verifying. */
char *mail_auth_crlf(const char *s, size_t len, size_t *ret_len)
{
	char *out = malloc(2 * len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
			*o++ = '\r';
		*o++ = s[i];
	}
	*o = '\0';
	*ret_len = (size_t)(o - out);
	return out;
}

static int verify_dkim(struct mail_auth *a, const char *raw, size_t len, const char *key_file)
{
	_cleanup_free_ char *crlf = NULL;
	DKIM_LIB *lib = dkim_init(NULL, NULL);
	DKIM_SIGINFO **sigs = NULL;
	DKIM_STAT st;
	DKIM *d = NULL;
	unsigned int timeout = DKIM_DNS_TIMEOUT;
	int nsigs = 0, r = 0;

	if (!lib)
		return -ENOMEM;
	crlf = mail_auth_crlf(raw, len, &len);
	if (!crlf) {
		dkim_close(lib);
		return -ENOMEM;
	}
	(void)dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_TIMEOUT, &timeout, sizeof(timeout));
	if (key_file) {
		dkim_query_t q = DKIM_QUERY_FILE;

		(void)dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYMETHOD, &q, sizeof(q));
		(void)dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYINFO, (void *)key_file,
				   strlen(key_file));
	}
	d = dkim_verify(lib, (const unsigned char *)"kfix", NULL, &st);
	if (!d) {
		dkim_close(lib);
		return st == DKIM_STAT_NORESOURCE ? -ENOMEM : 0;
	}
	st = dkim_chunk(d, (unsigned char *)crlf, len);
	if (st == DKIM_STAT_OK)
		st = dkim_chunk(d, NULL, 0);
	if (st == DKIM_STAT_OK || st == DKIM_STAT_NOSIG)
		(void)dkim_eom(d, NULL);
	if (dkim_getsiglist(d, &sigs, &nsigs) == DKIM_STAT_OK)
		for (int i = 0; i < nsigs; i++) {
			const unsigned char *dom = dkim_sig_getdomain(sigs[i]);

			if (dom && DKIM_SIG_CHECK(sigs[i]))
				add_domain(a->dkim, &a->n_dkim, (const char *)dom,
					   strlen((const char *)dom));
		}
	dkim_free(d);
	dkim_close(lib);
	return r;
}

int mail_auth_check(const char *raw, size_t len, const struct mail_auth_opts *o,
		    struct mail_auth **ret)
{
	_cleanup_(mail_auth_freep) struct mail_auth *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	r = read_headers(a, raw, len, o ? o->authserv_id : NULL);
	if (r >= 0)
		r = verify_dkim(a, raw, len, o ? o->key_file : NULL);
	if (r < 0)
		return r;
	{
		size_t k = (size_t)snprintf(a->summary, sizeof(a->summary), "from=%s dkim=",
					    a->from_domain[0] ? a->from_domain : "-");

		for (size_t i = 0; i < a->n_dkim && k < sizeof(a->summary); i++)
			k += (size_t)snprintf(a->summary + k, sizeof(a->summary) - k, "%s%s",
					      i ? "," : "", a->dkim[i]);
		if (k < sizeof(a->summary))
			k += (size_t)snprintf(a->summary + k, sizeof(a->summary) - k, "%s authres=",
					      a->n_dkim ? "" : "none");
		for (size_t i = 0; i < a->n_authres && k < sizeof(a->summary); i++)
			k += (size_t)snprintf(a->summary + k, sizeof(a->summary) - k, "%s%s",
					      i ? "," : "", a->authres[i]);
		if (!a->n_authres && k < sizeof(a->summary))
			snprintf(a->summary + k, sizeof(a->summary) - k, "none");
	}
	*ret = TAKE_PTR(a);
	return 0;
}

/* DMARC's relaxed alignment: the signing domain is the From: domain or a
 * parent of it. */
static bool aligned(const char *from, const char *d)
{
	size_t a = strlen(from), b = strlen(d);

	if (!*d || !strchr(d, '.'))
		return false; /* a top-level domain vouches for nobody */
	return streq(from, d) || (a > b && from[a - b - 1] == '.' && streq(from + a - b, d));
}

static bool any_aligned(const char *from, const char list[][AUTH_DOMAIN_MAX + 1], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (aligned(from, list[i]))
			return true;
	return false;
}

bool mail_auth_from_ok(const struct mail_auth *a, unsigned methods, const char **ret_reason)
{
	const char *why = NULL;

	if (a->n_from != 1)
		why = a->n_from ? "the mail has several From: mailboxes" : "the mail has no From:";
	else if (a->sender_addr[0] && !streq(a->sender_addr, a->from_addr))
		why = "the mail's Sender: is not its From:";
	else if (methods & MAIL_AUTH_NONE)
		why = NULL;
	else if ((methods & MAIL_AUTH_DKIM) && any_aligned(a->from_domain, a->dkim, a->n_dkim))
		why = NULL;
	else if ((methods & MAIL_AUTH_AUTHRES) &&
		 any_aligned(a->from_domain, a->authres, a->n_authres))
		why = NULL;
	else
		why = "no DKIM signature of the From: domain verifies (and no trusted "
		      "Authentication-Results says one did)";
	if (ret_reason)
		*ret_reason = why;
	return !why;
}

const char *mail_auth_from_domain(const struct mail_auth *a)
{
	return a->from_domain;
}

const char *mail_auth_summary(const struct mail_auth *a)
{
	return a->summary;
}
