/* Private to agent/: the provider backends behind llm.h. */
#ifndef KFIX_AGENT_LLM_INTERNAL_H
#define KFIX_AGENT_LLM_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>

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

struct llm_response *llm_response_alloc(void);
/* Parses a model's tool-call argument text into an object. */
int llm_parse_arguments(const char *text, json_t **ret, char **ret_error);
char *llm_errorf(const char *fmt, ...) _printf_(1, 2);

#endif
