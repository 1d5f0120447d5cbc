/* Private to agent/: the provider backends behind llm.h, and what the
 * call state machine and the cassettes share. */
#ifndef KFIX_AGENT_LLM_INTERNAL_H
#define KFIX_AGENT_LLM_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "llm.h"

/* Largest response body accepted from an endpoint. */
#define LLM_BODY_MAX (16u * 1024 * 1024)
/* Largest tool-call argument text accepted from a model. */
#define LLM_ARGS_MAX (1024u * 1024)

struct llm_provider {
	const char *name;
	const char *default_url;
	/* Appended to a base URL that does not already end with it. */
	const char *endpoint_suffix;
	int (*encode)(const struct llm_settings *s, const json_t *request,
		      char **ret_body);
	int (*headers)(const struct llm_settings *s, struct curl_slist **ret);
	/* Never trusts body: any shape error is -EBADMSG with a message. */
	int (*decode)(const char *body, size_t len, struct llm_response **ret,
		      char **ret_error);
};

extern const struct llm_provider llm_provider_openai;
extern const struct llm_provider llm_provider_anthropic;

/* The state behind llm.h, shared by the call state machine (llm.c) and
 * the cassettes (llm-cassette.c). */
enum call_state { CALL_WAITING, CALL_ACTIVE, CALL_DONE };

struct llm_call {
	struct llm *llm;
	struct llm_call *next;
	json_t *request;
	char *body;
	struct curl_slist *headers;
	CURL *easy;
	struct buf resp;
	enum call_state state;
	unsigned attempts;
	uint64_t not_before;
	uint64_t started;
	int error;
	char *error_text;
	struct llm_response *response;
};

struct llm {
	struct llm_settings s;
	char *strings[4]; /* owned copies behind s */
	const struct llm_provider *provider;
	char *endpoint;
	CURLM *multi;
	struct llm_call *calls;
	unsigned active;
	struct llm_usage usage;
	uint64_t rng;
	FILE *record;
	llm_observer_fn observer;
	void *observer_ud;
	json_t *replay;	  /* array of exchanges */
	size_t replay_next;
	unsigned exchange;
	llm_script_fn script;
	void *script_ud;
};

struct llm_response *llm_response_alloc(void);
/* Parses a model's tool-call argument text into an object. */
int llm_parse_arguments(const char *text, json_t **ret, char **ret_error);

/* For llm-cassette.c, from llm.c: an empty struct llm, the provider of a
 * name (NULL if unknown), and ending a call (accounting, observer,
 * recording). */
int llm_alloc(struct llm **ret);
const struct llm_provider *llm_provider_find(const char *name);
void llm_call_complete(struct llm_call *c, int error, char *error_text);

/* For llm.c, from llm-cassette.c: appending a completed exchange to the
 * cassette being recorded, if any, and answering a call from the
 * cassette being replayed. */
void llm_record_exchange(struct llm *l, const struct llm_call *c);
void llm_call_replay(struct llm_call *c);

#endif
