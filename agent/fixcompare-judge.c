/* The model judge of fixcompare.h: is kfix's patch the same fix as the
 * developers', in what it does to the kernel?  The rules of
 * fixcompare-equiv.c see only tokens; a model can tell that two
 * differently written checks guard the same case.  Its answer is one
 * tool call, checked for shape; the reason is kept, cut, for whoever
 * reads the benchmark. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "fixcompare.h"
#include "llm.h"

#define JUDGE_DIFF_MAX (64u * 1024) /* bytes of each diff shown */
#define JUDGE_REASON_MAX 1000

static char *shown(const char *diff)
{
	size_t n = utf8_cut(diff, strlen(diff), JUDGE_DIFF_MAX);

	if (n == strlen(diff))
		return strdup(diff);
	return strdup_printf("%.*s\n[cut at %zu bytes]\n", (int)n, diff, n);
}

static json_t *request(const char *ours, const char *theirs)
{
	_cleanup_free_ char *a = shown(ours), *b = shown(theirs), *user = NULL;

	if (!a || !b)
		return NULL;
	user = strdup_printf(
		"Two patches fix the same Linux kernel bug. Patch A:\n\n%s\n\nPatch B, the fix the "
		"kernel's developers made:\n\n%s\n\nAre they the same fix: do they change the "
		"kernel's behaviour in the same way, in every case the code can reach, even where "
		"they are written differently? Answer with judge_equivalence.", a, b);
	if (!user)
		return NULL;
	return llm_one_tool_request("You review Linux kernel patches.", user, "judge_equivalence",
				    "Whether patch A is the same fix as patch B, and why.",
				    json_pack("{s:s, s:[s, s], s:{s:{s:s}, s:{s:s}}}", "type", "object",
					      "required", "equivalent", "reason", "properties",
					      "equivalent", "type", "boolean", "reason", "type", "string"));
}

int fixcompare_judge(struct llm *l, const char *ours, const char *theirs, json_t **ret,
		     char **ret_error)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_json_ json_t *req = request(ours, theirs);
	const json_t *args, *eq;
	const char *reason;
	size_t n;
	int r;

	if (!req)
		return -ENOMEM;
	r = llm_ask_tool(l, req, "judge_equivalence", &resp, &args, ret_error);
	if (r < 0)
		return r;
	eq = json_object_get(args, "equivalent");
	reason = json_get_str(args, "reason");
	if (!json_is_boolean(eq) || !reason)
		return error_set(ret_error, -EBADMSG, "the judge did not answer with judge_equivalence");
	n = utf8_cut(reason, strlen(reason), JUDGE_REASON_MAX);
	*ret = json_pack("{s:b, s:s%, s:I, s:I, s:f}", "equivalent", json_is_true(eq), "reason", reason, n,
			 "tokens_in", (json_int_t)resp->input_tokens, "tokens_out",
			 (json_int_t)resp->output_tokens, "cost", resp->cost);
	return *ret ? 0 : -ENOMEM;
}
