/* Answering on a forge: a comment on a pull/merge request (or issue)
 * through the forge's REST API.
 *   github           POST {api}/repos/{owner/name}/issues/{number}/comments
 *                    (Authorization: Bearer TOKEN)
 *   gitea, forgejo   POST {api}/repos/{owner/name}/issues/{number}/comments
 *                    (Authorization: token TOKEN; api is https://HOST/api/v1)
 *   gitlab           POST {api}/projects/{project}/merge_requests/{number}/notes
 *                    (PRIVATE-TOKEN: TOKEN; api is https://HOST/api/v4)
 * The body is {"body": TEXT}. */
#ifndef KFIX_HOOKS_FORGE_API_H
#define KFIX_HOOKS_FORGE_API_H

#include <stdint.h>

#include "forge.h"

#define FORGE_API_BODY_MAX (64u * 1024)
#define FORGE_API_TIMEOUT_MS 30000L

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

#endif
