/* Small helpers over jansson for reading untrusted JSON and for writing
 * untrusted text into JSON. */
#ifndef KFIX_JSON_H
#define KFIX_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* jansson ships json_decrefp() for its own json_auto_t. */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* Parses at most max bytes; -E2BIG if larger, -EBADMSG with a message in
 * *ret_error (static storage in err) when not JSON. */
int json_parse_bounded(const char *data, size_t len, size_t max, json_t **ret,
		       json_error_t *err);
/* A string member, or NULL when absent or not a string. */
const char *json_get_str(const json_t *obj, const char *key);
/* A copy of that member; NULL when absent (or on ENOMEM). */
char *json_get_strdup(const json_t *obj, const char *key);
int64_t json_get_int(const json_t *obj, const char *key, int64_t dflt);
bool json_get_bool(const json_t *obj, const char *key, bool dflt);
/* A JSON string from any bytes (invalid UTF-8 becomes U+FFFD, which
 * jansson would refuse), or null for NULL.  NULL only on ENOMEM. */
json_t *json_str_or_null(const char *s);
json_t *json_text(const char *s, size_t len);
/* Writes j to stdout, indented, with a final newline. */
int json_print(const json_t *j);

#endif
