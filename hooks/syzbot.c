#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "syzbot.h"

#define SYZBOT_LINK_MAX 4096
#define SYZBOT_MAX_BUGS 100000
#define SYZBOT_MAX_CRASHES 1000

/* Decodes one entity at s ("&amp;" ...); returns its length or 0. */
static size_t entity(const char *s, char *ret_c)
{
	static const struct {
		const char *name;
		char c;
	} named[] = { { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
		      { "&quot;", '"' }, { "&apos;", '\'' } };
	unsigned long v;
	char *end;

	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		if (startswith(s, named[i].name)) {
			*ret_c = named[i].c;
			return strlen(named[i].name);
		}
	if (s[1] != '#')
		return 0;
	errno = 0;
	if (s[2] == 'x' || s[2] == 'X')
		v = strtoul(s + 3, &end, 16);
	else
		v = strtoul(s + 2, &end, 10);
	/* only printable ASCII is meaningful in a link */
	if (errno || *end != ';' || end == s + 2 || v < 0x20 || v > 0x7e)
		return 0;
	*ret_c = (char)v;
	return (size_t)(end - s) + 1;
}

int syzbot_link(const char *base_url, const char *link, char **ret)
{
	struct buf b = BUF_INIT(SYZBOT_LINK_MAX);
	size_t blen = strlen(base_url);
	int r = 0;

	if (!link || !*link)
		return -EINVAL;
	while (blen > 0 && base_url[blen - 1] == '/')
		blen--;
	if (link[0] == '/')
		r = buf_append(&b, base_url, blen);
	else if (!startswith(link, "https://") && !startswith(link, "http://"))
		return -EINVAL;
	for (const char *p = link; *p && r >= 0; p++) {
		char c = *p;
		size_t n = c == '&' ? entity(p, &c) : 0;

		if ((unsigned char)c < 0x20 || c == 0x7f || c == ' ') {
			r = -EINVAL;
			break;
		}
		r = buf_append(&b, &c, 1);
		if (n > 0)
			p += n - 1;
	}
	if (r < 0) {
		buf_free(&b);
		return r;
	}
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

char *syzbot_link_extid(const char *link)
{
	const char *p = strstr(link, "extid=");
	size_t n;

	if (!p || (p != link && p[-1] != '?' && p[-1] != '&'))
		return NULL;
	p += 6;
	n = strspn(p, "0123456789abcdefABCDEF");
	if (n == 0 || n > 64)
		return NULL;
	return strndup(p, n);
}

/* An optional string member: absent or null gives NULL, another type is
 * an error. */
static int opt_str(const json_t *o, const char *key, const char *where,
		   char **ret, char **ret_error)
{
	json_t *v = json_object_get(o, key);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return error_set(ret_error, -EBADMSG, "%s: \"%s\" is not a string", where, key);
	*ret = strdup(json_string_value(v));
	return *ret ? 0 : -ENOMEM;
}

static int opt_link(const json_t *o, const char *key, const char *where,
		    const char *base_url, char **ret, char **ret_error)
{
	_cleanup_free_ char *raw = NULL;
	int r = opt_str(o, key, where, &raw, ret_error);

	*ret = NULL;
	if (r < 0 || !raw || !*raw)
		return r;
	r = syzbot_link(base_url, raw, ret);
	if (r == -EINVAL)
		return error_set(ret_error, -EBADMSG, "%s: \"%s\" is not a usable link", where, key);
	return r;
}

static int count_array(const json_t *o, const char *key, const char *where,
		       size_t *ret, char **ret_error)
{
	json_t *v = json_object_get(o, key);

	*ret = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return error_set(ret_error, -EBADMSG, "%s: \"%s\" is not an array", where, key);
	*ret = json_array_size(v);
	return 0;
}

static int parse_top(const char *data, size_t len, json_t **ret, char **ret_error)
{
	json_error_t jerr;
	json_t *v;
	_cleanup_json_ json_t *j = NULL;
	int r = json_parse_bounded(data, len, SYZBOT_JSON_MAX, &j, &jerr);

	if (r == -E2BIG)
		return error_set(ret_error, -EBADMSG, "JSON larger than %u bytes", SYZBOT_JSON_MAX);
	if (r < 0)
		return error_set(ret_error, -EBADMSG, "not JSON: %s at line %d column %d",
				 jerr.text, jerr.line, jerr.column);
	if (!json_is_object(j))
		return error_set(ret_error, -EBADMSG, "top level is not an object");
	v = json_object_get(j, "version");
	if (!json_is_integer(v))
		return error_set(ret_error, -EBADMSG, "\"version\" missing or not an integer");
	if (json_integer_value(v) != 1)
		return error_set(ret_error, -EBADMSG, "unsupported version %lld",
				 (long long)json_integer_value(v));
	*ret = TAKE_PTR(j);
	return 0;
}

void syzbot_list_free(struct syzbot_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->bugs[i].title);
		free(l->bugs[i].link);
		free(l->bugs[i].extid);
		free(l->bugs[i].last_updated);
		free(l->bugs[i].fix_commit);
	}
	free(l->bugs);
	free(l);
}

