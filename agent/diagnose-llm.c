/* The model's pass over a failed run (diagnose.h): it reads the run as
 * one line per event and the rules' diagnosis, and names the family, the
 * event, a quote, why, a directive and the step to rerun from.  The
 * model's word is checked, not trusted: its quote must stand word for
 * word in the line of the event it names, the family must be one of
 * ours and the step one the run reached.  An answer that fails a check
 * is refused with the reason, and the rules' diagnosis stands. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "diagnose.h"
#include "llm.h"

#define LINE_TEXT_MAX 300      /* bytes of an event's text on its line */
#define LINES_MAX (96u * 1024) /* bytes of the whole listing */
#define QUOTE_MIN 8
#define ANSWER_MAX 2000	       /* bytes of why and of the directive */

/* An event as the model sees it: "#ID STEP KIND VERDICT: TEXT", TEXT its
 * error, else its output as compact JSON, cut on a character boundary. */
static char *event_line(const json_t *e)
{
	const char *err = json_get_str(e, "error");
	_cleanup_free_ char *out = NULL;
	const char *text;
	size_t n;

	if (!err && json_object_get(e, "output"))
		out = json_dumps(json_object_get(e, "output"), JSON_COMPACT | JSON_ENCODE_ANY);
	text = err ? err : out ? out : "";
	n = utf8_cut(text, strlen(text), LINE_TEXT_MAX);
	return strdup_printf("#%lld %s %s %s: %.*s", (long long)json_get_int(e, "id", 0),
			     json_get_str(e, "step") ?: "-", json_get_str(e, "kind") ?: "-",
			     json_get_str(e, "verdict") ?: "-", (int)n, text);
}

static int listing(const json_t *events, char **ret)
{
	_cleanup_buf_ struct buf b = BUF_INIT(LINES_MAX + 128);
	const json_t *e;
	size_t i;
	int r = 0;

	json_array_foreach(events, i, e) {
		_cleanup_free_ char *l = event_line(e);

		if (!l)
			return -ENOMEM;
		if (b.len + strlen(l) + 1 > LINES_MAX) {
			r = buf_printf(&b, "(%zu more events not shown)\n", json_array_size(events) - i);
			break;
		}
		r = buf_printf(&b, "%s\n", l);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static json_t *request(const char *events, const struct diagnosis *rules)
{
	_cleanup_free_ char *user = strdup_printf(
		"A run of kfix's kernel repair agent failed. Its events, one per line "
		"(#ID STEP KIND VERDICT: TEXT):\n\n%s\n"
		"Rules over these events say: %s at event %lld in step %s (%s); evidence: %s.\n\n"
		"Name the event that caused the failure, quoting at least %d characters of "
		"that event's line word for word, the failure family (one of: infrastructure, "
		"model-error, localisation, edits, gates, validation, probes, budget, unknown), "
		"why, one directive to give the agent on a rerun, and the step to rerun from "
		"(a STEP of the lines above). Agree with the rules when they are right.",
		events, diag_family_name(rules->family), (long long)rules->event, rules->step,
		rules->why, rules->evidence, QUOTE_MIN);

	if (!user)
		return NULL;
	return llm_one_tool_request("You find why runs of a kernel repair agent failed.", user,
				    "attribute_failure", "The cause of the failure, with a quote of its event.",
				    json_pack("{s:s, s:[s, s, s, s, s, s], s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s},"
					      " s:{s:s}, s:{s:s}}}", "type", "object", "required", "family",
					      "event", "evidence", "why", "directive", "from", "properties",
					      "family", "type", "string", "event", "type", "integer",
					      "evidence", "type", "string", "why", "type", "string",
					      "directive", "type", "string", "from", "type", "string"));
}

static const json_t *find_event(const json_t *events, json_int_t id)
{
	const json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (json_get_int(e, "id", 0) == id)
			return e;
	return NULL;
}

static bool step_reached(const json_t *events, const char *step)
{
	const json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (streq_ptr(json_get_str(e, "step"), step))
			return true;
	return false;
}

static int family_of(const char *name, enum diag_family *ret)
{
	for (int f = DIAG_NONE; f <= DIAG_UNKNOWN; f++)
		if (streq(diag_family_name((enum diag_family)f), name)) {
			*ret = (enum diag_family)f;
			return 0;
		}
	return -EINVAL;
}

/* The answer checked; NULL and *ret_refusal when it does not hold. */
static int check_answer(const json_t *events, const json_t *a, struct diagnosis **ret,
			char **ret_refusal)
{
	const char *evidence = json_get_str(a, "evidence"), *why = json_get_str(a, "why");
	const char *directive = json_get_str(a, "directive"), *from = json_get_str(a, "from");
	json_int_t id = json_get_int(a, "event", 0);
	const json_t *e = find_event(events, id);
	_cleanup_free_ char *line = e ? event_line(e) : NULL;
	_cleanup_(diagnosis_freep) struct diagnosis *d = calloc(1, sizeof(*d));
	enum diag_family f;

	if (!d)
		return -ENOMEM;
	if (family_of(json_get_str(a, "family") ?: "", &f) < 0)
		*ret_refusal = strdup("the family is not one of kfix's");
	else if (!e)
		*ret_refusal = strdup_printf("there is no event %lld", (long long)id);
	else if (!evidence || strlen(evidence) < QUOTE_MIN || !line || !strstr(line, evidence))
		*ret_refusal = strdup_printf("the quote is not in event %lld's text", (long long)id);
	else if (!from || !step_reached(events, from))
		*ret_refusal = strdup("the step to rerun from is not one the run reached");
	else if (!why || !directive || strlen(why) > ANSWER_MAX || strlen(directive) > ANSWER_MAX ||
		 !utf8_valid(why, strlen(why)) || !utf8_valid(directive, strlen(directive)))
		*ret_refusal = strdup("why or the directive is missing or too long");
	else {
		d->family = f;
		d->event = id;
		d->step = strdup(json_get_str(e, "step") ?: "run");
		d->evidence = strdup(evidence);
		d->why = strdup(why);
		d->directive = strdup(directive);
		d->from = strdup(from);
		if (!d->step || !d->evidence || !d->why || !d->directive || !d->from)
			return -ENOMEM;
		*ret = TAKE_PTR(d);
		return 0;
	}
	return *ret_refusal ? 0 : -ENOMEM;
}

int diagnose_with_model(struct llm *l, const json_t *events, const struct diagnosis *rules,
			struct diagnosis **ret, char **ret_refusal, char **ret_error)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_free_ char *lines = NULL, *err = NULL;
	_cleanup_json_ json_t *req = NULL;
	const json_t *args;
	int r;

	r = listing(events, &lines);
	if (r < 0)
		return r;
	req = request(lines, rules);
	if (!req)
		return -ENOMEM;
	r = llm_ask_tool(l, req, "attribute_failure", &resp, &args, &err);
	if (r == -EBADMSG) {
		/* an answer that is no attribution is refused, not an error */
		*ret_refusal = TAKE_PTR(err);
		return 0;
	}
	if (r < 0) {
		*ret_error = TAKE_PTR(err);
		return r;
	}
	return check_answer(events, args, ret, ret_refusal);
}
