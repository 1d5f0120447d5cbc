#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <strings.h>

#include "buf.h"
#include "strutil.h"

bool endswith(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

char *ascii_lower(char *s)
{
	for (char *p = s; p && *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return s;
}

char *str_escape(const char *s, size_t len, size_t max)
{
	_cleanup_buf_ struct buf b = BUF_INIT(max * 4 + 8);
	size_t n = MIN(len, max);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int r;

		if (c == '\n')
			r = buf_puts(&b, "\\n");
		else if (c == '\t')
			r = buf_puts(&b, "\\t");
		else if (c == '\\')
			r = buf_puts(&b, "\\\\");
		else if (c < 0x20 || c >= 0x7f)
			r = buf_printf(&b, "\\x%02x", c);
		else
			r = buf_append(&b, &c, 1);
		if (r < 0)
			return NULL;
	}
	if (len > max && buf_puts(&b, "...") < 0)
		return NULL;
	return buf_steal(&b, NULL);
}

char *str_printable_tail(const char *s, size_t len, size_t max)
{
	size_t from = len > max ? len - max : 0;
	char *out = malloc(len - from + 1);

	if (!out)
		return NULL;
	for (size_t i = from; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i - from] = c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[len - from] = '\0';
	return out;
}

/* Second-byte range for each lead byte, from the Unicode table of
 * well-formed sequences: the narrow ranges exclude overlong forms (E0,
 * F0), surrogates (ED) and code points past U+10FFFF (F4). */
static bool utf8_lead(unsigned char c, size_t *ret_n, unsigned char *ret_lo,
		      unsigned char *ret_hi)
{
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		   c >= 0xf0 && c <= 0xf4 ? 4 : 0;

	if (n == 0)
		return false;
	*ret_n = n;
	*ret_lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	*ret_hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	return true;
}

size_t utf8_seq_len(const char *s, size_t avail)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo, hi;
	size_t n;

	if (avail == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (!utf8_lead(p[0], &n, &lo, &hi) || n > avail || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	size_t n = len;

	if (n <= max)
		return n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

bool utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, k; i < len; i += k)
		if ((k = utf8_seq_len(s + i, len - i)) == 0)
			return false;
	return true;
}

int utf8_repair(const char *s, size_t len, char **ret_text, size_t *ret_len)
{
	char *out;
	size_t o = 0;

	/* each bad byte grows to three */
	if (len > (SIZE_MAX - 1) / 3)
		return -ENOMEM;
	out = malloc(3 * len + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0, k; i < len; i += k) {
		k = utf8_seq_len(s + i, len - i);
		if (k > 0) {
			memcpy(out + o, s + i, k);
			o += k;
			continue;
		}
		memcpy(out + o, "\xef\xbf\xbd", 3);
		o += 3;
		k = 1;
	}
	out[o] = '\0';
	*ret_text = out;
	*ret_len = o;
	return 0;
}

int parse_int(const char *s, int *ret)
{
	long v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE || v > INT32_MAX || v < INT32_MIN)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

struct unit {
	const char *name;
	uint64_t mult;
};

static int parse_with_units(const char *s, const struct unit *units,
			    uint64_t dflt, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	while (*end == ' ')
		end++;
	if (!*end) {
		if (v > UINT64_MAX / dflt)
			return -ERANGE;
		*ret = v * dflt;
		return 0;
	}
	for (; units->name; units++)
		if (strcasecmp(end, units->name) == 0) {
			if (units->mult && v > UINT64_MAX / units->mult)
				return -ERANGE;
			*ret = v * units->mult;
			return 0;
		}
	return -EINVAL;
}

int parse_uint64(const char *s, uint64_t *ret)
{
	static const struct unit none[] = { { NULL, 0 } };

	return parse_with_units(s, none, 1, ret);
}

int parse_duration(const char *s, uint64_t *ret_usec)
{
	static const struct unit units[] = {
		{ "us", 1 },		 { "ms", 1000 },
		{ "s", 1000000 },	 { "sec", 1000000 },
		{ "m", 60000000 },	 { "min", 60000000 },
		{ "h", 3600000000ULL },	 { "hour", 3600000000ULL },
		{ "d", 86400000000ULL }, { "day", 86400000000ULL },
		{ NULL, 0 },
	};
	return parse_with_units(s, units, 1000000, ret_usec);
}

int parse_size(const char *s, uint64_t *ret_bytes)
{
	static const struct unit units[] = {
		{ "B", 1 },		    { "K", 1024 },
		{ "KiB", 1024 },	    { "M", 1024 * 1024 },
		{ "MiB", 1024 * 1024 },	    { "G", 1024ULL * 1024 * 1024 },
		{ "GiB", 1024ULL * 1024 * 1024 }, { NULL, 0 },
	};
	return parse_with_units(s, units, 1, ret_bytes);
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

char *strdup_safe(const char *s)
{
	return s ? strdup(s) : NULL;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_push(char ***v, const char *s)
{
	size_t n = strv_len(*v);
	char **nv;
	char *c;

	c = strdup(s);
	if (!c)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(c);
		return -ENOMEM;
	}
	nv[n] = c;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

bool strv_contains(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (streq(*v, s))
			return true;
	return false;
}

char *strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int error_set(char **ret_error, int r, const char *fmt, ...)
{
	va_list ap;

	if (ret_error) {
		va_start(ap, fmt);
		if (vasprintf(ret_error, fmt, ap) < 0)
			*ret_error = NULL;
		va_end(ap);
	}
	return r;
}

bool strdup_each(char **dst[], const char *const src[], size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		*dst[i] = strdup_safe(src[i]);
		if (src[i] && !*dst[i])
			ok = false;
	}
	return ok;
}
