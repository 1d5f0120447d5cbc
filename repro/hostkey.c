#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2.h>

#include "common/fileio.h"
#include "common/macro.h"
#include "hostkey.h"

static void session_freep(LIBSSH2_SESSION **s)
{
	if (*s)
		libssh2_session_free(*s);
}

static void knownhosts_freep(LIBSSH2_KNOWNHOSTS **k)
{
	if (*k)
		libssh2_knownhost_free(*k);
}

static char *base64(const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = tab[(v >> 18) & 63];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The key type is read from the blob itself (its leading SSH string), so
 * that callers need not map their library's own type enums. */
static int knownhost_type(const unsigned char *key, size_t len)
{
	static const struct {
		const char *name;
		int type;
	} types[] = {
		{ "ssh-rsa", LIBSSH2_KNOWNHOST_KEY_SSHRSA },
		{ "ssh-dss", LIBSSH2_KNOWNHOST_KEY_SSHDSS },
		{ "ecdsa-sha2-nistp256", LIBSSH2_KNOWNHOST_KEY_ECDSA_256 },
		{ "ecdsa-sha2-nistp384", LIBSSH2_KNOWNHOST_KEY_ECDSA_384 },
		{ "ecdsa-sha2-nistp521", LIBSSH2_KNOWNHOST_KEY_ECDSA_521 },
		{ "ssh-ed25519", LIBSSH2_KNOWNHOST_KEY_ED25519 },
	};
	uint32_t n;

	if (len < 4)
		return -1;
	n = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	if (n > len - 4)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strlen(types[i].name) == n && memcmp(key + 4, types[i].name, n) == 0)
			return types[i].type;
	return -1;
}

/* 1 when some line of the file lists the key (base64 of the blob) as a
 * whole word, whatever its host field. */
static int pinned_key_listed(const char *path, const char *b64)
{
	_cleanup_free_ char *data = NULL;
	size_t len, bl = strlen(b64);
	const char *p;
	int r;

	r = read_file_bounded(path, 1024 * 1024, &data, &len);
	if (r < 0)
		return r;
	for (p = data; (p = strstr(p, b64)); p += bl)
		if (p > data && (p[-1] == ' ' || p[-1] == '\t') &&
		    (p[bl] == '\0' || p[bl] == ' ' || p[bl] == '\t' || p[bl] == '\n' ||
		     p[bl] == '\r'))
			return 1;
	return 0;
}

/* A pinned file names the one key a freshly built guest has, under
 * whatever host name: an empty file pins nothing. */
static int verify_pinned(const struct hostkey_check *c, const void *key, size_t len,
			 int entries, enum hostkey_verdict *ret_verdict)
{
	_cleanup_free_ char *b64 = base64(key, len);
	int r;

	if (!b64)
		return -ENOMEM;
	r = pinned_key_listed(c->known_hosts, b64);
	if (r == -ENOMEM)
		return r;
	*ret_verdict = r < 0 ? HOSTKEY_UNREADABLE :
		       r > 0 ? HOSTKEY_MATCH :
		       entries > 0 ? HOSTKEY_MISMATCH : HOSTKEY_NOT_FOUND;
	return 0;
}

static enum hostkey_verdict checkp_verdict(int r)
{
	switch (r) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		return HOSTKEY_MATCH;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		return HOSTKEY_MISMATCH;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		return HOSTKEY_NOT_FOUND;
	default:
		return HOSTKEY_FAILURE;
	}
}

int hostkey_verify(const struct hostkey_check *c, const void *key, size_t len,
		   enum hostkey_verdict *ret_verdict)
{
	_cleanup_(session_freep) LIBSSH2_SESSION *s = NULL;
	_cleanup_(knownhosts_freep) LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct libssh2_knownhost *entry = NULL;
	int type, entries;

	if (!c->known_hosts) {
		*ret_verdict = HOSTKEY_NO_FILE;
		return 0;
	}
	if (!key || len == 0) {
		*ret_verdict = HOSTKEY_FAILURE;
		return 0;
	}
	/* libssh2 wants a session for its known_hosts API, not a connected one */
	s = libssh2_session_init();
	kh = s ? libssh2_knownhost_init(s) : NULL;
	if (!kh)
		return -ENOMEM;
	entries = libssh2_knownhost_readfile(kh, c->known_hosts, LIBSSH2_KNOWNHOST_FILE_OPENSSH);
	if (entries < 0) {
		*ret_verdict = HOSTKEY_UNREADABLE;
		return 0;
	}
	if (c->pin_any_host)
		return verify_pinned(c, key, len, entries, ret_verdict);
	type = knownhost_type(key, len);
	if (type < 0) {
		*ret_verdict = HOSTKEY_UNSUPPORTED;
		return 0;
	}
	*ret_verdict = checkp_verdict(libssh2_knownhost_checkp(
		kh, c->host, c->port, key, len,
		LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | type, &entry));
	return 0;
}

/* Scripts and tests grep for "MISMATCH" and "not in known_hosts": keep
 * those words. */
static const struct {
	const char *before, *after;
} messages[] = {
	[HOSTKEY_MATCH] = { "host key for ", " matches known_hosts" },
	[HOSTKEY_MISMATCH] = { "MISMATCHING host key for ",
			       " (HOST KEY MISMATCH with known_hosts): refusing to connect" },
	[HOSTKEY_NOT_FOUND] = { "unknown host key for ",
				" (not in known_hosts): refusing to connect" },
	[HOSTKEY_NO_FILE] = { "no known_hosts file configured for ",
			      ": refusing an unverified host key" },
	[HOSTKEY_UNREADABLE] = { "cannot read the known_hosts file for ",
				 ": refusing an unverified host key" },
	[HOSTKEY_UNSUPPORTED] = { "unsupported host key type for ", ": refusing to connect" },
	[HOSTKEY_FAILURE] = { "cannot verify the host key for ", ": refusing to connect" },
};

int hostkey_message(const struct hostkey_check *c, enum hostkey_verdict v, char **ret)
{
	char port[32] = "";
	char *m;

	if ((size_t)v >= ARRAY_SIZE(messages))
		v = HOSTKEY_FAILURE;
	if (c->port > 0 && c->port != 22)
		snprintf(port, sizeof(port), " port %d", c->port);
	if (asprintf(&m, "%s%s%s%s", messages[v].before, c->host ? c->host : "?", port,
		     messages[v].after) < 0)
		return -ENOMEM;
	*ret = m;
	return 0;
}
