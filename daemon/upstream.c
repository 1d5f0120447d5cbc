/* Asking for the comparison with the fix that landed; see upstream.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "store.h"
#include "upstream.h"

#define UPSTREAM_PRIORITY (-10) /* after the work on open bugs */
#define UPSTREAM_ATTEMPTS 3
#define UPSTREAM_KV_LAST "sched.upstream.last"

int upstream_ask(struct store *s, int64_t bug, const char *by, const char *commit)
{
	return store_event_add_json(s, bug, 0, "request.compare",
				    json_pack("{s:s, s:s?}", "by", by, "commit", commit));
}

/* Whether the bug's fix was found already, or a comparison is on its way. */
static int compare_pending_or_done(struct store *s, int64_t bug)
{
	struct store_query q = { .bug_id = bug, .state = "upstream.fix", .limit = 1 };
	static const char *const kinds[] = { "compare", NULL };
	struct store_event **ev = NULL;
	size_t n = 0;
	int r = store_event_query(s, &q, &ev, &n);

	store_event_list_free(ev, n);
	if (r < 0 || n > 0)
		return r < 0 ? r : 1;
	return store_job_busy(s, bug, kinds);
}

int upstream_request(struct store *s, int64_t bug, const json_t *detail)
{
	struct store_patch **ps = NULL;
	_cleanup_free_ char *args = NULL;
	size_t n = 0;
	int r = store_patch_list(s, NULL, bug, 1, &ps, &n);

	store_patch_list_free(ps, n);
	if (r < 0)
		return r;
	if (n == 0)
		return store_event_add(s, bug, 0, "request.ignored",
				       "no kfix patch to compare with a fix");
	r = compare_pending_or_done(s, bug);
	if (r != 0)
		return r < 0 ? r : 0;
	args = json_dumps(detail, JSON_COMPACT);
	if (!args)
		return -ENOMEM;
	return store_job_add(s, bug, "compare", args, UPSTREAM_PRIORITY, UPSTREAM_ATTEMPTS, NULL);
}

int upstream_ask_open(struct store *s, const char *tree, const char *by)
{
	static const char *const states[] = { "validated", "awaiting-approval", "sent", NULL };
	int asked = 0, r = 0;

	for (size_t k = 0; states[k] && r >= 0; k++) {
		struct store_query q = { .state = states[k], .tree = tree, .limit = UPSTREAM_ASK_MAX };
		struct store_bug **bugs = NULL;
		size_t n = 0;

		r = store_bug_query(s, &q, &bugs, &n);
		for (size_t i = 0; i < n && r >= 0 && asked < UPSTREAM_ASK_MAX; i++) {
			r = compare_pending_or_done(s, bugs[i]->id);
			if (r == 0) {
				r = upstream_ask(s, bugs[i]->id, by, NULL);
				asked++;
			}
		}
		store_bug_list_free(bugs, n);
	}
	return r < 0 ? r : asked;
}

int upstream_schedule(struct store *s, uint64_t every)
{
	_cleanup_free_ char *last = NULL;
	uint64_t then = 0;
	int64_t now = (int64_t)time(NULL);
	char v[32];
	int r;

	if (every == 0)
		return 0;
	if (store_kv_get(s, UPSTREAM_KV_LAST, &last) >= 0)
		parse_uint64(last, &then);
	if ((uint64_t)now < then + every / 1000000)
		return 0;
	snprintf(v, sizeof(v), "%lld", (long long)now);
	r = store_begin(s);
	if (r < 0)
		return r;
	r = upstream_ask_open(s, NULL, "tree");
	if (r >= 0)
		r = store_kv_set(s, UPSTREAM_KV_LAST, v);
	return r < 0 ? (store_rollback(s), r) : store_commit(s);
}
