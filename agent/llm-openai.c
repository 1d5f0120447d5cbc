/* OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server,
 * Ollama, Gemini's compatible endpoint). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"

static json_t *encode_tool_calls(const json_t *calls)
{
	json_t *out = json_array();
	size_t i;
	json_t *c;

	json_array_foreach(calls, i, c) {
		_cleanup_free_ char *args = json_dumps(json_object_get(c, "arguments"),
						       JSON_COMPACT | JSON_SORT_KEYS);

		json_array_append_new(out, json_pack("{s:s, s:s, s:{s:s, s:s}}",
			"id", json_get_str(c, "id") ?: "",
			"type", "function",
			"function",
			"name", json_get_str(c, "name") ?: "",
			"arguments", args ?: "{}"));
	}
	return out;
}

static json_t *encode_message(const json_t *m)
{
	const char *role = json_get_str(m, "role") ?: "user";
	const char *content = json_get_str(m, "content");
	json_t *calls = json_object_get(m, "tool_calls");
	json_t *o = json_object();

	json_object_set_new(o, "role", json_string(role));
	json_object_set_new(o, "content", content ? json_string(content) : json_null());
	if (streq(role, "tool"))
		json_object_set_new(o, "tool_call_id",
				    json_string(json_get_str(m, "tool_call_id") ?: ""));
	if (json_array_size(calls) > 0)
		json_object_set_new(o, "tool_calls", encode_tool_calls(calls));
	return o;
}

static int openai_encode(const struct llm_settings *s, const json_t *req,
			 char **ret_body)
{
	_cleanup_json_ json_t *o = json_object();
	json_t *msgs = json_array(), *tools = json_object_get(req, "tools");
	const char *system = json_get_str(req, "system"), *choice;
	size_t i;
	json_t *m;

	json_object_set_new(o, "model", json_string(s->model ?: ""));
	json_object_set_new(o, "max_tokens", json_integer(s->max_tokens));
	json_object_set_new(o, "temperature", json_real(s->temperature));
	if (system)
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system",
						      "content", system));
	json_array_foreach(json_object_get(req, "messages"), i, m)
		json_array_append_new(msgs, encode_message(m));
	json_object_set_new(o, "messages", msgs);
	if (json_array_size(tools) > 0) {
		json_t *out = json_array(), *t;

		json_array_foreach(tools, i, t)
			json_array_append_new(out, json_pack("{s:s, s:{s:s, s:s, s:O}}",
				"type", "function", "function",
				"name", json_get_str(t, "name") ?: "",
				"description", json_get_str(t, "description") ?: "",
				"parameters", json_object_get(t, "parameters") ?: json_object()));
		json_object_set_new(o, "tools", out);
		choice = json_get_str(req, "tool_choice");
		if (choice)
			json_object_set_new(o, "tool_choice",
					    json_pack("{s:s, s:{s:s}}", "type", "function",
						      "function", "name", choice));
		else if (json_is_true(json_object_get(req, "tool_required")))
			json_object_set_new(o, "tool_choice", json_string("required"));
	}
	*ret_body = json_dumps(o, JSON_COMPACT);
	return *ret_body ? 0 : -ENOMEM;
}

static int openai_headers(const struct llm_settings *s, struct curl_slist **ret)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	if (s->api_key && *s->api_key) {
		_cleanup_free_ char *auth = NULL;

		if (asprintf(&auth, "Authorization: Bearer %s", s->api_key) < 0)
			return -ENOMEM;
		h = curl_slist_append(h, auth);
	}
	*ret = h;
	return h ? 0 : -ENOMEM;
}

static int decode_tool_calls(const json_t *calls, json_t *out, char **ret_error)
{
	size_t i;
	json_t *c;

	if (calls && !json_is_array(calls) && !json_is_null(calls)) {
		*ret_error = strdup_printf("tool_calls is not an array");
		return -EBADMSG;
	}
	json_array_foreach(calls, i, c) {
		json_t *fn = json_object_get(c, "function"), *args = NULL;
		const char *name = json_get_str(fn, "name");
		const char *text = json_get_str(fn, "arguments");
		int r;

		if (!name) {
			*ret_error = strdup_printf("tool call %zu has no function name", i);
			return -EBADMSG;
		}
		/* Some servers send arguments as an object rather than text. */
		if (json_is_object(json_object_get(fn, "arguments")))
			args = json_incref(json_object_get(fn, "arguments"));
		else {
			r = llm_parse_arguments(text ?: "{}", &args, ret_error);
			if (r < 0)
				return r;
		}
		json_array_append_new(out, json_pack("{s:s, s:s, s:o}",
			"id", json_get_str(c, "id") ?: "", "name", name, "arguments", args));
	}
	return 0;
}

static int openai_decode(const char *body, size_t len, struct llm_response **ret,
			 char **ret_error)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t err;
	json_t *choice, *msg, *usage;
	const char *finish, *content;
	int r;

	r = json_parse_bounded(body, len, LLM_BODY_MAX, &j, &err);
	if (r < 0) {
		*ret_error = strdup_printf("response is not JSON: %s", err.text);
		return -EBADMSG;
	}
	choice = json_array_get(json_object_get(j, "choices"), 0);
	msg = json_object_get(choice, "message");
	if (!json_is_object(msg)) {
		*ret_error = strdup_printf("response has no choices[0].message");
		return -EBADMSG;
	}
	resp = llm_response_alloc();
	if (!resp)
		return -ENOMEM;
	content = json_get_str(msg, "content");
	if (content && *content) {
		resp->text = strdup(content);
		if (!resp->text)
			return -ENOMEM;
	}
	r = decode_tool_calls(json_object_get(msg, "tool_calls"), resp->tool_calls, ret_error);
	if (r < 0)
		return r;
	finish = json_get_str(choice, "finish_reason") ?: "stop";
	resp->truncated = streq(finish, "length");
	resp->stop_reason = strdup(resp->truncated ? "length" :
				   json_array_size(resp->tool_calls) ? "tool" : "stop");
	usage = json_object_get(j, "usage");
	resp->input_tokens = (uint64_t)MAX(json_get_int(usage, "prompt_tokens", 0), 0);
	resp->output_tokens = (uint64_t)MAX(json_get_int(usage, "completion_tokens", 0), 0);
	*ret = TAKE_PTR(resp);
	return 0;
}

const struct llm_provider llm_provider_openai = {
	.name = "openai",
	.default_url = "https://api.openai.com/v1",
	.endpoint_suffix = "/chat/completions",
	.encode = openai_encode,
	.headers = openai_headers,
	.decode = openai_decode,
};
