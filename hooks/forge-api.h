/* Answering on a forge: a comment on a pull/merge request (or issue)
 * through the forge's REST API.
 *   github           POST {api}/repos/{owner/name}/issues/{number}/comments
 *                    (Authorization: Bearer TOKEN)
 *   gitea, forgejo   POST {api}/repos/{owner/name}/issues/{number}/comments
 *                    (Authorization: token TOKEN; api is https://HOST/api/v1)
 *   gitlab           POST {api}/projects/{project}/merge_requests/{number}/notes
 *                    (PRIVATE-TOKEN: TOKEN; api is https://HOST/api/v4)
 * The body is {"body": TEXT}.
 *
 * A POST is not idempotent and the forges take no idempotency key: a
 * crash after the forge took a comment but before kfix recorded it would
 * post it again.  So each answer ends with a marker (an HTML comment, not
 * shown once rendered) and is looked for before it is posted:
 *   github, gitea    GET the same URL ?since=(queued - 1 day)&per_page=100
 *   gitlab           GET the same URL ?sort=desc&order_by=updated_at&per_page=100
 * at most FORGE_API_PAGES_MAX pages. */
#ifndef KFIX_HOOKS_FORGE_API_H
#define KFIX_HOOKS_FORGE_API_H

#include <stddef.h>
#include <stdint.h>

#include "forge.h"

#define FORGE_API_BODY_MAX (64u * 1024)
#define FORGE_API_TIMEOUT_MS 30000L
#define FORGE_API_PER_PAGE 100
#define FORGE_API_PAGES_MAX 10
#define FORGE_API_PAGE_MAX (16u << 20) /* bytes of one page of comments */
#define FORGE_API_SKEW_SEC 86400       /* clocks of kfix and the forge may differ */
#define FORGE_API_MARKER_MAX 48

struct forge_thread {
	enum forge_provider provider;
	const char *repo;	/* owner/name */
	int64_t number;		/* the pull/merge request or issue */
	int64_t project;	/* gitlab's numeric project id */
};

/* The request URL for a comment in t; -EINVAL for a malformed repo or a
 * missing number (or project, for gitlab). */
int forge_api_comment_url(const char *api_url, const struct forge_thread *t, char **ret);
/* Posts text as a comment.  0 when the forge took it; -EAGAIN for what
 * may pass later (connection failures, 429, 5xx); another negative errno
 * for a refusal (*ret_error says which). */
int forge_api_comment(const char *api_url, const char *token, const struct forge_thread *t,
		      const char *text, char **ret_error);

/* The marker for the answer with idempotency key key. */
int forge_api_marker(const char *key, char ret[FORGE_API_MARKER_MAX]);
/* 1 when a comment of the thread holds marker, 0 when none does; errors
 * as forge_api_comment's.  since (unix seconds) is when the answer was
 * queued: older comments need not be read. */
int forge_api_find(const char *api_url, const char *token, const struct forge_thread *t,
		   const char *marker, int64_t since, char **ret_error);
/* One page of a forge's comment list (a JSON array of objects with
 * "body"): 1 when one body holds marker, 0 when none, -EBADMSG when it is
 * not such a list.  *ret_count is the number of comments on the page. */
int forge_api_comments_hold(const char *json, size_t len, const char *marker, size_t *ret_count);

#endif
