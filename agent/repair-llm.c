/* Talking to the model for the workflow steps; every call is an event. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"
#include "prompt.h"
#include "repair-internal.h"

void repair_set_var(struct repair_ctx *c, const char *key, const char *value)
{
	json_object_set_new(c->vars, key, json_string(value ?: "") ?: json_string("(not UTF-8)"));
}

void repair_progress(struct repair_ctx *c, const char *step, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	if (!c->p->progress)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		c->p->progress(c->p->progress_ud, step, msg);
}

int64_t repair_event(struct repair_ctx *c, const char *step, const char *kind,
		     uint64_t start, json_t *input, json_t *output,
		     const char *verdict, const char *error)
{
	struct traj_event e = {
		.step = step, .kind = kind, .parent = c->run_event, .start_usec = start,
		.duration_usec = start ? trajectory_now() - start : 0,
		.input = input, .output = output, .verdict = verdict, .error = error,
	};
	int64_t id = 0;

	(void)trajectory_add(c->traj, &e, &id);
	json_decref(input);
	json_decref(output);
	return id;
}

static json_t *pick_tools(struct repair_ctx *c, const char *const *names)
{
	json_t *out = json_array(), *t;
	size_t i;

	for (const char *const *n = names; *n; n++)
		json_array_foreach(c->tools, i, t)
			if (streq_ptr(json_get_str(t, "name"), *n))
				json_array_append(out, t);
	return out;
}

static bool offered(const char *const *names, const char *name)
{
	for (const char *const *n = names; *n; n++)
		if (streq(*n, name))
			return true;
	return false;
}

int repair_ask(struct repair_ctx *c, const char *step, const char *prompt,
	       const char *const *names, char **ret_tool, json_t **ret_args,
	       char **ret_error)
{
	_cleanup_free_ char *system = NULL, *user = NULL;
	_cleanup_json_ json_t *req = NULL;
	int r;

	r = prompt_render(c->p->prompts_dir, "system", c->vars, &system);
	if (r >= 0)
		r = prompt_render(c->p->prompts_dir, prompt, c->vars, &user);
	if (r < 0) {
		*ret_error = llm_errorf("prompt %s: %s", prompt, strerror(-r));
		return r;
	}
	req = json_pack("{s:s, s:[{s:s, s:s}], s:o}", "system", system, "messages",
			"role", "user", "content", user, "tools", pick_tools(c, names));
	if (!req)
		return -ENOMEM;
	if (!names[1])
		json_object_set_new(req, "tool_choice", json_string(names[0]));
	/* one reminder when the model answers in prose */
	for (int attempt = 0; attempt < 2; attempt++) {
		_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
		_cleanup_free_ char *err = NULL;
		uint64_t t0 = trajectory_now();
		struct traj_event e = { .step = step, .kind = "llm.call", .parent = c->run_event,
					.start_usec = t0 };
		_cleanup_json_ json_t *in = json_pack("{s:s, s:s, s:s}", "prompt", prompt,
						      "tool", names[0], "user", user);
		_cleanup_json_ json_t *out = NULL;
		json_t *call;

		r = llm_chat(c->llm, req, &resp, &err);
		e.duration_usec = trajectory_now() - t0;
		e.input = in;
		c->sum->llm_calls++;
		if (r < 0) {
			e.error = err ?: strerror(-r);
			(void)trajectory_add(c->traj, &e, NULL);
			*ret_error = llm_errorf("model call for %s failed: %s", step,
						err ?: strerror(-r));
			return r;
		}
		out = json_pack("{s:s?, s:O}", "text", resp->text, "tool_calls", resp->tool_calls);
		e.output = out;
		e.tokens_in = resp->input_tokens;
		e.tokens_out = resp->output_tokens;
		e.cost = resp->cost;
		c->sum->tokens_in += resp->input_tokens;
		c->sum->tokens_out += resp->output_tokens;
		c->sum->cost += resp->cost;
		search_spend(c->search, resp->input_tokens + resp->output_tokens, resp->cost);
		call = json_array_get(resp->tool_calls, 0);
		e.verdict = call ? json_get_str(call, "name") : "no tool call";
		(void)trajectory_add(c->traj, &e, NULL);
		if (call && offered(names, json_get_str(call, "name"))) {
			*ret_tool = strdup(json_get_str(call, "name"));
			*ret_args = json_incref(json_object_get(call, "arguments"));
			return *ret_tool ? 0 : -ENOMEM;
		}
		json_array_append_new(json_object_get(req, "messages"), json_pack("{s:s, s:s}",
			"role", "assistant", "content", resp->text ?: "(no answer)"));
		json_array_append_new(json_object_get(req, "messages"), json_pack("{s:s, s:s}",
			"role", "user", "content", "Answer by calling one of the offered tools."));
	}
	*ret_error = llm_errorf("the model did not call %s", names[0]);
	return -EBADMSG;
}
