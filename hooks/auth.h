/* Authentication primitives: HMAC-SHA256 signatures of webhook bodies
 * and bearer tokens, all compared in constant time (OpenSSL libcrypto). */
#ifndef KFIX_HOOKS_AUTH_H
#define KFIX_HOOKS_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_SHA256_HEX_LEN 64

/* Lower-case hex of HMAC-SHA256(key, prefix || data); prefix may be NULL. */
int auth_hmac_sha256_hex(const char *key, const char *prefix, const void *data,
			 size_t len, char ret_hex[AUTH_SHA256_HEX_LEN + 1]);
/* Does hex (case-insensitive) equal HMAC-SHA256(key, prefix || data)?
 * The comparison takes the same time wherever the strings differ. */
bool auth_hmac_sha256_verify(const char *key, const char *prefix,
			     const void *data, size_t len, const char *hex);
/* Equal strings, compared through their SHA-256 digests so that neither
 * content nor length leaks through timing. */
bool auth_secret_equal(const char *a, const char *b);
/* A bearer token from an "Authorization: Bearer X" header, or NULL. */
const char *auth_bearer(const char *authorization);

#endif
