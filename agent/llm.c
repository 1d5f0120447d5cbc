/* The provider-neutral side of llm.h: the call state machine on a curl
 * multi handle, retries, usage accounting.  Cassettes are in
 * llm-cassette.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"

/* Longest Retry-After honoured: a server asking for more gets it capped so
 * a job never sleeps unboundedly on a stranger's say-so. */
#define RETRY_AFTER_MAX_USEC (300ull * 1000000)

struct llm_response *llm_response_alloc(void)
{
	struct llm_response *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->tool_calls = json_array();
	if (!r->tool_calls) {
		free(r);
		return NULL;
	}
	return r;
}

void llm_response_free(struct llm_response *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->stop_reason);
	json_decref(r->tool_calls);
	free(r);
}

int llm_parse_arguments(const char *text, json_t **ret, char **ret_error)
{
	json_error_t err;
	json_t *j;
	int r;

	r = json_parse_bounded(text, strlen(text), LLM_ARGS_MAX, &j, &err);
	if (r < 0) {
		*ret_error = strdup_printf("tool call arguments are not JSON: %s",
					   r == -E2BIG ? "too large" : err.text);
		return -EBADMSG;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		*ret_error = strdup_printf("tool call arguments are not an object");
		return -EBADMSG;
	}
	*ret = j;
	return 0;
}

const struct llm_provider *llm_provider_find(const char *name)
{
	if (!name || streq(name, "openai"))
		return &llm_provider_openai;
	if (streq(name, "anthropic"))
		return &llm_provider_anthropic;
	return NULL;
}

static int make_endpoint(const struct llm_provider *p, const char *url, char **ret)
{
	const char *base = url && *url ? url : p->default_url;
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	if (n >= strlen(p->endpoint_suffix) &&
	    strncmp(base + n - strlen(p->endpoint_suffix), p->endpoint_suffix,
		    strlen(p->endpoint_suffix)) == 0)
		return asprintf(ret, "%.*s", (int)n, base) < 0 ? -ENOMEM : 0;
	return asprintf(ret, "%.*s%s", (int)n, base, p->endpoint_suffix) < 0 ? -ENOMEM : 0;
}

int llm_alloc(struct llm **ret)
{
	struct llm *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->rng = clock_mono_usec() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)l;
	*ret = l;
	return 0;
}

int llm_new(const struct llm_settings *s, struct llm **ret)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	const char *src[4] = { s->provider, s->url, s->model, s->api_key };
	int r;

	if (!llm_provider_find(s->provider))
		return -EINVAL;
	r = llm_alloc(&l);
	if (r < 0)
		return r;
	l->s = *s;
	for (size_t i = 0; i < ARRAY_SIZE(src); i++)
		if (src[i] && !(l->strings[i] = strdup(src[i])))
			return -ENOMEM;
	l->s.provider = l->strings[0];
	l->s.url = l->strings[1];
	l->s.model = l->strings[2];
	l->s.api_key = l->strings[3];
	if (l->s.concurrency == 0)
		l->s.concurrency = 1;
	if (l->s.max_tokens <= 0)
		l->s.max_tokens = 4096;
	if (l->s.max_backoff_usec == 0)
		l->s.max_backoff_usec = 60ull * 1000000;
	l->provider = llm_provider_find(s->provider);
	r = make_endpoint(l->provider, s->url, &l->endpoint);
	if (r < 0)
		return r;
	l->multi = curl_multi_init();
	if (!l->multi)
		return -ENOMEM;
	*ret = TAKE_PTR(l);
	return 0;
}

int llm_new_scripted(const char *model, llm_script_fn fn, void *userdata,
		     struct llm **ret)
{
	struct llm_settings s = { .provider = "openai", .model = model,
				  .max_tokens = 4096, .concurrency = 1 };
	struct llm *l;
	int r;

	r = llm_new(&s, &l);
	if (r < 0)
		return r;
	l->script = fn;
	l->script_ud = userdata;
	*ret = l;
	return 0;
}

static int parse_price(const char *s, double *ret)
{
	char *end;
	double d;

	if (!s) {
		*ret = 0;
		return 0;
	}
	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || d < 0)
		return -EINVAL;
	*ret = d;
	return 0;
}

