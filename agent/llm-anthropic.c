/* Anthropic Messages API. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"

#define ANTHROPIC_VERSION "2023-06-01"

static json_t *assistant_content(const json_t *m)
{
	json_t *blocks = json_array(), *c;
	const char *text = json_get_str(m, "content");
	size_t i;

	if (text && *text)
		json_array_append_new(blocks, json_pack("{s:s, s:s}", "type", "text", "text", text));
	json_array_foreach(json_object_get(m, "tool_calls"), i, c)
		json_array_append_new(blocks, json_pack("{s:s, s:s, s:s, s:O}",
			"type", "tool_use", "id", json_get_str(c, "id") ?: "",
			"name", json_get_str(c, "name") ?: "",
			"input", json_object_get(c, "arguments") ?: json_object()));
	return blocks;
}

/* Anthropic wants strictly alternating roles, with tool results as blocks
 * of a user message: consecutive user-side messages are merged. */
static json_t *encode_messages(const json_t *msgs)
{
	json_t *out = json_array(), *m, *last = NULL;
	size_t i;

	json_array_foreach(msgs, i, m) {
		const char *role = json_get_str(m, "role") ?: "user";
		json_t *block;

		if (streq(role, "assistant")) {
			last = json_pack("{s:s, s:o}", "role", "assistant",
					 "content", assistant_content(m));
			json_array_append_new(out, last);
			continue;
		}
		if (streq(role, "tool"))
			block = json_pack("{s:s, s:s, s:s}", "type", "tool_result",
					  "tool_use_id", json_get_str(m, "tool_call_id") ?: "",
					  "content", json_get_str(m, "content") ?: "");
		else
			block = json_pack("{s:s, s:s}", "type", "text",
					  "text", json_get_str(m, "content") ?: "");
		if (!last || !streq(json_get_str(last, "role"), "user")) {
			last = json_pack("{s:s, s:[]}", "role", "user", "content");
			json_array_append_new(out, last);
		}
		json_array_append_new(json_object_get(last, "content"), block);
	}
	return out;
}

static int anthropic_encode(const struct llm_settings *s, const json_t *req,
			    char **ret_body)
{
	_cleanup_json_ json_t *o = json_object();
	json_t *tools = json_object_get(req, "tools"), *t;
	const char *system = json_get_str(req, "system"), *choice;
	size_t i;

	json_object_set_new(o, "model", json_string(s->model ?: ""));
	json_object_set_new(o, "max_tokens", json_integer(s->max_tokens));
	json_object_set_new(o, "temperature", json_real(s->temperature));
	if (system)
		json_object_set_new(o, "system", json_string(system));
	json_object_set_new(o, "messages", encode_messages(json_object_get(req, "messages")));
	if (json_array_size(tools) > 0) {
		json_t *out = json_array();

		json_array_foreach(tools, i, t)
			json_array_append_new(out, json_pack("{s:s, s:s, s:O}",
				"name", json_get_str(t, "name") ?: "",
				"description", json_get_str(t, "description") ?: "",
				"input_schema", json_object_get(t, "parameters") ?: json_object()));
		json_object_set_new(o, "tools", out);
		choice = json_get_str(req, "tool_choice");
		if (choice)
			json_object_set_new(o, "tool_choice",
					    json_pack("{s:s, s:s}", "type", "tool", "name", choice));
		else if (json_is_true(json_object_get(req, "tool_required")))
			json_object_set_new(o, "tool_choice", json_pack("{s:s}", "type", "any"));
	}
	*ret_body = json_dumps(o, JSON_COMPACT);
	return *ret_body ? 0 : -ENOMEM;
}

static int anthropic_headers(const struct llm_settings *s, struct curl_slist **ret)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	h = curl_slist_append(h, "anthropic-version: " ANTHROPIC_VERSION);
	if (s->api_key && *s->api_key) {
		_cleanup_free_ char *key = NULL;

		if (asprintf(&key, "x-api-key: %s", s->api_key) < 0)
			return -ENOMEM;
		h = curl_slist_append(h, key);
	}
	*ret = h;
	return h ? 0 : -ENOMEM;
}

static int decode_blocks(const json_t *content, struct llm_response *resp,
			 char **ret_error)
{
	_cleanup_free_ char *text = NULL;
	size_t i, len = 0;
	json_t *b;

	if (!json_is_array(content)) {
		*ret_error = strdup_printf("response has no content array");
		return -EBADMSG;
	}
	json_array_foreach(content, i, b) {
		const char *type = json_get_str(b, "type") ?: "";

		if (streq(type, "text")) {
			const char *t = json_get_str(b, "text") ?: "";
			size_t n = strlen(t);
			char *p = realloc(text, len + n + 1);

			if (!p)
				return -ENOMEM;
			text = p;
			memcpy(text + len, t, n + 1);
			len += n;
		} else if (streq(type, "tool_use")) {
			json_t *input = json_object_get(b, "input");
			const char *name = json_get_str(b, "name");

			if (!name || !json_is_object(input)) {
				*ret_error = strdup_printf("tool_use block %zu lacks name or input", i);
				return -EBADMSG;
			}
			json_array_append_new(resp->tool_calls, json_pack("{s:s, s:s, s:O}",
				"id", json_get_str(b, "id") ?: "", "name", name,
				"arguments", input));
		}
	}
	if (text && *text)
		resp->text = TAKE_PTR(text);
	return 0;
}

static int anthropic_decode(const char *body, size_t len, struct llm_response **ret,
			    char **ret_error)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_error_t err;
	const char *stop;
	json_t *usage;
	int r;

	r = json_parse_bounded(body, len, LLM_BODY_MAX, &j, &err);
	if (r < 0) {
		*ret_error = strdup_printf("response is not JSON: %s", err.text);
		return -EBADMSG;
	}
	if (streq_ptr(json_get_str(j, "type"), "error")) {
		*ret_error = strdup_printf("endpoint error: %s",
			json_get_str(json_object_get(j, "error"), "message") ?: "unknown");
		return -EPROTO;
	}
	resp = llm_response_alloc();
	if (!resp)
		return -ENOMEM;
	r = decode_blocks(json_object_get(j, "content"), resp, ret_error);
	if (r < 0)
		return r;
	stop = json_get_str(j, "stop_reason") ?: "end_turn";
	resp->truncated = streq(stop, "max_tokens");
	resp->stop_reason = strdup(resp->truncated ? "length" :
				   streq(stop, "tool_use") ? "tool" : "stop");
	usage = json_object_get(j, "usage");
	resp->input_tokens = (uint64_t)MAX(json_get_int(usage, "input_tokens", 0), 0);
	resp->output_tokens = (uint64_t)MAX(json_get_int(usage, "output_tokens", 0), 0);
	*ret = TAKE_PTR(resp);
	return 0;
}

const struct llm_provider llm_provider_anthropic = {
	.name = "anthropic",
	.default_url = "https://api.anthropic.com",
	.endpoint_suffix = "/v1/messages",
	.encode = anthropic_encode,
	.headers = anthropic_headers,
	.decode = anthropic_decode,
};
