/* String helpers: escaping untrusted text, number/duration/size parsing,
 * NULL-terminated string vectors. */
#ifndef KFIX_STRUTIL_H
#define KFIX_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b)
{
	return (a && b) ? strcmp(a, b) == 0 : a == b;
}
/* Returns the text after prefix, or NULL. */
static inline const char *startswith(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}
bool endswith(const char *s, const char *suffix);

/* Escapes untrusted bytes for a log line or terminal: printable ASCII is
 * kept, everything else becomes \n, \t or \xNN; output is cut after max
 * input bytes with "..." appended.  Returns NULL only on ENOMEM. */
char *str_escape(const char *s, size_t len, size_t max);
/* Lower-cases A-Z in place (whatever the locale): host names, addresses.
 * Returns s; NULL stays NULL. */
char *ascii_lower(char *s);
/* Untrusted multi-line text (a program's output, a kernel report) to
 * show as it is: newlines and tabs kept, other control and non-ASCII
 * bytes as '?', only the last max bytes kept.  NULL only on ENOMEM. */
char *str_printable_tail(const char *s, size_t len, size_t max);

/* Length of the well-formed UTF-8 sequence at s (at most avail bytes),
 * 0 when it is not one: overlong forms, surrogates, code points past
 * U+10FFFF and sequences cut short are all refused, as JSON parsers do. */
size_t utf8_seq_len(const char *s, size_t avail);
bool utf8_valid(const char *s, size_t len);
/* The longest prefix of s (len bytes) of at most max bytes that does not
 * end inside a UTF-8 sequence. */
size_t utf8_cut(const char *s, size_t len, size_t max);
/* A NUL-terminated copy of s with each byte that does not start a
 * well-formed sequence replaced by U+FFFD; valid text is kept byte for
 * byte. */
int utf8_repair(const char *s, size_t len, char **ret_text, size_t *ret_len);

int parse_uint64(const char *s, uint64_t *ret);
int parse_int(const char *s, int *ret);
/* "90", "90s", "5min", "2h", "1d", "250ms" -> microseconds. */
int parse_duration(const char *s, uint64_t *ret_usec);
/* "4096", "64K", "10M", "2G" (binary units) -> bytes. */
int parse_size(const char *s, uint64_t *ret_bytes);
int parse_bool(const char *s, bool *ret);

char *strdup_safe(const char *s); /* NULL stays NULL */
/* *dst[i] = strdup_safe(src[i]) for each i; false when any copy failed
 * (the ones made stay set, for the caller's cleanup to free). */
bool strdup_each(char **dst[], const char *const src[], size_t n);

/* The error convention: a function that fails returns a negative errno
 * and, when it can say more, a malloc'd message in a last parameter
 * "char **ret_error" (set only on failure; "const char **" when the text
 * is static).  A function that succeeds with a verdict (a mail not
 * authenticated, a reply not kept, a bisected revision found good or bad)
 * returns 0 and hands the verdict's explanation out in "ret_reason"
 * instead, so that a caller never takes a verdict for a failure.  Library codes (libgit2,
 * libssh2, curl, SQLite) are mapped to an errno before they leave the
 * module that calls the library. */

/* asprintf() as an expression, for "*ret_error = strdup_printf(...)":
 * NULL on ENOMEM. */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
/* Formats a message into *ret_error (when ret_error is not NULL; left NULL
 * on ENOMEM) and returns r, so that "return error_set(ret_error, -EINVAL,
 * ...)" reports and fails in one statement. */
int error_set(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);

/* A NULL-terminated vector of malloc'd strings. */
typedef char **strv_t;
void strv_free(char **v);
size_t strv_len(char *const *v);
int strv_push(char ***v, const char *s);
bool strv_contains(char *const *v, const char *s);
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}
#define _cleanup_strv_ _cleanup_(strv_freep)

#endif