/* The first fix commit's hash: 7 to 40 hex digits, else none. */
static char *first_fix_hash(const json_t *o)
{
	const char *h = json_string_value(json_object_get(json_array_get(json_object_get(o, "fix-commits"), 0),
						      "hash"));
	size_t n = h ? strspn(h, "0123456789abcdef") : 0;

	return h && n >= 7 && n <= 40 && !h[n] ? strdup(h) : NULL;
}

static int list_entry(const json_t *o, size_t i, const char *base_url,
		      struct syzbot_list_entry *e, char **ret_error)
{
	char where[48];
	int r;

	snprintf(where, sizeof(where), "Bugs[%zu]", i);
	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "%s is not an object", where);
	r = opt_str(o, "title", where, &e->title, ret_error);
	if (r >= 0)
		r = opt_link(o, "link", where, base_url, &e->link, ret_error);
	if (r >= 0)
		r = opt_str(o, "last-updated", where, &e->last_updated, ret_error);
	if (r >= 0)
		r = count_array(o, "fix-commits", where, &e->n_fix_commits, ret_error);
	if (r < 0)
		return r;
	if (!e->title || !e->link)
		return error_set(ret_error, -EBADMSG, "%s: \"title\" and \"link\" are required", where);
	e->extid = syzbot_link_extid(e->link);
	if (!e->extid)
		return error_set(ret_error, -EBADMSG, "%s: the link has no extid", where);
	e->fix_commit = first_fix_hash(o);
	return 0;
}

int syzbot_parse_list(const char *data, size_t len, const char *base_url,
		      struct syzbot_list **ret, char **ret_error)
{
	_cleanup_json_ json_t *j = NULL;
	_cleanup_(syzbot_list_freep) struct syzbot_list *l = NULL;
	json_t *bugs;
	int r = parse_top(data, len, &j, ret_error);

	if (r < 0)
		return r;
	bugs = json_object_get(j, "Bugs");
	if (!json_is_array(bugs) && !json_is_null(bugs))
		return error_set(ret_error, -EBADMSG, "\"Bugs\" missing or not an array");
	if (json_array_size(bugs) > SYZBOT_MAX_BUGS)
		return error_set(ret_error, -EBADMSG, "more than %d bugs", SYZBOT_MAX_BUGS);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->bugs = calloc(json_array_size(bugs) + 1, sizeof(*l->bugs));
	if (!l->bugs)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(bugs); i++) {
		r = list_entry(json_array_get(bugs, i), i, base_url, &l->bugs[l->n],
			       ret_error);
		l->n++;
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

static void crash_clear(struct syzbot_crash *c)
{
	free(c->title);
	free(c->syz_reproducer);
	free(c->c_reproducer);
	free(c->kernel_config);
	free(c->report_link);
	free(c->repro_opts);
	free(c->kernel_source_git);
	free(c->kernel_source_commit);
	free(c->syzkaller_git);
	free(c->syzkaller_commit);
}

void syzbot_bug_free(struct syzbot_bug *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_crashes; i++)
		crash_clear(&b->crashes[i]);
	free(b->crashes);
	free(b->title);
	free(b->id);
	free(b->status);
	free(b->extid);
	free(b->first_crash);
	free(b->last_crash);
	free(b->fix_time);
	free(b->close_time);
	free(b);
}

