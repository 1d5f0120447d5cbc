/* SSH server host key verification against an OpenSSH known_hosts file,
 * shared by every SSH client in kfix (build host, VM host, guest, git
 * push) so that they refuse the same keys with the same words. */
#ifndef KFIX_REPRO_HOSTKEY_H
#define KFIX_REPRO_HOSTKEY_H

#include <stdbool.h>
#include <stddef.h>

enum hostkey_verdict {
	HOSTKEY_MATCH,
	HOSTKEY_MISMATCH,    /* listed with another key: maybe an attack */
	HOSTKEY_NOT_FOUND,   /* not listed: keys are never learnt on first use */
	HOSTKEY_NO_FILE,     /* no known_hosts configured */
	HOSTKEY_UNREADABLE,  /* known_hosts cannot be read or parsed */
	HOSTKEY_UNSUPPORTED, /* a key type libssh2 cannot compare */
	HOSTKEY_FAILURE,     /* no key offered, or libssh2 failed */
};

struct hostkey_check {
	const char *known_hosts; /* NULL: none configured */
	const char *host;
	int port;	   /* < 0: the default port */
	bool pin_any_host; /* the file pins a key whatever its host field */
};

/* Checks the server's key blob (as libssh2_session_hostkey() gives it).
 * -ENOMEM is the only error; every refusal is a verdict. */
int hostkey_verify(const struct hostkey_check *c, const void *key, size_t len,
		   enum hostkey_verdict *ret_verdict);

/* The sentence that explains a verdict, naming the host. */
int hostkey_message(const struct hostkey_check *c, enum hostkey_verdict v, char **ret);

#endif
