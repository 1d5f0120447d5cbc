#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "forge.h"

#define FORGE_COMMENT_MAX (256u * 1024)

static const char *const provider_names[] = {
	[FORGE_GITHUB] = "github",
	[FORGE_GITEA] = "gitea",
	[FORGE_FORGEJO] = "forgejo",
	[FORGE_GITLAB] = "gitlab",
};

static const char *const event_headers[] = {
	[FORGE_GITHUB] = "X-GitHub-Event",
	[FORGE_GITEA] = "X-Gitea-Event",
	[FORGE_FORGEJO] = "X-Forgejo-Event",
	[FORGE_GITLAB] = "X-Gitlab-Event",
};

static const char *const commands[] = { "repair", "retest", "upstream", "reject" };

int forge_provider_from_string(const char *s, enum forge_provider *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(provider_names); i++)
		if (s && streq(s, provider_names[i])) {
			*ret = (enum forge_provider)i;
			return 0;
		}
	return -EINVAL;
}

const char *forge_provider_to_string(enum forge_provider p)
{
	return p < _FORGE_PROVIDER_MAX ? provider_names[p] : "unknown";
}

const char *forge_event_header(enum forge_provider p)
{
	return p < _FORGE_PROVIDER_MAX ? event_headers[p] : NULL;
}

const char *forge_kind_to_string(enum forge_kind k)
{
	static const char *const names[] = { "ping", "push", "comment", "other" };

	return k <= FORGE_OTHER ? names[k] : "unknown";
}

/* The value at a path of object members (a NULL-terminated list), or NULL. */
static const json_t *path_vget(const json_t *j, va_list ap)
{
	const char *key;

	while (j && (key = va_arg(ap, const char *)))
		j = json_is_object(j) ? json_object_get(j, key) : NULL;
	return j;
}

static const char *path_str(const json_t *j, ...)
{
	va_list ap;

	va_start(ap, j);
	j = path_vget(j, ap);
	va_end(ap);
	return json_is_string(j) ? json_string_value(j) : NULL;
}

/* A positive integer at a path, or 0. */
static int64_t path_int(const json_t *j, ...)
{
	va_list ap;

	va_start(ap, j);
	j = path_vget(j, ap);
	va_end(ap);
	return json_is_integer(j) && json_integer_value(j) > 0 ? (int64_t)json_integer_value(j) : 0;
}

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

void forge_event_free(struct forge_event *e)
{
	if (!e)
		return;
	free(e->repo);
	free(e->ref);
	free(e->after);
	free(e->branch);
	free(e->author);
	free(e->body);
	free(e->command);
	free(e);
}