static int parse_crash(const json_t *o, size_t i, const char *base_url,
		       struct syzbot_crash *c, char **ret_error)
{
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{ "title", offsetof(struct syzbot_crash, title) },
		{ "repro-opts", offsetof(struct syzbot_crash, repro_opts) },
		{ "kernel-source-git", offsetof(struct syzbot_crash, kernel_source_git) },
		{ "kernel-source-commit", offsetof(struct syzbot_crash, kernel_source_commit) },
		{ "syzkaller-git", offsetof(struct syzbot_crash, syzkaller_git) },
		{ "syzkaller-commit", offsetof(struct syzbot_crash, syzkaller_commit) },
	}, links[] = {
		{ "syz-reproducer", offsetof(struct syzbot_crash, syz_reproducer) },
		{ "c-reproducer", offsetof(struct syzbot_crash, c_reproducer) },
		{ "kernel-config", offsetof(struct syzbot_crash, kernel_config) },
		{ "crash-report-link", offsetof(struct syzbot_crash, report_link) },
	};
	char where[48];
	int r = 0;

	snprintf(where, sizeof(where), "crashes[%zu]", i);
	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "%s is not an object", where);
	for (size_t k = 0; k < ARRAY_SIZE(strs) && r >= 0; k++)
		r = opt_str(o, strs[k].key, where, (char **)((char *)c + strs[k].off),
			    ret_error);
	for (size_t k = 0; k < ARRAY_SIZE(links) && r >= 0; k++)
		r = opt_link(o, links[k].key, where, base_url,
			     (char **)((char *)c + links[k].off), ret_error);
	return r;
}

int syzbot_parse_bug(const char *data, size_t len, const char *base_url,
		     struct syzbot_bug **ret, char **ret_error)
{
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{ "title", offsetof(struct syzbot_bug, title) },
		{ "id", offsetof(struct syzbot_bug, id) },
		{ "status", offsetof(struct syzbot_bug, status) },
		{ "extid", offsetof(struct syzbot_bug, extid) },
		{ "first-crash", offsetof(struct syzbot_bug, first_crash) },
		{ "last-crash", offsetof(struct syzbot_bug, last_crash) },
		{ "fix-time", offsetof(struct syzbot_bug, fix_time) },
		{ "close-time", offsetof(struct syzbot_bug, close_time) },
	};
	_cleanup_json_ json_t *j = NULL;
	_cleanup_(syzbot_bug_freep) struct syzbot_bug *b = NULL;
	json_t *crashes;
	int r = parse_top(data, len, &j, ret_error);

	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t k = 0; k < ARRAY_SIZE(strs) && r >= 0; k++)
		r = opt_str(j, strs[k].key, "bug", (char **)((char *)b + strs[k].off),
			    ret_error);
	if (r >= 0)
		r = count_array(j, "fix-commits", "bug", &b->n_fix_commits, ret_error);
	if (r < 0)
		return r;
	if (!b->title || !*b->title)
		return error_set(ret_error, -EBADMSG, "bug: \"title\" is required");
	if (b->extid && !*b->extid)
		return error_set(ret_error, -EBADMSG, "bug: \"extid\" is empty");
	crashes = json_object_get(j, "crashes");
	if (crashes && !json_is_array(crashes) && !json_is_null(crashes))
		return error_set(ret_error, -EBADMSG, "bug: \"crashes\" is not an array");
	if (json_array_size(crashes) > SYZBOT_MAX_CRASHES)
		return error_set(ret_error, -EBADMSG, "bug: more than %d crashes", SYZBOT_MAX_CRASHES);
	b->crashes = calloc(json_array_size(crashes) + 1, sizeof(*b->crashes));
	if (!b->crashes)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(crashes); i++) {
		r = parse_crash(json_array_get(crashes, i), i, base_url,
				&b->crashes[b->n_crashes], ret_error);
		b->n_crashes++;
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(b);
	return 0;
}

const struct syzbot_crash *syzbot_bug_pick_crash(const struct syzbot_bug *b,
						 bool need_c)
{
	for (size_t i = 0; i < b->n_crashes; i++)
		if (b->crashes[i].c_reproducer)
			return &b->crashes[i];
	if (need_c)
		return NULL;
	for (size_t i = 0; i < b->n_crashes; i++)
		if (b->crashes[i].syz_reproducer)
			return &b->crashes[i];
	return b->n_crashes > 0 ? &b->crashes[0] : NULL;
}
