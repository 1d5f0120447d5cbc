#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "auth.h"

static void to_hex(const unsigned char *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

int auth_hmac_sha256_hex(const char *key, const char *prefix, const void *data,
			 size_t len, char ret_hex[AUTH_SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	/* fetching the algorithm is costly; it is immutable once fetched */
	static EVP_MAC *mac;
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_END,
	};
	size_t outl = 0;
	int ok;

	if (!mac)
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	ok = ctx && EVP_MAC_init(ctx, (const unsigned char *)key, strlen(key), params);
	if (ok && prefix)
		ok = EVP_MAC_update(ctx, (const unsigned char *)prefix, strlen(prefix));
	if (ok)
		ok = EVP_MAC_update(ctx, data, len);
	if (ok)
		ok = EVP_MAC_final(ctx, md, &outl, sizeof(md));
	EVP_MAC_CTX_free(ctx);
	mdlen = (unsigned int)outl;
	if (!ok || mdlen != 32)
		return -EIO;
	to_hex(md, mdlen, ret_hex);
	return 0;
}

bool auth_hmac_sha256_verify(const char *key, const char *prefix,
			     const void *data, size_t len, const char *hex)
{
	char want[AUTH_SHA256_HEX_LEN + 1], got[AUTH_SHA256_HEX_LEN + 1];
	size_t n;

	if (!key || !*key || !hex)
		return false;
	n = strlen(hex);
	if (n != AUTH_SHA256_HEX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		got[i] = (char)tolower((unsigned char)hex[i]);
	got[n] = '\0';
	if (auth_hmac_sha256_hex(key, prefix, data, len, want) < 0)
		return false;
	return CRYPTO_memcmp(want, got, AUTH_SHA256_HEX_LEN) == 0;
}

bool auth_secret_equal(const char *a, const char *b)
{
	unsigned char da[32], db[32];
	unsigned int la = 0, lb = 0;

	if (!a || !b || !*a || !*b)
		return false;
	if (!EVP_Digest(a, strlen(a), da, &la, EVP_sha256(), NULL) ||
	    !EVP_Digest(b, strlen(b), db, &lb, EVP_sha256(), NULL) || la != 32 ||
	    lb != 32)
		return false;
	return CRYPTO_memcmp(da, db, 32) == 0;
}

const char *auth_bearer(const char *authorization)
{
	if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return NULL;
	authorization += 7;
	while (*authorization == ' ')
		authorization++;
	return *authorization ? authorization : NULL;
}
