/* kfixd --check-config's second half: what the file says, checked the
 * way the daemon will use it.  The listen addresses are parsed as the
 * HTTP server parses them (it resolves no names), every secret is read as
 * the daemon reads it (a systemd credential needs the service's
 * $CREDENTIALS_DIRECTORY): problems, for the daemon would fail on them.
 * The placeholders of the shipped example (RFC 2606's example.org,
 * example.com, example.net) are named as warnings: tests and demos use
 * them on purpose. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/conf.h"
#include "common/strutil.h"
#include "daemon.h"
#include "hooks/http.h"

struct check {
	const struct config *cfg;
	const char *path;
	FILE *out;
	unsigned problems;
};

static void key_name(const char *section, const char *sub, const char *key, char *buf,
		     size_t n)
{
	snprintf(buf, n, "%s%s%s.%s", section, sub ? "." : "", sub ?: "", key);
}

/* A domain RFC 2606 reserves for examples, at a label boundary. */
static bool placeholder(const char *value)
{
	static const char *const reserved[] = { "example.org", "example.com", "example.net" };

	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		for (const char *p = value; (p = strcasestr(p, reserved[i])); p++)
			if ((p == value || strchr("@./:<", p[-1])) &&
			    !isalnum((unsigned char)p[strlen(reserved[i])]) &&
			    p[strlen(reserved[i])] != '-')
				return true;
	return false;
}

static int check_key(const char *section, const char *sub, const char *key, const char *value,
		     enum config_type type, void *ud)
{
	struct check *k = ud;
	char name[256];

	key_name(section, sub, key, name, sizeof(name));
	if (type == CONFIG_SECRET) {
		_cleanup_free_ char *v = NULL;
		int r = config_get_secret(k->cfg, section, sub, key, &v);

		if (r == -ENOMEM)
			return r;
		if (v)
			explicit_bzero(v, strlen(v));
		if (r == -ENOKEY) {
			fprintf(k->out, "kfixd: %s: key '%s': a systemd credential, which needs "
				"$CREDENTIALS_DIRECTORY (LoadCredential= of kfixd.service)\n", k->path, name);
			k->problems++;
		} else if (r < 0) {
			fprintf(k->out, "kfixd: %s: key '%s': the secret cannot be read: %s\n", k->path,
				name, strerror(-r));
			k->problems++;
		}
		return 0;
	}
	if (streq(section, "http") && !sub && streq(key, "listen") &&
	    http_address_check(value) < 0) {
		_cleanup_free_ char *e = str_escape(value, strlen(value), 80);

		fprintf(k->out, "kfixd: %s: key '%s': '%s' is not an IPv4 or [IPv6] address with a "
			"port (kfixd does not resolve names)\n", k->path, name, e ?: "?");
		k->problems++;
	}
	if (placeholder(value)) {
		_cleanup_free_ char *e = str_escape(value, strlen(value), 80);

		fprintf(k->out, "kfixd: %s: warning: key '%s': '%s' is a placeholder of the "
			"example (an RFC 2606 domain): set your own\n", k->path, name, e ?: "?");
	}
	return 0;
}

int daemon_check_config(const struct config *cfg, const char *path, FILE *out,
			unsigned *ret_problems)
{
	struct check k = { .cfg = cfg, .path = path, .out = out };
	int r = config_each(cfg, check_key, &k);

	if (r < 0)
		return r;
	*ret_problems = k.problems;
	return 0;
}
