#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "strutil.h"

int json_parse_bounded(const char *data, size_t len, size_t max, json_t **ret,
		       json_error_t *err)
{
	json_t *j;

	if (len > max)
		return -E2BIG;
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES, err);
	if (!j)
		return -EBADMSG;
	*ret = j;
	return 0;
}

const char *json_get_str(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

char *json_get_strdup(const json_t *obj, const char *key)
{
	const char *s = json_get_str(obj, key);

	return s ? strdup(s) : NULL;
}

int64_t json_get_int(const json_t *obj, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

bool json_get_bool(const json_t *obj, const char *key, bool dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

int json_print(const json_t *j)
{
	if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return -EIO;
	fputc('\n', stdout);
	return fflush(stdout) == 0 ? 0 : -EIO;
}

json_t *json_text(const char *s, size_t len)
{
	_cleanup_free_ char *fixed = NULL;
	size_t n;

	if (utf8_valid(s, len))
		return json_stringn_nocheck(s, len);
	if (utf8_repair(s, len, &fixed, &n) < 0)
		return NULL;
	return json_stringn_nocheck(fixed, n);
}

json_t *json_str_or_null(const char *s)
{
	return s ? json_text(s, strlen(s)) : json_null();
}
