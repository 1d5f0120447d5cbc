/* Regexes of the oops table, compiled once (PCRE2 with JIT when
 * available).  Every match runs on a bounded text (lines are cut at
 * REPORT_LINE_MAX, reports at REPORT_TEXT_MAX) and under a match limit, so
 * a hostile log cannot make matching super-linear in the input size. */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "report-internal.h"

#define RE_CACHE_SIZE 2048 /* power of two, far above the table's size */
#define RE_MATCH_LIMIT 200000
#define RE_DEPTH_LIMIT 10000

struct re_slot {
	const void *pattern;
	pcre2_code *code; /* NULL: the pattern does not compile */
};

static struct re_slot cache[RE_CACHE_SIZE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pcre2_match_context *match_ctx;

static const struct {
	const char *macro;
	const char *expansion;
} macros[] = {
	{ "{{ADDR}}", "0x[0-9a-f]+" },
	{ "{{PC}}", "\\[\\<?(?:0x)?[0-9a-f]+\\>?\\]" },
	{ "{{FUNC}}", "([a-zA-Z0-9_]+)(?:\\.|\\+)" },
	{ "{{SRC}}", "([a-zA-Z0-9-_/.]+\\.[a-z]+:[0-9]+)" },
	{ "{{TASK}}", "[\\s\\S]{0,100}?" },
};

static char *expand_macros(const char *pattern)
{
	struct buf b = BUF_INIT(64 * 1024);

	for (const char *p = pattern; *p;) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(macros); i++)
			if (strncmp(p, macros[i].macro, strlen(macros[i].macro)) == 0)
				break;
		if (i < ARRAY_SIZE(macros)) {
			if (buf_puts(&b, macros[i].expansion) < 0)
				return buf_free(&b), NULL;
			p += strlen(macros[i].macro);
		} else {
			if (buf_append(&b, p, 1) < 0)
				return buf_free(&b), NULL;
			p++;
		}
	}
	if (!b.data && buf_append(&b, "", 0) < 0)
		return NULL;
	return buf_steal(&b, NULL);
}

static pcre2_code *compile(const char *pattern)
{
	_cleanup_free_ char *expanded = expand_macros(pattern);
	pcre2_code *code;
	PCRE2_SIZE erroff;
	int err;

	if (!expanded)
		return NULL;
	code = pcre2_compile((PCRE2_SPTR)expanded, PCRE2_ZERO_TERMINATED, 0, &err, &erroff, NULL);
	if (!code)
		return NULL;
	/* JIT is an optimisation only: the interpreter gives the same answers. */
	(void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
	return code;
}

/* Joins a NULL-terminated list into one alternation. */
static char *join_list(const char *const *list)
{
	struct buf b = BUF_INIT(64 * 1024);

	for (size_t i = 0; list[i]; i++)
		if (buf_printf(&b, "%s(?:%s)", i ? "|" : "", list[i]) < 0)
			return buf_free(&b), NULL;
	return buf_steal(&b, NULL);
}

/* key is a pattern string, or a list of patterns when is_list. */
static pcre2_code *lookup_key(const void *key, bool is_list)
{
	uintptr_t h = ((uintptr_t)key >> 3) * 0x9E3779B97F4A7C15ull;
	pcre2_code *code = NULL;

	pthread_mutex_lock(&cache_lock);
	if (!match_ctx) {
		match_ctx = pcre2_match_context_create(NULL);
		if (match_ctx) {
			pcre2_set_match_limit(match_ctx, RE_MATCH_LIMIT);
			pcre2_set_depth_limit(match_ctx, RE_DEPTH_LIMIT);
		}
	}
	for (size_t i = 0; i < RE_CACHE_SIZE; i++) {
		struct re_slot *s = &cache[(h + i) & (RE_CACHE_SIZE - 1)];

		if (s->pattern == key) {
			code = s->code;
			break;
		}
		if (!s->pattern) {
			s->pattern = key;
			if (is_list) {
				_cleanup_free_ char *joined = join_list(key);

				s->code = code = joined ? compile(joined) : NULL;
			} else
				s->code = code = compile(key);
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return code;
}

static pcre2_code *lookup(const char *pattern)
{
	return lookup_key(pattern, false);
}

bool re_match_any(const char *const *list, const char *s, size_t len)
{
	pcre2_code *code;
	pcre2_match_data *md;
	int rc;

	if (!list || !list[0])
		return false;
	code = lookup_key(list, true);
	if (!code)
		return false;
	md = pcre2_match_data_create(1, NULL);
	if (!md)
		return false;
	rc = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, md, match_ctx);
	pcre2_match_data_free(md);
	return rc >= 0; /* 0: matched, more groups than the ovector holds */
}

int re_search(const char *pattern, const char *s, size_t len, size_t start,
	      size_t ovec[2 * RE_MAX_GROUPS])
{
	pcre2_code *code = lookup(pattern);
	pcre2_match_data *md;
	PCRE2_SIZE *v;
	int rc;

	if (!code || start > len)
		return 0;
	md = pcre2_match_data_create(RE_MAX_GROUPS, NULL);
	if (!md)
		return 0;
	rc = pcre2_match(code, (PCRE2_SPTR)s, len, start, 0, md, match_ctx);
	if (rc == 0)
		rc = RE_MAX_GROUPS;
	if (rc < 0) {
		pcre2_match_data_free(md);
		return 0;
	}
	v = pcre2_get_ovector_pointer(md);
	for (int i = 0; i < RE_MAX_GROUPS; i++) {
		bool set = i < rc && v[2 * i] != PCRE2_UNSET;

		ovec[2 * i] = set ? v[2 * i] : SIZE_MAX;
		ovec[2 * i + 1] = set ? v[2 * i + 1] : SIZE_MAX;
	}
	pcre2_match_data_free(md);
	return rc;
}

static int check(const char *pattern)
{
	return pattern && !lookup(pattern) ? -EINVAL : 0;
}

static int check_stack(const struct stack_fmt *sf)
{
	if (!sf)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(sf->parts); i++) {
		if (sf->parts[i] && strcmp(sf->parts[i], STACK_TRACE) != 0 && check(sf->parts[i]) < 0)
			return -EINVAL;
		if (sf->parts2[i] && strcmp(sf->parts2[i], STACK_TRACE) != 0 && check(sf->parts2[i]) < 0)
			return -EINVAL;
	}
	return 0;
}

int re_init(void)
{
	for (size_t i = 0; i < report_n_oopses; i++) {
		const struct oops *o = &report_oopses[i];

		for (const struct oops_format *f = o->formats; f->title; f++)
			if (check(f->title) < 0 || check(f->report) < 0 || check_stack(f->stack) < 0)
				return -EINVAL;
		for (const char *const *s = o->suppressions; *s; s++)
			if (check(*s) < 0)
				return -EINVAL;
	}
	for (const char *const *s = report_stack_starts; *s; s++)
		if (check(*s) < 0)
			return -EINVAL;
	for (const char *const *s = report_frame_res; *s; s++)
		if (check(*s) < 0)
			return -EINVAL;
	for (const char *const *s = report_guilty_ignores; *s; s++)
		if (check(*s) < 0)
			return -EINVAL;
	for (const char *const *s = report_guilty_line_ignores; *s; s++)
		if (check(*s) < 0)
			return -EINVAL;
	for (const struct line_pattern *p = report_log_suppressions; p->literal; p++)
		if (check(p->regex) < 0)
			return -EINVAL;
	return 0;
}