/* [llm] replay: the model's answers come from a cassette (demos, tests);
 * nothing is sent to the url. */
static int replay_from_config(const struct config *c, const char *name, struct llm **l,
			      char **ret_error)
{
	_cleanup_free_ char *path = NULL;
	int r;

	if (config_get_path(c, "llm", name, "replay", &path) < 0)
		return 0;
	r = llm_replay(*l, path);
	if (r < 0) {
		*ret_error = strdup_printf("[llm \"%s\"] replay %s: %s", name, path, strerror(-r));
		llm_free(*l);
		*l = NULL;
	}
	return r;
}

int llm_new_from_config(const struct config *c, const char *name,
			struct llm **ret, char **ret_error)
{
	_cleanup_strv_ char **names = NULL;
	_cleanup_free_ char *key = NULL;
	struct llm_settings s = {};
	const char *temp = NULL, *pin = NULL, *pout = NULL;
	int64_t i64;
	int r;

	if (!name) {
		r = config_subsections(c, "llm", &names);
		if (r < 0 || !names || !names[0]) {
			*ret_error = strdup_printf("no [llm \"NAME\"] section in the configuration");
			return -ENOENT;
		}
		name = names[0];
	}
	(void)config_get_string(c, "llm", name, "provider", &s.provider);
	(void)config_get_string(c, "llm", name, "url", &s.url);
	if (config_get_string(c, "llm", name, "model", &s.model) < 0) {
		*ret_error = strdup_printf("[llm \"%s\"] has no model", name);
		return -ENOENT;
	}
	r = config_get_secret(c, "llm", name, "api-key", &key);
	if (r < 0 && r != -ENOENT) {
		*ret_error = strdup_printf("[llm \"%s\"] api-key: %s", name, strerror(-r));
		return r;
	}
	s.api_key = key;
	if (config_get_int(c, "llm", name, "max-tokens", &i64) >= 0)
		s.max_tokens = (int)i64;
	(void)config_get_string(c, "llm", name, "temperature", &temp);
	(void)config_get_duration(c, "llm", name, "timeout", &s.timeout_usec);
	(void)config_get_duration(c, "llm", name, "connect-timeout", &s.connect_timeout_usec);
	(void)config_get_duration(c, "llm", name, "backoff", &s.backoff_usec);
	(void)config_get_duration(c, "llm", name, "max-backoff", &s.max_backoff_usec);
	if (config_get_int(c, "llm", name, "concurrency", &i64) >= 0)
		s.concurrency = (unsigned)i64;
	if (config_get_int(c, "llm", name, "retries", &i64) >= 0)
		s.retries = (unsigned)i64;
	(void)config_get_string(c, "llm", name, "price-input", &pin);
	(void)config_get_string(c, "llm", name, "price-output", &pout);
	if (parse_price(temp, &s.temperature) < 0 || parse_price(pin, &s.price_input) < 0 ||
	    parse_price(pout, &s.price_output) < 0) {
		*ret_error = strdup_printf("[llm \"%s\"]: temperature and prices must be numbers >= 0", name);
		return -EINVAL;
	}
	r = llm_new(&s, ret);
	if (r < 0) {
		*ret_error = strdup_printf("[llm \"%s\"]: %s", name, strerror(-r));
		return r;
	}
	return replay_from_config(c, name, ret, ret_error);
}

void llm_agent_conf_free(struct llm_agent_conf *ac)
{
	free(ac->llm);
	free(ac->iterate_llm);
	*ac = (struct llm_agent_conf){ 0 };
}

