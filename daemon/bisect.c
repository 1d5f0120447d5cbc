/* Asking for bisections and reading their results; see bisect.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bisect.h"
#include "common/json.h"
#include "common/strutil.h"
#include "store.h"

#define BISECT_PRIORITY 0
#define BISECT_ATTEMPTS 3
#define BISECT_EVENTS_MAX 50

int bisect_ask(struct store *s, int64_t bug, const char *by, const char *good)
{
	return store_event_add_json(s, bug, 0, "request.bisect",
				    json_pack("{s:s, s:s?}", "by", by, "good", good));
}

int bisect_request(struct store *s, int64_t bug, const json_t *detail)
{
	_cleanup_free_ char *args = NULL;
	const char *good = json_get_str(detail, "good");
	_cleanup_json_ json_t *a = json_pack("{s:s?}", "good", good);
	static const char *const kinds[] = { "bisect", NULL };
	int r = store_job_busy(s, bug, kinds);

	if (r != 0)
		return r < 0 ? r : store_event_add(s, bug, 0, "request.ignored",
						   "a bisection of this bug is on its way");
	args = a ? json_dumps(a, JSON_COMPACT) : NULL;
	if (!args)
		return -ENOMEM;
	return store_job_add(s, bug, "bisect", args, BISECT_PRIORITY, BISECT_ATTEMPTS, NULL);
}

int bisect_found(struct store *s, int64_t bug, json_t **ret)
{
	struct store_query q = { .bug_id = bug, .state = "bisect.done", .limit = BISECT_EVENTS_MAX,
				 .newest = true };
	struct store_event **ev = NULL;
	size_t n = 0;
	int r = store_event_query(s, &q, &ev, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		json_t *j = NULL;
		json_error_t jerr;

		if (!ev[i]->detail ||
		    json_parse_bounded(ev[i]->detail, strlen(ev[i]->detail), 1u << 22, &j, &jerr) < 0)
			continue;
		if (streq_ptr(json_get_str(j, "result"), "found") && json_get_str(j, "culprit")) {
			*ret = j;
			store_event_list_free(ev, n);
			return 0;
		}
		json_decref(j);
	}
	store_event_list_free(ev, n);
	return r < 0 ? r : -ENOENT;
}
