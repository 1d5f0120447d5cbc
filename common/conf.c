#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "conf.h"
#include "fileio.h"
#include "strutil.h"

#define CONFIG_ENTRIES_MAX 10000
#define CONFIG_FILE_MAX (4 * 1024 * 1024)

struct entry {
	char *section, *sub, *key, *value;
};

struct config {
	char *path;
	char *dir;
	struct entry *e;
	size_t n;
};

static void entry_clear(struct entry *e)
{
	free(e->section);
	free(e->sub);
	free(e->key);
	free(e->value);
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		entry_clear(&c->e[i]);
	free(c->e);
	free(c->path);
	free(c->dir);
	free(c);
}
DEFINE_CLEANUP(struct config, config_free)

const char *config_path(const struct config *c)
{
	return c->path ? c->path : "(defaults)";
}

static int config_add(struct config *c, const char *section, const char *sub,
		      const char *key, const char *value)
{
	struct entry *ne, e = { 0 };

	if (c->n >= CONFIG_ENTRIES_MAX)
		return -E2BIG;
	e.section = strdup(section);
	e.sub = sub ? strdup(sub) : NULL;
	e.key = strdup(key);
	e.value = strdup(value ? value : "");
	if (!e.section || (sub && !e.sub) || !e.key || !e.value) {
		entry_clear(&e);
		return -ENOMEM;
	}
	ne = realloc(c->e, (c->n + 1) * sizeof(*ne));
	if (!ne) {
		entry_clear(&e);
		return -ENOMEM;
	}
	c->e = ne;
	c->e[c->n++] = e;
	return 0;
}

int config_set(struct config *c, const char *section, const char *sub,
	       const char *key, const char *value)
{
	return config_add(c, section, sub, key, value);
}

int config_new_empty(struct config **ret)
{
	struct config *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

static const struct config_key *schema_find(const char *section, bool named,
					    const char *key)
{
	for (const struct config_key *k = config_schema; k->section; k++)
		if (strcasecmp(k->section, section) == 0 &&
		    strcasecmp(k->key, key) == 0 && k->named == named)
			return k;
	return NULL;
}

static bool schema_has_section(const char *section, bool named)
{
	for (const struct config_key *k = config_schema; k->section; k++)
		if (strcasecmp(k->section, section) == 0 && k->named == named)
			return true;
	return false;
}

static bool enum_has(const char *values, const char *v)
{
	size_t n = strlen(v);

	for (const char *p = values; p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && strncasecmp(p, v, n) == 0)
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

/* Returns a reason string when value does not fit k, NULL when it does. */
static const char *value_check(const struct config_key *k, const char *v,
			       char *tmp, size_t tmpsz)
{
	uint64_t u;
	int64_t i;
	char *end;
	bool b;

	switch (k->type) {
	case CONFIG_INT:
		errno = 0;
		i = strtoll(v, &end, 10);
		if (!*v || *end || errno)
			return "not a whole number";
		if (i < k->min || i > k->max) {
			snprintf(tmp, tmpsz, "out of range %lld..%lld",
				 (long long)k->min, (long long)k->max);
			return tmp;
		}
		return NULL;
	case CONFIG_BOOL:
		return parse_bool(v, &b) < 0 ? "not a boolean (yes/no/true/false)" : NULL;
	case CONFIG_DURATION:
		return parse_duration(v, &u) < 0 ? "not a duration (e.g. 30s, 5min, 2h)" : NULL;
	case CONFIG_SIZE:
		return parse_size(v, &u) < 0 ? "not a size (e.g. 64K, 10M)" : NULL;
	case CONFIG_ENUM:
		if (!enum_has(k->values, v)) {
			snprintf(tmp, tmpsz, "must be one of %s", k->values);
			return tmp;
		}
		return NULL;
	case CONFIG_PATH:
		return *v ? NULL : "empty path";
	case CONFIG_SECRET:
		if (startswith(v, "secret:") && !v[7])
			return "empty credential name";
		if (startswith(v, "secret:") && strchr(v + 7, '/'))
			return "credential name contains '/'";
		return NULL;
	case CONFIG_STRING:
	case CONFIG_LIST:
		return NULL;
	}
	return NULL;
}

/* Best-effort line lookup for a message: libgit2 does not keep line
 * numbers for parsed entries, so find the key's line under its section. */
static int locate_line(const char *path, const char *section, const char *sub,
		       const char *key)
{
	_cleanup_free_ char *data = NULL;
	bool in_section = false;
	size_t len;
	int line = 0;

	if (!path || read_file_bounded(path, CONFIG_FILE_MAX, &data, &len) < 0)
		return 0;
	for (char *p = data, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		char *s = p;

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		line++;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '[') {
			char want[512];

			if (sub)
				snprintf(want, sizeof(want), "[%s \"%s\"]", section, sub);
			else
				snprintf(want, sizeof(want), "[%s]", section);
			in_section = strncasecmp(s, want, strlen(want)) == 0;
			if (!key && in_section)
				return line;
			continue;
		}
		if (in_section && key && strncasecmp(s, key, strlen(key)) == 0) {
			char c = s[strlen(key)];

			if (c == '\0' || c == '=' || isspace((unsigned char)c))
				return line;
		}
	}
	return 0;
}

static int config_error(char **ret_error, const char *path, int line,
			const char *fmt, ...) _printf_(4, 5);
static int config_error(char **ret_error, const char *path, int line,
			const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ret_error) {
		char *s = NULL;

		if (line > 0 ? asprintf(&s, "%s:%d: %s", path, line, msg) < 0
			     : asprintf(&s, "%s: %s", path, msg) < 0)
			s = NULL;
		*ret_error = s;
	}
	return -EINVAL;
}