/* An unset key (no schema default) is NULL in *ret. */
static int strdup_config(const struct config *c, const char *key, char **ret)
{
	const char *v;

	if (config_get_string(c, "agent", NULL, key, &v) < 0)
		return 0;
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

int llm_agent_conf_from_config(const struct config *c, struct llm_agent_conf *ret)
{
	_cleanup_(llm_agent_conf_free) struct llm_agent_conf ac = { 0 };
	int r;

	if ((r = strdup_config(c, "llm", &ac.llm)) < 0 ||
	    (r = strdup_config(c, "iterate-llm", &ac.iterate_llm)) < 0 ||
	    (r = config_get_bool(c, "agent", NULL, "record", &ac.record)) < 0)
		return r;
	*ret = ac;
	ac = (struct llm_agent_conf){ 0 };
	return 0;
}

static void call_free(struct llm_call *c)
{
	if (!c)
		return;
	if (c->easy) {
		curl_multi_remove_handle(c->llm->multi, c->easy);
		curl_easy_cleanup(c->easy);
	}
	curl_slist_free_all(c->headers);
	json_decref(c->request);
	free(c->body);
	buf_free(&c->resp);
	free(c->error_text);
	llm_response_free(c->response);
	free(c);
}

void llm_free(struct llm *l)
{
	if (!l)
		return;
	while (l->calls) {
		struct llm_call *c = l->calls;

		l->calls = c->next;
		call_free(c);
	}
	if (l->multi)
		curl_multi_cleanup(l->multi);
	if (l->record)
		fclose(l->record);
	json_decref(l->replay);
	for (size_t i = 0; i < ARRAY_SIZE(l->strings); i++)
		free(l->strings[i]);
	free(l->endpoint);
	free(l);
}

const char *llm_model(const struct llm *l)
{
	return l->s.model ?: "unknown";
}

const char *llm_provider_name(const struct llm *l)
{
	return l->script ? "scripted" : l->provider->name;
}

void llm_get_usage(const struct llm *l, struct llm_usage *ret)
{
	*ret = l->usage;
}

void llm_call_complete(struct llm_call *c, int error, char *error_text)
{
	struct llm *l = c->llm;
	uint64_t dur = clock_mono_usec() - c->started;

	c->state = CALL_DONE;
	c->error = error;
	c->error_text = error_text;
	l->usage.calls++;
	l->usage.busy_usec += dur;
	if (error < 0) {
		l->usage.failures++;
	} else {
		struct llm_response *r = c->response;

		r->cost = ((double)r->input_tokens * l->s.price_input +
			   (double)r->output_tokens * l->s.price_output) / 1e6;
		r->attempts = c->attempts;
		r->duration_usec = dur;
		l->usage.input_tokens += r->input_tokens;
		l->usage.output_tokens += r->output_tokens;
		l->usage.cost += r->cost;
	}
	if (l->observer)
		l->observer(l->observer_ud, error >= 0, dur,
			    error >= 0 ? c->response->input_tokens : 0,
			    error >= 0 ? c->response->output_tokens : 0,
			    error >= 0 ? c->response->cost : 0);
	if (!l->script && !l->replay)
		llm_record_exchange(l, c);
	l->exchange++;
}

void llm_set_observer(struct llm *l, llm_observer_fn fn, void *ud)
{
	l->observer = fn;
	l->observer_ud = ud;
}

static void call_script(struct llm_call *c)
{
	_cleanup_json_ json_t *o = NULL;
	struct llm *l = c->llm;
	struct llm_response *resp;
	json_t *calls, *call;
	const char *err, *text;
	size_t i;
	int r;

	c->attempts = 1;
	r = l->script(l->script_ud, c->request, &o);
	if (r < 0) {
		llm_call_complete(c, r, strdup_printf("scripted model failed: %s", strerror(-r)));
		return;
	}
	err = json_get_str(o, "error");
	if (err) {
		llm_call_complete(c, -EPROTO, strdup(err));
		return;
	}
	resp = llm_response_alloc();
	if (!resp) {
		llm_call_complete(c, -ENOMEM, NULL);
		return;
	}
	text = json_get_str(o, "text");
	resp->text = text ? strdup(text) : NULL;
	calls = json_object_get(o, "tool_calls");
	json_array_foreach(calls, i, call)
		json_array_append(resp->tool_calls, call);
	resp->stop_reason = strdup(json_array_size(resp->tool_calls) ? "tool" : "stop");
	resp->input_tokens = (uint64_t)MAX(json_get_int(o, "input_tokens", 0), 0);
	resp->output_tokens = (uint64_t)MAX(json_get_int(o, "output_tokens", 0), 0);
	c->response = resp;
	llm_call_complete(c, 0, NULL);
}

static size_t on_write(char *p, size_t size, size_t n, void *userdata)
{
	struct llm_call *c = userdata;

	/* A short count makes curl fail the transfer with a write error. */
	return buf_append(&c->resp, p, size * n) < 0 ? 0 : size * n;
}

static int call_launch(struct llm_call *c)
{
	struct llm *l = c->llm;
	CURL *e;

	if (c->easy) {
		curl_multi_remove_handle(l->multi, c->easy);
		curl_easy_cleanup(c->easy);
		c->easy = NULL;
	}
	buf_free(&c->resp);
	c->resp = BUF_INIT(LLM_BODY_MAX);
	e = curl_easy_init();
	if (!e)
		return -ENOMEM;
	curl_easy_setopt(e, CURLOPT_URL, l->endpoint);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(e, CURLOPT_PRIVATE, c);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "kfix/" PACKAGE_VERSION);
	if (l->s.timeout_usec)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(l->s.timeout_usec / 1000));
	if (l->s.connect_timeout_usec)
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
				 (long)(l->s.connect_timeout_usec / 1000));
	if (curl_multi_add_handle(l->multi, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		return -EIO;
	}
	c->easy = e;
	c->attempts++;
	c->state = CALL_ACTIVE;
	l->active++;
	return 0;
}

