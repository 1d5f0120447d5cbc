/* Answering forge reviews; see forge-reply.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "forge-reply.h"
#include "hooks/forge-api.h"
#include "store.h"

#define FORGE_REPLY_EVENTS_MAX 500 /* review events of a bug looked at */

static char *answer_text(const struct store_patch *p, const char *branch, const char *oid)
{
	char *t;

	if (asprintf(&t,
		     "Thank you for the review. kfix made version %d of the patch with it: branch "
		     "`%s`, commit %.12s. The commit's note (refs/notes/kfix) holds the explanation "
		     "and what was tested; the patch also goes to the moderators by mail.",
		     p->version, branch, oid) < 0)
		return NULL;
	return t;
}


/* The forge's API address and token of the hook the answer is for. */
static int forge_api_from_config(const struct config *cfg, const char *hook, const char **ret_url,
				 char **ret_token, char **ret_error)
{
	const char *url = NULL;
	char *token = NULL;

	if (config_get_string(cfg, "hook", hook, "api-url", &url) < 0 || !url)
		return error_set(ret_error, -EAGAIN, "[hook \"%s\"] has no api-url", hook);
	if (config_get_secret(cfg, "hook", hook, "api-token", &token) < 0 || !token)
		return error_set(ret_error, -EAGAIN, "[hook \"%s\"] has no api-token", hook);
	*ret_url = url;
	*ret_token = token;
	return 0;
}
/* One answer per thread: the key names the thread and the branch. */
static int queue_one(struct store *s, const struct store_patch *p, const json_t *thread,
		     const char *text, const char *branch, const char *push_key)
{
	_cleanup_json_ json_t *j = json_deep_copy(thread);
	_cleanup_free_ char *payload = NULL, *key = NULL;

	if (!j || json_object_set_new(j, "text", json_string(text)) < 0 ||
	    json_object_set_new(j, "after", json_string(push_key)) < 0 ||
	    !(payload = json_dumps(j, JSON_COMPACT)) ||
	    asprintf(&key, "forge:%s:%s#%lld:%s", json_get_str(thread, "hook") ?: "",
		     json_get_str(thread, "repo") ?: "", (long long)json_get_int(thread, "number", 0),
		     branch) < 0)
		return -ENOMEM;
	return store_outbox_add(s, p->bug_id, "forge", key, payload, NULL, NULL);
}

int forge_reply_queue(struct store *s, const struct store_patch *patch, const char *branch,
		      const char *oid, const char *push_key)
{
	struct store_query q = { .bug_id = patch->bug_id, .state = "review.received",
				 .limit = FORGE_REPLY_EVENTS_MAX };
	_cleanup_free_ char *text = NULL;
	struct store_event **ev = NULL;
	size_t n = 0;
	int r;

	if (patch->version < 2 || !push_key)
		return 0;
	text = answer_text(patch, branch, oid);
	if (!text)
		return -ENOMEM;
	r = store_event_query(s, &q, &ev, &n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_json_ json_t *d = ev[i]->detail ? json_loads(ev[i]->detail, 0, NULL) : NULL;
		const json_t *thread = json_object_get(d, "forge");

		/* comments on the versions before this one */
		if (json_is_object(thread) && json_get_int(d, "version", 0) < patch->version &&
		    json_get_int(thread, "number", 0) > 0)
			r = queue_one(s, patch, thread, text, branch, push_key);
	}
	store_event_list_free(ev, n);
	return r;
}

int forge_reply_deliver(const struct config *cfg, struct store *s, const struct store_outbox *e,
			char **ret_error)
{
	_cleanup_json_ json_t *j = NULL;
	_cleanup_free_ char *token = NULL, *state = NULL, *text = NULL;
	const char *hook, *api_url = NULL;
	char marker[FORGE_API_MARKER_MAX];
	struct forge_thread t = {};
	json_error_t jerr;
	int r;

	if (json_parse_bounded(e->payload, strlen(e->payload), 1u << 20, &j, &jerr) < 0 ||
	    !(hook = json_get_str(j, "hook")) ||
	    forge_provider_from_string(json_get_str(j, "provider"), &t.provider) < 0)
		return error_set(ret_error, -EINVAL, "a forge answer without hook or provider");
	r = store_outbox_state(s, json_get_str(j, "after") ?: "", &state);
	if (r < 0 && r != -ENOENT)
		return r;
	if (!state || !streq(state, "sent"))
		return error_set(ret_error, state && streq(state, "parked") ? -EPIPE : -EAGAIN,
				 "the branch's push is %s", state ? state : "unknown");
	r = forge_api_from_config(cfg, hook, &api_url, &token, ret_error);
	if (r < 0)
		return r;
	t.repo = json_get_str(j, "repo");
	t.number = json_get_int(j, "number", 0);
	t.project = json_get_int(j, "project", 0);
	r = forge_api_marker(e->idem_key, marker);
	if (r >= 0 && asprintf(&text, "%s\n\n%s", json_get_str(j, "text") ?: "", marker) < 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	/* an earlier try may have been taken just before a crash */
	r = forge_api_find(api_url, token, &t, marker, e->created, ret_error);
	if (r != 0)
		return r;
	return forge_api_comment(api_url, token, &t, text, ret_error);
}