struct load_ctx {
	struct config *c;
	char **ret_error;
	int r;
};

static int load_entry(const git_config_entry *ge, void *payload)
{
	struct load_ctx *ctx = payload;
	const char *first = strchr(ge->name, '.'), *last = strrchr(ge->name, '.');
	_cleanup_free_ char *section = NULL, *sub = NULL, *ekey = NULL;
	const struct config_key *k;
	const char *why;
	char tmp[256];

	if (!first)
		return 0;
	section = strndup(ge->name, (size_t)(first - ge->name));
	ekey = strdup(last + 1);
	if (last > first)
		sub = strndup(first + 1, (size_t)(last - first - 1));
	if (!section || !ekey || (last > first && !sub))
		return ctx->r = -ENOMEM;
	if (strcasecmp(section, "include") == 0 || strcasecmp(section, "includeif") == 0)
		return 0;
	if (!schema_has_section(section, sub != NULL)) {
		ctx->r = config_error(ctx->ret_error, ctx->c->path,
				      locate_line(ctx->c->path, section, sub, NULL),
				      schema_has_section(section, sub == NULL)
					      ? "section [%s%s%s%s]: %s"
					      : "unknown section [%s%s%s%s]%s",
				      section, sub ? " \"" : "", sub ? sub : "",
				      sub ? "\"" : "",
				      schema_has_section(section, sub == NULL)
					      ? (sub ? "takes no name" : "needs a name, e.g. [section \"name\"]")
					      : "");
		return -1;
	}
	k = schema_find(section, sub != NULL, ekey);
	if (!k) {
		ctx->r = config_error(ctx->ret_error, ctx->c->path,
				      locate_line(ctx->c->path, section, sub, ekey),
				      "unknown key '%s'", ge->name);
		return -1;
	}
	why = value_check(k, ge->value ? ge->value : "", tmp, sizeof(tmp));
	if (why && k->type == CONFIG_SECRET) {
		/* a secret's value never reaches a message, not even in part */
		ctx->r = config_error(ctx->ret_error, ctx->c->path,
				      locate_line(ctx->c->path, section, sub, ekey),
				      "key '%s': the value (not shown: a secret) %s", ge->name, why);
		return -1;
	}
	if (why) {
		_cleanup_free_ char *esc = str_escape(ge->value ? ge->value : "",
						      strlen(ge->value ? ge->value : ""), 80);
		ctx->r = config_error(ctx->ret_error, ctx->c->path,
				      locate_line(ctx->c->path, section, sub, ekey),
				      "key '%s': value '%s' %s", ge->name,
				      esc ? esc : "?", why);
		return -1;
	}
	ctx->r = config_add(ctx->c, section, sub, ekey, ge->value);
	return ctx->r < 0 ? -1 : 0;
}