int llm_call_start(struct llm *l, const json_t *request, struct llm_call **ret)
{
	_cleanup_free_ struct llm_call *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	if (!json_is_object(request))
		return -EINVAL;
	c->llm = l;
	c->request = json_deep_copy(request);
	c->started = clock_mono_usec();
	if (!c->request)
		return -ENOMEM;
	if (l->script)
		call_script(c);
	else if (l->replay)
		llm_call_replay(c);
	else {
		r = l->provider->encode(&l->s, request, &c->body);
		if (r >= 0)
			r = l->provider->headers(&l->s, &c->headers);
		if (r < 0) {
			json_decref(c->request);
			curl_slist_free_all(c->headers);
			free(c->body);
			return r;
		}
		c->state = CALL_WAITING;
	}
	c->next = l->calls;
	l->calls = c;
	*ret = TAKE_PTR(c);
	return 0;
}

static uint64_t next_random(struct llm *l)
{
	/* xorshift64*: jitter only needs to decorrelate clients */
	l->rng ^= l->rng >> 12;
	l->rng ^= l->rng << 25;
	l->rng ^= l->rng >> 27;
	return l->rng * 2685821657736338717ull;
}

static uint64_t backoff(struct llm *l, unsigned attempt)
{
	uint64_t d = l->s.backoff_usec ?: 1000000;

	for (unsigned i = 1; i < attempt && d < l->s.max_backoff_usec; i++)
		d *= 2;
	d = MIN(d, l->s.max_backoff_usec);
	/* "equal jitter": between half and the whole delay */
	return d / 2 + (d > 1 ? next_random(l) % (d / 2 + 1) : 0);
}

static bool curl_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

static void schedule_retry(struct llm_call *c, uint64_t delay)
{
	c->state = CALL_WAITING;
	c->not_before = clock_mono_usec() + delay;
	c->llm->usage.retries++;
}

static char *http_error_text(const struct llm_call *c, long status)
{
	_cleanup_free_ char *excerpt = str_escape(c->resp.data ?: "", c->resp.len, 300);

	return strdup_printf("HTTP %ld from endpoint: %s", status, excerpt ?: "");
}

static void transfer_done(struct llm_call *c, CURLcode cc)
{
	struct llm *l = c->llm;
	bool more = c->attempts <= l->s.retries;
	long status = 0;
	char *msg = NULL;
	int r;

	l->active--;
	if (cc != CURLE_OK) {
		if (curl_retryable(cc) && more) {
			schedule_retry(c, backoff(l, c->attempts));
			return;
		}
		llm_call_complete(c, cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO,
			      strdup_printf("transfer failed after %u attempt(s): %s",
					    c->attempts, curl_easy_strerror(cc)));
		return;
	}
	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status == 429 || status == 408 || status >= 500) {
		curl_off_t after = 0;

		if (more) {
			uint64_t delay = backoff(l, c->attempts);

			if (curl_easy_getinfo(c->easy, CURLINFO_RETRY_AFTER, &after) == CURLE_OK &&
			    after > 0)
				delay = MIN((uint64_t)after * 1000000, RETRY_AFTER_MAX_USEC);
			schedule_retry(c, delay);
			return;
		}
		llm_call_complete(c, status == 429 ? -EBUSY : -EIO, http_error_text(c, status));
		return;
	}
	if (status != 200) {
		llm_call_complete(c, -EPROTO, http_error_text(c, status));
		return;
	}
	r = l->provider->decode(c->resp.data ?: "", c->resp.len, &c->response, &msg);
	llm_call_complete(c, r < 0 ? r : 0, msg);
}