int forge_find_kfix_branch(const char *s, int64_t *ret_bug, int *ret_version)
{
	for (const char *p = s ? strstr(s, "kfix/") : NULL; p; p = strstr(p + 1, "kfix/")) {
		unsigned long long bug;
		unsigned v;
		int n = 0;

		if (p != s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (!isdigit((unsigned char)p[5]))
			continue;
		if (sscanf(p, "kfix/%llu/v%u%n", &bug, &v, &n) != 2 || n == 0 ||
		    bug == 0 || bug > INT64_MAX || v == 0 || v > 10000)
			continue;
		if (isalnum((unsigned char)p[n]))
			continue;
		*ret_bug = (int64_t)bug;
		*ret_version = (int)v;
		return 0;
	}
	return -ENOENT;
}

int kfix_command_find(const char *text, char **ret_word)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *p = startswith(line, "#kfix");

		if (p && (*p == ' ' || *p == '\t' || *p == ':')) {
			size_t n;

			p += strspn(p, " \t:");
			n = strcspn(p, " \t\r\n");
			for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
				if (n == strlen(commands[i]) && strncmp(p, commands[i], n) == 0) {
					*ret_word = strdup(commands[i]);
					return *ret_word ? 0 : -ENOMEM;
				}
			return -EINVAL;
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

/* The kind from the event header value, per provider. */
static enum forge_kind classify(enum forge_provider p, const char *type)
{
	if (!type)
		return FORGE_OTHER;
	if (p == FORGE_GITLAB) {
		if (streq(type, "Push Hook"))
			return FORGE_PUSH;
		if (streq(type, "Note Hook"))
			return FORGE_COMMENT;
		return FORGE_OTHER;
	}
	if (streq(type, "ping"))
		return FORGE_PING;
	if (streq(type, "push"))
		return FORGE_PUSH;
	if (streq(type, "issue_comment") || streq(type, "pull_request_comment") ||
	    streq(type, "pull_request_review_comment") ||
	    streq(type, "pull_request_review"))
		return FORGE_COMMENT;
	return FORGE_OTHER;
}

static int parse_push(enum forge_provider p, const json_t *j, struct forge_event *e,
		      char **ret_error)
{
	const char *ref = path_str(j, "ref", NULL);
	const char *after = path_str(j, "after", NULL);
	const char *repo = p == FORGE_GITLAB ? path_str(j, "project", "path_with_namespace", NULL)
					     : path_str(j, "repository", "full_name", NULL);
	const char *who = p == FORGE_GITLAB ? path_str(j, "user_username", NULL)
					    : path_str(j, "sender", "login", NULL);
	int r;

	if (!ref || !after || !repo)
		return error_set(ret_error, -EBADMSG, "push event without ref, after or repository");
	r = dup_opt(ref, &e->ref);
	if (r >= 0)
		r = dup_opt(after, &e->after);
	if (r >= 0)
		r = dup_opt(repo, &e->repo);
	if (r >= 0)
		r = dup_opt(who, &e->author);
	if (r >= 0 && forge_find_kfix_branch(ref, &e->bug, &e->version) >= 0)
		r = asprintf(&e->branch, "kfix/%lld/v%d", (long long)e->bug, e->version) < 0
			    ? -ENOMEM : 0;
	return r;
}

/* The thread a comment was made in and the comment's id. */
static void comment_thread(enum forge_provider p, const json_t *j, struct forge_event *e)
{
	if (p == FORGE_GITLAB) {
		e->number = path_int(j, "merge_request", "iid", NULL);
		e->project = path_int(j, "project", "id", NULL);
		e->comment_id = path_int(j, "object_attributes", "id", NULL);
		return;
	}
	e->number = path_int(j, "issue", "number", NULL);
	if (!e->number)
		e->number = path_int(j, "pull_request", "number", NULL);
	e->comment_id = path_int(j, "comment", "id", NULL);
	if (!e->comment_id)
		e->comment_id = path_int(j, "review", "id", NULL);
}

/* Where the reviewed branch is named, most specific first. */
static void comment_places(enum forge_provider p, const json_t *j, const char *out[4])
{
	if (p == FORGE_GITLAB) {
		out[0] = path_str(j, "merge_request", "source_branch", NULL);
		out[1] = path_str(j, "merge_request", "title", NULL);
		out[2] = path_str(j, "issue", "title", NULL);
	} else {
		out[0] = path_str(j, "pull_request", "head", "ref", NULL);
		out[1] = path_str(j, "pull_request", "title", NULL);
		out[2] = path_str(j, "issue", "title", NULL);
	}
	out[3] = NULL;
}

static int parse_comment(enum forge_provider p, const json_t *j,
			 struct forge_event *e, char **ret_error)
{
	const char *body, *who, *repo, *places[4];
	int r;

	if (p == FORGE_GITLAB) {
		body = path_str(j, "object_attributes", "note", NULL);
		who = path_str(j, "user", "username", NULL);
		repo = path_str(j, "project", "path_with_namespace", NULL);
	} else {
		body = path_str(j, "comment", "body", NULL);
		if (!body)
			body = path_str(j, "review", "body", NULL);
		who = path_str(j, "comment", "user", "login", NULL);
		if (!who)
			who = path_str(j, "sender", "login", NULL);
		repo = path_str(j, "repository", "full_name", NULL);
	}
	if (!body || !repo)
		return error_set(ret_error, -EBADMSG, "comment event without body or repository");
	if (strlen(body) > FORGE_COMMENT_MAX)
		return error_set(ret_error, -EBADMSG, "comment longer than %u bytes", FORGE_COMMENT_MAX);
	r = dup_opt(body, &e->body);
	if (r >= 0)
		r = dup_opt(who, &e->author);
	if (r >= 0)
		r = dup_opt(repo, &e->repo);
	if (r < 0)
		return r;
	r = kfix_command_find(body, &e->command);
	if (r == -EINVAL)
		return error_set(ret_error, -EBADMSG, "unknown #kfix command");
	if (r < 0 && r != -ENOENT)
		return r;
	comment_thread(p, j, e);
	comment_places(p, j, places);
	for (size_t i = 0; i < 3; i++)
		if (places[i] && forge_find_kfix_branch(places[i], &e->bug, &e->version) >= 0)
			return asprintf(&e->branch, "kfix/%lld/v%d", (long long)e->bug,
					e->version) < 0 ? -ENOMEM : 0;
	return 0;
}

int forge_event_parse(enum forge_provider p, const char *event_type,
		      const char *data, size_t len, struct forge_event **ret,
		      char **ret_error)
{
	_cleanup_(forge_event_freep) struct forge_event *e = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t jerr;
	int r;

	if (p >= _FORGE_PROVIDER_MAX)
		return -EINVAL;
	if (!event_type)
		return error_set(ret_error, -EBADMSG, "missing %s header", event_headers[p]);
	r = json_parse_bounded(data, len, FORGE_JSON_MAX, &j, &jerr);
	if (r == -E2BIG)
		return error_set(ret_error, -EBADMSG, "JSON larger than %u bytes", FORGE_JSON_MAX);
	if (r < 0)
		return error_set(ret_error, -EBADMSG, "not JSON: %s at line %d column %d",
				 jerr.text, jerr.line, jerr.column);
	if (!json_is_object(j))
		return error_set(ret_error, -EBADMSG, "top level is not an object");
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->kind = classify(p, event_type);
	if (e->kind == FORGE_PUSH)
		r = parse_push(p, j, e, ret_error);
	else if (e->kind == FORGE_COMMENT)
		r = parse_comment(p, j, e, ret_error);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(e);
	return 0;
}