static int set_dir(struct config *c)
{
	char abs[PATH_MAX];
	char *slash;

	if (!realpath(c->path, abs))
		return negerrno();
	slash = strrchr(abs, '/');
	*slash = '\0';
	c->dir = strdup(abs[0] ? abs : "/");
	return c->dir ? 0 : -ENOMEM;
}

int config_load(const char *path, struct config **ret, char **ret_error)
{
	_cleanup_(config_freep) struct config *c = NULL;
	git_config *gc = NULL;
	struct load_ctx ctx;
	struct stat st;
	int r;

	if (ret_error)
		*ret_error = NULL;
	if (stat(path, &st) < 0)
		return config_error(ret_error, path, 0, "cannot read: %s",
				    strerror(errno)),
		       negerrno();
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX)
		return config_error(ret_error, path, 0,
				    "not a regular file of at most %d bytes",
				    CONFIG_FILE_MAX);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path)))
		return -ENOMEM;
	r = set_dir(c);
	if (r < 0)
		return r;
	git_libgit2_init();
	r = git_config_new(&gc);
	if (r == 0)
		r = git_config_add_file_ondisk(gc, path, GIT_CONFIG_LEVEL_APP, NULL, 0);
	if (r < 0) {
		const git_error *e = git_error_last();

		/* libgit2's message already carries "in FILE:LINE". */
		r = config_error(ret_error, path, 0, "%s",
				 e && e->message ? e->message : "parse error");
		git_config_free(gc);
		git_libgit2_shutdown();
		return r;
	}
	ctx = (struct load_ctx){ .c = c, .ret_error = ret_error };
	r = git_config_foreach(gc, load_entry, &ctx);
	git_config_free(gc);
	git_libgit2_shutdown();
	if (ctx.r < 0)
		return ctx.r;
	if (r < 0)
		return -EINVAL;
	*ret = TAKE_PTR(c);
	return 0;
}

static bool name_eq(const char *a, const char *b, bool case_sensitive)
{
	if (!a || !b)
		return a == b;
	return case_sensitive ? strcmp(a, b) == 0 : strcasecmp(a, b) == 0;
}

/* Last value wins, as in git. */
static const char *lookup(const struct config *c, const char *section,
			  const char *sub, const char *key)
{
	for (size_t i = c->n; i-- > 0;)
		if (name_eq(c->e[i].section, section, false) &&
		    name_eq(c->e[i].sub, sub, true) &&
		    name_eq(c->e[i].key, key, false))
			return c->e[i].value;
	return NULL;
}

int config_get_string(const struct config *c, const char *section,
		      const char *sub, const char *key, const char **ret)
{
	const struct config_key *k = schema_find(section, sub != NULL, key);
	const char *v = lookup(c, section, sub, key);

	if (!v && k)
		v = k->dflt;
	if (!v)
		return -ENOENT;
	*ret = v;
	return 0;
}

int config_get_int(const struct config *c, const char *section,
		   const char *sub, const char *key, int64_t *ret)
{
	const char *v;
	char *end;
	long long i;
	int r = config_get_string(c, section, sub, key, &v);

	if (r < 0)
		return r;
	errno = 0;
	i = strtoll(v, &end, 10);
	if (!*v || *end || errno)
		return -EINVAL;
	*ret = i;
	return 0;
}

int config_get_bool(const struct config *c, const char *section,
		    const char *sub, const char *key, bool *ret)
{
	const char *v;
	int r = config_get_string(c, section, sub, key, &v);

	return r < 0 ? r : parse_bool(v, ret);
}

int config_get_duration(const struct config *c, const char *section,
			const char *sub, const char *key, uint64_t *ret_usec)
{
	const char *v;
	int r = config_get_string(c, section, sub, key, &v);

	return r < 0 ? r : parse_duration(v, ret_usec);
}