static uint64_t launch_ready(struct llm *l)
{
	uint64_t now = clock_mono_usec(), next = UINT64_MAX;

	for (struct llm_call *c = l->calls; c; c = c->next) {
		if (c->state != CALL_WAITING)
			continue;
		if (c->not_before > now) {
			next = MIN(next, c->not_before);
			continue;
		}
		if (l->active >= l->s.concurrency)
			continue;
		if (call_launch(c) < 0)
			llm_call_complete(c, -EIO, strdup_printf("could not start the transfer"));
	}
	return next;
}

int llm_step(struct llm *l, int max_wait_ms)
{
	uint64_t next;
	int running = 0, left;
	CURLMsg *m;
	long wait;

	next = launch_ready(l);
	if (curl_multi_perform(l->multi, &running) != CURLM_OK)
		return -EIO;
	while ((m = curl_multi_info_read(l->multi, &left))) {
		struct llm_call *c = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
		if (c)
			transfer_done(c, m->data.result);
	}
	next = MIN(next, launch_ready(l));
	wait = max_wait_ms;
	if (next != UINT64_MAX) {
		uint64_t now = clock_mono_usec();

		wait = MIN(wait, next > now ? (long)((next - now) / 1000) + 1 : 0);
	}
	if (wait > 0 && (l->active > 0 || next != UINT64_MAX))
		if (curl_multi_poll(l->multi, NULL, 0, (int)wait, NULL) != CURLM_OK)
			return -EIO;
	return 0;
}

bool llm_call_done(const struct llm_call *c)
{
	return c->state == CALL_DONE;
}

int llm_call_finish(struct llm_call *c, struct llm_response **ret, char **ret_error)
{
	struct llm *l = c->llm;
	int r = c->error;

	if (c->state != CALL_DONE)
		return -EAGAIN;
	for (struct llm_call **p = &l->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (r < 0) {
		if (ret_error)
			*ret_error = TAKE_PTR(c->error_text);
	} else
		*ret = TAKE_PTR(c->response);
	call_free(c);
	return r;
}

int llm_chat(struct llm *l, const json_t *request, struct llm_response **ret,
	     char **ret_error)
{
	struct llm_call *c;
	int r;

	r = llm_call_start(l, request, &c);
	if (r < 0)
		return r;
	while (!llm_call_done(c)) {
		r = llm_step(l, 1000);
		if (r < 0)
			return r;
	}
	return llm_call_finish(c, ret, ret_error);
}

json_t *llm_one_tool_request(const char *system, const char *user, const char *tool,
			     const char *description, json_t *parameters)
{
	return json_pack("{s:s, s:[{s:s, s:s}], s:[{s:s, s:s, s:o}], s:s}", "system", system,
			 "messages", "role", "user", "content", user, "tools", "name", tool,
			 "description", description, "parameters", parameters, "tool_choice", tool);
}

int llm_ask_tool(struct llm *l, const json_t *req, const char *tool, struct llm_response **ret,
		 const json_t **ret_args, char **ret_error)
{
	struct llm_response *resp = NULL;
	const json_t *call;
	int r = llm_chat(l, req, &resp, ret_error);

	if (r < 0)
		return r;
	call = json_array_get(resp->tool_calls, 0);
	if (!call || !streq_ptr(json_get_str(call, "name"), tool)) {
		llm_response_free(resp);
		return error_set(ret_error, -EBADMSG, "the model did not call %s", tool);
	}
	*ret_args = json_object_get(call, "arguments");
	*ret = resp;
	return 0;
}
