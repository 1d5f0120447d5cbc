/* Chat with a language model, with tools.
 *
 * Requests and responses use one provider-neutral JSON shape; each
 * provider (OpenAI-compatible chat completions, Anthropic Messages)
 * translates it to its wire format.  Transfers run on a libcurl multi
 * handle so that several calls proceed while the caller does other work;
 * llm_chat() is the blocking helper on top.
 *
 * Request:
 *   { "system": "...",
 *     "messages": [ { "role": "user"|"assistant"|"tool",
 *                     "content": "...",
 *                     "tool_calls": [ {"id","name","arguments":{...}} ],
 *                     "tool_call_id": "..." } ],
 *     "tools": [ { "name", "description", "parameters": {JSON schema} } ],
 *     "tool_choice": "NAME" (optional: force that tool),
 *     "tool_required": true (optional: some tool, the model's pick) }
 *
 * Everything in a response is untrusted text from the network. */
#ifndef KFIX_AGENT_LLM_H
#define KFIX_AGENT_LLM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/macro.h"

struct config;
struct llm;
struct llm_call;

struct llm_settings {
	const char *provider;	  /* "openai" | "anthropic" */
	const char *url;	  /* base URL or full endpoint; NULL: provider default */
	const char *model;
	const char *api_key;	  /* NULL: none (local servers) */
	int max_tokens;
	double temperature;
	uint64_t timeout_usec;	  /* one HTTP attempt */
	uint64_t connect_timeout_usec;
	unsigned concurrency;	  /* calls in flight at once */
	unsigned retries;	  /* extra attempts on 429/5xx/time-outs */
	uint64_t backoff_usec;	  /* first retry delay; doubles, with jitter */
	uint64_t max_backoff_usec;
	double price_input;	  /* per million tokens */
	double price_output;
};

struct llm_response {
	char *text;		  /* NULL when the model only called tools */
	json_t *tool_calls;	  /* array of {id, name, arguments}; never NULL */
	char *stop_reason;	  /* provider's words, normalised: "stop", "tool", "length" */
	bool truncated;		  /* stopped at the token limit */
	uint64_t input_tokens;
	uint64_t output_tokens;
	double cost;
	unsigned attempts;	  /* HTTP attempts, retries included */
	uint64_t duration_usec;	  /* from start to the final answer */
	bool replayed;		  /* served from a cassette */
};

struct llm_usage {
	uint64_t input_tokens;
	uint64_t output_tokens;
	double cost;
	unsigned calls;		  /* completed calls, failed ones included */
	unsigned failures;
	unsigned retries;
	uint64_t busy_usec;	  /* sum of call durations */
};

void llm_response_free(struct llm_response *r);
DEFINE_CLEANUP(struct llm_response, llm_response_free);

int llm_new(const struct llm_settings *s, struct llm **ret);
/* [llm "name"] from the configuration; name NULL picks the first section.
 * On failure *ret_error says why. */
int llm_new_from_config(const struct config *c, const char *name,
			struct llm **ret, char **ret_error);
void llm_free(struct llm *l);
DEFINE_CLEANUP(struct llm, llm_free);

/* Which model the repair workflow talks to ([agent] llm, iterate-llm,
 * record), read once when a repair starts. */
struct llm_agent_conf {
	char *llm;		/* [llm "NAME"]; NULL: the first section */
	char *iterate_llm;	/* for review iterations; NULL: llm */
	bool record;		/* keep the exchanges as a cassette */
};
int llm_agent_conf_from_config(const struct config *c, struct llm_agent_conf *ret);
void llm_agent_conf_free(struct llm_agent_conf *ac);

/* A scripted model for tests of the callers: fn gets the neutral request
 * and returns a neutral response object
 * {"text", "tool_calls", "input_tokens", "output_tokens", "error"}. */
typedef int (*llm_script_fn)(void *userdata, const json_t *request,
			     json_t **ret_response);
int llm_new_scripted(const char *model, llm_script_fn fn, void *userdata,
		     struct llm **ret);

const char *llm_model(const struct llm *l);
const char *llm_provider_name(const struct llm *l);

/* Cassettes: every completed exchange is appended to path (JSON lines);
 * replay serves them in order without a network and fails with
 * -ENOMSG when a request differs from the recorded one. */
int llm_record(struct llm *l, const char *path);
int llm_replay(struct llm *l, const char *path);
bool llm_is_replay(const struct llm *l);
/* A replaying model configured from the cassette itself (provider and
 * model as recorded), for runs without a configured endpoint. */
int llm_new_for_replay(const char *path, struct llm **ret);

/* Asynchronous calls.  llm_step() drives every call of l for at most
 * max_wait_ms; a finished call is collected with llm_call_finish(), which
 * frees it. */
int llm_call_start(struct llm *l, const json_t *request, struct llm_call **ret);
int llm_step(struct llm *l, int max_wait_ms);
bool llm_call_done(const struct llm_call *c);
/* Returns 0 and the response, or a negative errno and a message. */
int llm_call_finish(struct llm_call *c, struct llm_response **ret,
		    char **ret_error);

/* A request of one question whose answer is one call of tool (parameters
 * a JSON schema, taken), which the model must call.  NULL on ENOMEM. */
json_t *llm_one_tool_request(const char *system, const char *user, const char *tool,
			     const char *description, json_t *parameters);

/* Asks req (made by llm_one_tool_request) and gives the response and the
 * arguments of its call of tool (owned by the response); -EBADMSG with
 * *ret_error when the model answered otherwise. */
int llm_ask_tool(struct llm *l, const json_t *req, const char *tool, struct llm_response **ret,
		 const json_t **ret_args, char **ret_error);

/* Blocking: start, drive, finish. */
int llm_chat(struct llm *l, const json_t *request, struct llm_response **ret,
	     char **ret_error);

void llm_get_usage(const struct llm *l, struct llm_usage *ret);

/* Called as each call ends (failed ones included; tokens and cost are 0
 * for those), e.g. for the daemon's metrics. */
typedef void (*llm_observer_fn)(void *ud, bool ok, uint64_t duration_usec,
				uint64_t input_tokens, uint64_t output_tokens, double cost);
void llm_set_observer(struct llm *l, llm_observer_fn fn, void *ud);

#endif