int config_get_size(const struct config *c, const char *section,
		    const char *sub, const char *key, uint64_t *ret)
{
	const char *v;
	int r = config_get_string(c, section, sub, key, &v);

	return r < 0 ? r : parse_size(v, ret);
}

int config_get_path(const struct config *c, const char *section,
		    const char *sub, const char *key, char **ret)
{
	const char *v;
	char *p;
	int r = config_get_string(c, section, sub, key, &v);

	if (r < 0)
		return r;
	if (v[0] == '/' || !c->dir)
		p = strdup(v);
	else if (asprintf(&p, "%s/%s", c->dir, v) < 0)
		p = NULL;
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

int config_state_path(const struct config *c, const char *sub, char **ret)
{
	_cleanup_free_ char *state = NULL;
	int r = config_get_path(c, "kfix", NULL, "state-dir", &state);

	if (r < 0)
		return r;
	if (!sub) {
		*ret = TAKE_PTR(state);
		return 0;
	}
	if (sub[0] == '/' || asprintf(ret, "%s/%s", state, sub) < 0)
		return sub[0] == '/' ? -EINVAL : -ENOMEM;
	return 0;
}

static int read_secret_file(const char *path, char **ret)
{
	size_t len;
	char *data;
	int r = read_file_bounded(path, CONFIG_SECRET_MAX, &data, &len);

	if (r < 0)
		return r;
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		data[--len] = '\0';
	*ret = data;
	return 0;
}

int config_get_secret(const struct config *c, const char *section,
		      const char *sub, const char *key, char **ret)
{
	const char *v, *name;
	int r = config_get_string(c, section, sub, key, &v);

	if (r < 0)
		return r;
	if ((name = startswith(v, "secret:"))) {
		const char *dir = getenv("CREDENTIALS_DIRECTORY");
		_cleanup_free_ char *p = NULL;

		if (!dir)
			return -ENOKEY;
		/* LoadCredential=ID:DIR names a folder's files ID_FILENAME */
		if (asprintf(&p, "%s/%s", dir, name) < 0)
			return -ENOMEM;
		r = read_secret_file(p, ret);
		if (r != -ENOENT)
			return r;
		free(TAKE_PTR(p));
		if (asprintf(&p, "%s/kfix_%s", dir, name) < 0)
			return -ENOMEM;
		return read_secret_file(p, ret);
	}
	if ((name = startswith(v, "file:"))) {
		_cleanup_free_ char *p = NULL;

		if (name[0] != '/' && c->dir) {
			if (asprintf(&p, "%s/%s", c->dir, name) < 0)
				return -ENOMEM;
			return read_secret_file(p, ret);
		}
		return read_secret_file(name, ret);
	}
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

int config_each(const struct config *c,
		int (*fn)(const char *section, const char *sub, const char *key,
			  const char *value, enum config_type type, void *ud),
		void *ud)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct entry *e = &c->e[i];
		const struct config_key *k = schema_find(e->section, e->sub != NULL, e->key);
		int r;

		if (!k)
			continue;
		r = fn(e->section, e->sub, e->key, e->value, k->type, ud);
		if (r != 0)
			return r;
	}
	return 0;
}

int config_get_list(const struct config *c, const char *section,
		    const char *sub, const char *key, char ***ret)
{
	_cleanup_strv_ char **v = NULL;

	for (size_t i = 0; i < c->n; i++)
		if (name_eq(c->e[i].section, section, false) &&
		    name_eq(c->e[i].sub, sub, true) &&
		    name_eq(c->e[i].key, key, false)) {
			int r = strv_push(&v, c->e[i].value);

			if (r < 0)
				return r;
		}
	/* an unset list is its schema default, as any other key */
	if (!v) {
		const struct config_key *k = schema_find(section, sub != NULL, key);

		if (k && k->dflt && strv_push(&v, k->dflt) < 0)
			return -ENOMEM;
	}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

int config_subsections(const struct config *c, const char *section,
		       char ***ret)
{
	_cleanup_strv_ char **v = NULL;

	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].sub && name_eq(c->e[i].section, section, false) &&
		    !strv_contains(v, c->e[i].sub)) {
			int r = strv_push(&v, c->e[i].sub);

			if (r < 0)
				return r;
		}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}
