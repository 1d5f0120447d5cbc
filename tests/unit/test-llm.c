/* The LLM providers against a scripted server speaking the real APIs on
 * loopback (tests/agent/llm-server.py). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/llm-internal.h"
#include "agent/llm.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"

static char tmpdir[] = "/tmp/kfix-test-llm.XXXXXX";
#define SERVER_TMPDIR tmpdir
#include "llm-server.h"

static struct llm_settings settings(const char *provider, const char *url)
{
	return (struct llm_settings){
		.provider = provider, .url = url, .model = "test-model",
		.api_key = "sk-test", .max_tokens = 1000, .temperature = 0.5,
		.timeout_usec = 5000000, .connect_timeout_usec = 2000000,
		.concurrency = 2, .retries = 3, .backoff_usec = 20000,
		.price_input = 3.0, .price_output = 15.0,
	};
}

static json_t *request_with_tool(void)
{
	return json_pack("{s:s, s:[{s:s, s:s}], s:[{s:s, s:s, s:{s:s, s:{s:{s:s}}}}]}",
		"system", "You fix kernel bugs.",
		"messages", "role", "user", "content", "Where is the bug?",
		"tools", "name", "propose_location", "description", "a place",
		"parameters", "type", "object", "properties", "file", "type", "string");
}

static void test_openai_tool_call(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool(), *seen = NULL;
	struct llm_settings st;
	struct llm_usage u;
	json_t *body, *call;

	server_start(&s, "[{\"tool\": \"propose_location\", \"args\": {\"file\": \"mm/slub.c\"},"
			 " \"usage\": [1000, 200]}]");
	st = settings("openai", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_chat(l, req, &r, NULL), 0);
	assert_int_equal(json_array_size(r->tool_calls), 1);
	call = json_array_get(r->tool_calls, 0);
	assert_string_equal(json_get_str(call, "name"), "propose_location");
	assert_string_equal(json_get_str(json_object_get(call, "arguments"), "file"), "mm/slub.c");
	assert_string_equal(r->stop_reason, "tool");
	assert_int_equal(r->input_tokens, 1000);
	assert_int_equal(r->output_tokens, 200);
	/* 1000 * 3 / 1e6 + 200 * 15 / 1e6 */
	assert_true(r->cost > 0.005999 && r->cost < 0.006001);
	llm_get_usage(l, &u);
	assert_int_equal(u.calls, 1);
	assert_int_equal(u.input_tokens, 1000);

	seen = server_request(&s, 0);
	assert_non_null(seen);
	assert_string_equal(json_get_str(seen, "path"), "/chat/completions");
	assert_string_equal(json_get_str(json_object_get(seen, "headers"), "authorization"),
			    "Bearer sk-test");
	body = json_object_get(seen, "body");
	assert_string_equal(json_get_str(body, "model"), "test-model");
	assert_string_equal(json_get_str(json_array_get(json_object_get(body, "messages"), 0),
					 "role"), "system");
	assert_string_equal(json_get_str(json_object_get(json_array_get(
		json_object_get(body, "tools"), 0), "function"), "name"), "propose_location");
	server_stop(&s);
}

static void test_anthropic_conversation(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool(), *seen = NULL;
	struct llm_settings st;
	json_t *body, *msgs;

	/* a conversation that already holds a tool call and its result */
	json_array_append_new(json_object_get(req, "messages"), json_pack(
		"{s:s, s:s, s:[{s:s, s:s, s:{s:s}}]}", "role", "assistant", "content", "Looking.",
		"tool_calls", "id", "t1", "name", "propose_location", "arguments", "file", "a.c"));
	json_array_append_new(json_object_get(req, "messages"), json_pack(
		"{s:s, s:s, s:s}", "role", "tool", "tool_call_id", "t1", "content", "noted"));
	json_array_append_new(json_object_get(req, "messages"), json_pack(
		"{s:s, s:s}", "role", "user", "content", "Another?"));
	server_start(&s, "[{\"text\": \"The refcount is dropped twice.\", \"usage\": [50, 7]}]");
	st = settings("anthropic", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_chat(l, req, &r, NULL), 0);
	assert_string_equal(r->text, "The refcount is dropped twice.");
	assert_int_equal(json_array_size(r->tool_calls), 0);
	assert_int_equal(r->output_tokens, 7);

	seen = server_request(&s, 0);
	assert_string_equal(json_get_str(seen, "path"), "/v1/messages");
	assert_string_equal(json_get_str(json_object_get(seen, "headers"), "x-api-key"), "sk-test");
	assert_non_null(json_get_str(json_object_get(seen, "headers"), "anthropic-version"));
	body = json_object_get(seen, "body");
	assert_string_equal(json_get_str(body, "system"), "You fix kernel bugs.");
	msgs = json_object_get(body, "messages");
	/* user, assistant(text + tool_use), user(tool_result + text) */
	assert_int_equal(json_array_size(msgs), 3);
	assert_string_equal(json_get_str(json_array_get(json_object_get(
		json_array_get(msgs, 1), "content"), 1), "type"), "tool_use");
	assert_int_equal(json_array_size(json_object_get(json_array_get(msgs, 2), "content")), 2);
	assert_string_equal(json_get_str(json_array_get(json_object_get(
		json_array_get(msgs, 2), "content"), 0), "type"), "tool_result");
	server_stop(&s);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_retry_after(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool();
	struct llm_settings st;
	struct llm_usage u;
	uint64_t t0;

	server_start(&s, "[{\"status\": 429, \"retry_after\": 1}, {\"status\": 503},"
			 " {\"status\": 500}, {\"text\": \"ok\"}]");
	st = settings("openai", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	t0 = mono_ms();
	assert_int_equal(llm_chat(l, req, &r, NULL), 0);
	/* Retry-After: 1 was honoured, the 5xx backoffs were short */
	assert_true(mono_ms() - t0 >= 950);
	assert_true(mono_ms() - t0 < 4000);
	assert_string_equal(r->text, "ok");
	assert_int_equal(r->attempts, 4);
	llm_get_usage(l, &u);
	assert_int_equal(u.retries, 3);
	server_stop(&s);
}

static void test_retries_exhausted(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool();
	_cleanup_free_ char *err = NULL;
	struct llm_settings st;

	server_start(&s, "[{\"status\": 503}, {\"status\": 503}, {\"text\": \"late\"}]");
	st = settings("openai", s.url);
	st.retries = 1;
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_chat(l, req, &r, &err), -EIO);
	assert_null(r);
	assert_non_null(strstr(err, "HTTP 503"));
	server_stop(&s);
}

static void expect_error(const char *provider, const char *script, int want,
			 const char *needle)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool();
	_cleanup_free_ char *err = NULL;
	struct llm_settings st;

	server_start(&s, script);
	st = settings(provider, s.url);
	st.retries = 1;
	st.timeout_usec = 500000;
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_chat(l, req, &r, &err), want);
	assert_null(r);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	server_stop(&s);
}

static void test_malformed(void **state)
{
	expect_error("openai", "[{\"raw\": \"{\\\"choices\\\": [\"}]", -EBADMSG, "not JSON");
	expect_error("anthropic", "[{\"raw\": \"<html>bad gateway</html>\"}]", -EBADMSG, "not JSON");
	expect_error("openai", "[{\"raw\": \"{\\\"choices\\\": []}\"}]", -EBADMSG, "no choices");
	expect_error("anthropic", "[{\"raw\": \"{\\\"content\\\": 5}\"}]", -EBADMSG, "content");
	/* the model wrote broken tool arguments */
	expect_error("openai", "[{\"tool\": \"x\", \"args\": \"{\\\"file\\\": \"}]", -EBADMSG,
		     "arguments are not JSON");
	expect_error("openai", "[{\"status\": 400}]", -EPROTO, "HTTP 400");
	expect_error("openai", "[]", -EPROTO, "HTTP 410");
	/* truncated twice: retried once, then an error */
	expect_error("openai", "[{\"text\": \"x\", \"truncate\": 10}, {\"text\": \"x\", \"truncate\": 5}]",
		     -EIO, "transfer failed");
	/* too slow twice */
	expect_error("anthropic", "[{\"text\": \"x\", \"delay\": 1.5}, {\"text\": \"x\", \"delay\": 1.5}]",
		     -ETIMEDOUT, "attempt");
}

static void test_truncated_then_ok(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_(llm_response_freep) struct llm_response *r = NULL;
	_cleanup_json_ json_t *req = request_with_tool();
	struct llm_settings st;

	server_start(&s, "[{\"text\": \"x\", \"truncate\": 12}, {\"text\": \"x\", \"delay\": 1.5},"
			 " {\"text\": \"whole\", \"stop\": \"length\"}]");
	st = settings("openai", s.url);
	st.timeout_usec = 700000;
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_chat(l, req, &r, NULL), 0);
	assert_string_equal(r->text, "whole");
	assert_true(r->truncated);
	assert_int_equal(r->attempts, 3);
	server_stop(&s);
}

static void test_async_concurrent(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_json_ json_t *req = request_with_tool();
	struct llm_call *a, *b;
	struct llm_settings st;
	uint64_t t0;

	server_start(&s, "[{\"text\": \"a\", \"delay\": 1.5}, {\"text\": \"b\", \"delay\": 1.5}]");
	st = settings("openai", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	t0 = mono_ms();
	assert_int_equal(llm_call_start(l, req, &a), 0);
	assert_int_equal(llm_call_start(l, req, &b), 0);
	/* the caller keeps control while both are in flight */
	assert_false(llm_call_done(a));
	while (!llm_call_done(a) || !llm_call_done(b))
		assert_int_equal(llm_step(l, 100), 0);
	/* one after the other would take 3 s */
	assert_true(mono_ms() - t0 < 2800);
	for (int i = 0; i < 2; i++) {
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_call_finish(i ? b : a, &r, NULL), 0);
		assert_non_null(r->text);
	}
	server_stop(&s);
}

static void test_record_replay(void **state)
{
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL, *p = NULL;
	_cleanup_json_ json_t *req = request_with_tool(), *other = NULL;
	char cassette[128];
	struct llm_settings st;

	snprintf(cassette, sizeof(cassette), "%s/cassette.jsonl", tmpdir);
	server_start(&s, "[{\"status\": 500}, {\"tool\": \"propose_location\", \"args\": {\"file\": \"a.c\"}},"
			 " {\"text\": \"second\"}]");
	st = settings("anthropic", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_record(l, cassette), 0);
	for (int i = 0; i < 2; i++) {
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_chat(l, req, &r, NULL), 0);
	}
	server_stop(&s);

	/* replay: no server is running; the same provider code decodes */
	st = settings("anthropic", "http://127.0.0.1:9");
	assert_int_equal(llm_new(&st, &p), 0);
	assert_int_equal(llm_replay(p, cassette), 0);
	assert_true(llm_is_replay(p));
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_chat(p, req, &r, NULL), 0);
		assert_true(r->replayed);
		assert_string_equal(json_get_str(json_object_get(json_array_get(r->tool_calls, 0),
								 "arguments"), "file"), "a.c");
	}
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;
		_cleanup_free_ char *err = NULL;

		other = json_deep_copy(req);
		json_object_set_new(other, "system", json_string("Something else."));
		assert_int_equal(llm_chat(p, other, &r, &err), -ENOMSG);
		assert_non_null(strstr(err, "diverges"));
	}
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_chat(p, req, &r, NULL), 0);
		assert_string_equal(r->text, "second");
	}
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;
		_cleanup_free_ char *err = NULL;

		assert_int_equal(llm_chat(p, req, &r, &err), -ENOMSG);
		assert_non_null(strstr(err, "beyond the end"));
	}
}

static json_t *request_quoting(const char *report)
{
	return json_pack("{s:s, s:[{s:s, s:s}]}", "system", "You fix kernel bugs.",
			 "messages", "role", "user", "content", report);
}

/* A second build of the same kernel moves code: offsets, code bytes
 * (some all letters) and addresses differ, and the replay still matches;
 * a different function or word in the same place diverges. */
static void test_replay_masks_layout(void **state)
{
	static const char *const recorded =
		"BUG: KASAN: use-after-free in free_msg+0x9c/0xeb\n"
		"Code: c1 e0 2a 48 c1 ea 03 <80> 3c 02 00 eb 1f\n"
		"RIP: 0010:ksys_msgctl+0x1a2/0x3c0 at ffff88800a1b2c00 [   7.36]";
	static const char *const rebuilt =
		"BUG: KASAN: use-after-free in free_msg+0xb3/0x1d0\n"
		"Code: c1 e0 2a 48 c1 ea 03 <80> 3c 02 00 75 d3 ff\n"
		"RIP: 0010:ksys_msgctl+0x1b0/0x3c8 at ffff88800a1b3d40 [  12.04]";
	static const char *const other =
		"BUG: KASAN: use-after-free in kfree_msg+0x9c/0xeb\n"
		"Code: c1 e0 2a 48 c1 ea 03 <80> 3c 02 00 eb 1f\n"
		"RIP: 0010:ksys_msgctl+0x1a2/0x3c0 at ffff88800a1b2c00 [   7.36]";
	struct server s;
	_cleanup_(llm_freep) struct llm *l = NULL, *p = NULL;
	_cleanup_json_ json_t *a = request_quoting(recorded), *b = request_quoting(rebuilt),
			      *c = request_quoting(other);
	char cassette[128];
	struct llm_settings st;

	snprintf(cassette, sizeof(cassette), "%s/layout.jsonl", tmpdir);
	server_start(&s, "[{\"text\": \"one\"}, {\"text\": \"two\"}]");
	st = settings("anthropic", s.url);
	assert_int_equal(llm_new(&st, &l), 0);
	assert_int_equal(llm_record(l, cassette), 0);
	for (int i = 0; i < 2; i++) {
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_chat(l, a, &r, NULL), 0);
	}
	server_stop(&s);

	st = settings("anthropic", "http://127.0.0.1:9");
	assert_int_equal(llm_new(&st, &p), 0);
	assert_int_equal(llm_replay(p, cassette), 0);
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;
		_cleanup_free_ char *err = NULL;

		assert_int_equal(llm_chat(p, c, &r, &err), -ENOMSG);
		assert_non_null(strstr(err, "diverges"));
	}
	{
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;

		assert_int_equal(llm_chat(p, b, &r, NULL), 0);
		assert_string_equal(r->text, "one");
	}
}

/* Every prefix of a valid body (a truncated answer) and every single-byte
 * corruption is an error or a response, never a crash (run under ASan). */
static void test_decode_untrusted(void **state)
{
	static const char openai[] =
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\","
		"\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\","
		"\"arguments\":\"{\\\"a\\\": [1, 2]}\"}}]},\"finish_reason\":\"tool_calls\"}],"
		"\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}";
	static const char anthropic[] =
		"{\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"tool_use\",\"id\":\"t\","
		"\"name\":\"f\",\"input\":{\"a\":[1,2]}}],\"stop_reason\":\"tool_use\","
		"\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}";
	const struct llm_provider *prov[] = { &llm_provider_openai, &llm_provider_anthropic };
	const char *bodies[] = { openai, anthropic };

	for (int k = 0; k < 2; k++) {
		size_t n = strlen(bodies[k]);
		char *buf = strdup(bodies[k]);
		unsigned ok = 0;

		assert_non_null(buf);
		for (size_t i = 0; i <= n; i++) {
			struct llm_response *r = NULL;
			char *err = NULL;
			int rc = prov[k]->decode(bodies[k], i, &r, &err);

			if (rc >= 0) {
				assert_non_null(r);
				ok++;
			} else
				assert_non_null(err);
			llm_response_free(r);
			free(err);
		}
		assert_int_equal(ok, 1); /* only the whole body */
		for (size_t i = 0; i < n; i++) {
			static const char junk[] = "\"{}[]:,\\0x\x01\xff";

			for (size_t j = 0; j < sizeof(junk) - 1; j++) {
				struct llm_response *r = NULL;
				char *err = NULL;
				char saved = buf[i];

				buf[i] = junk[j];
				(void)prov[k]->decode(buf, n, &r, &err);
				buf[i] = saved;
				llm_response_free(r);
				free(err);
			}
		}
		free(buf);
	}
}

/* Addresses, timestamps and pids differ between kernel runs: a request
 * that differs only there still replays; one that differs in words does
 * not. */
static void test_replay_tolerates_run_noise(void **state)
{
	static const char line[] =
		"{\"provider\":\"openai\",\"model\":\"m\",\"request\":{\"messages\":[{\"role\":\"user\","
		"\"content\":\"[   12.345] BUG at ffff888012345678 by task repro/123 page:(____ptrval____)\"}]},"
		"\"body\":\"{\\\"choices\\\":[{\\\"message\\\":{\\\"content\\\":\\\"ok\\\"}}]}\"}\n";
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_json_ json_t *same = json_pack("{s:[{s:s, s:s}]}", "messages", "role", "user",
		"content", "[   98.7] BUG at ffff8880abcdef01 by task repro/4567 page:000000003c8b1a2e");
	_cleanup_json_ json_t *other = json_pack("{s:[{s:s, s:s}]}", "messages", "role", "user",
		"content", "[   98.7] WARNING at ffff8880abcdef01 by task repro/4567 page:000000003c8b1a2e");
	char path[128];

	snprintf(path, sizeof(path), "%s/noise.cassette", tmpdir);
	assert_int_equal(write_file_atomic(path, line, strlen(line), 0600), 0);
	for (int i = 0; i < 2; i++) {
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;
		_cleanup_free_ char *err = NULL;

		llm_free(l);
		l = NULL;
		assert_int_equal(llm_new_for_replay(path, &l), 0);
		assert_string_equal(llm_model(l), "m");
		if (i == 0) {
			assert_int_equal(llm_chat(l, same, &r, &err), 0);
			assert_string_equal(r->text, "ok");
		} else
			assert_int_equal(llm_chat(l, other, &r, &err), -ENOMSG);
	}
}

/* Records a request whose user message is texts[0], then replays a
 * request with each of the texts: those before n_same must replay, the
 * others must diverge. */
static void replay_variants(const char *name, const char *const *texts, size_t n,
			    size_t n_same)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s.cassette", tmpdir, name);
	for (size_t i = 0; i < n; i++) {
		_cleanup_(llm_freep) struct llm *l = NULL;
		_cleanup_(llm_response_freep) struct llm_response *r = NULL;
		_cleanup_free_ char *err = NULL, *line = NULL;
		_cleanup_json_ json_t *req = NULL, *e = NULL;

		req = json_pack("{s:[{s:s, s:s}]}", "messages", "role", "user", "content", texts[i]);
		assert_non_null(req);
		if (i == 0) {
			e = json_pack("{s:s, s:s, s:O, s:s}", "provider", "openai", "model", "m",
				      "request", req, "body",
				      "{\"choices\":[{\"message\":{\"content\":\"ok\"}}]}");
			line = json_dumps(e, JSON_COMPACT);
			assert_non_null(line);
			assert_int_equal(write_file_atomic(path, line, strlen(line), 0600), 0);
		}
		assert_int_equal(llm_new_for_replay(path, &l), 0);
		assert_int_equal(llm_chat(l, req, &r, &err), i < n_same ? 0 : -ENOMSG);
	}
}

/* kmemleak's hex dump: the same random bytes as hex words and as an
 * ASCII column (which may hold a quote); a request that differs only
 * there replays, one with a line less does not. */
static void test_replay_masks_hexdump(void **state)
{
	static const char *const dumps[] = {
		"    40 87 0b 00 00 ea ff ff 00 38 0b 00 00 ea ff ff  @........8......\n"
		"    c0 92 10 00 00 ea ff ff 80 92 10 00 00 ea ff ff  ................\n",
		"    80 ad 10 00 00 ea ff ff c0 22 10 00 00 ea ff ff  .........\"......\n"
		"    ab cd ef 5c 00 ea ff ff 40 ae 10 00 00 ea ff ff  ...\\....@.......\n",
		"    80 ad 10 00 00 ea ff ff c0 ad 10 00 00 ea ff ff  ................\n",
	};
	char *texts[ARRAY_SIZE(dumps)];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(dumps); i++)
		assert_true(asprintf(&texts[i], "BUG: memory leak\nunreferenced object (size 32):\n"
				     "  hex dump (first 32 bytes):\n%s  backtrace:\n", dumps[i]) > 0);
	replay_variants("hexdump", (const char *const *)texts, ARRAY_SIZE(texts), 2);
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		free(texts[i]);
}

/* KASAN's shadow rows: the bytes around the object depend on where its
 * neighbours were put, letters ("fa fb fc") as often as digits; a
 * request that differs only there replays, one with a row less, or a
 * changed line that only looks like a row, does not. */
static void test_replay_masks_shadow(void **state)
{
	static const char *const rows[] = {
		" ffff888003b2da00: fa fb fb fb fc fc fc fc fa fb fb fb fc fc fc fc\n"
		">ffff888003b2da80: fa fb fb fb fc fc fc fc 00 00 00 fc fc fc fc fc\n"
		"                                                    ^\n"
		" ffff888003b2db00: fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc\n",
		" ffff88800b1c4e00: fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc\n"
		">ffff88800b1c4e80: fa fb fb fb fb fb fb fb fb fb fb fb fb fb fb fb\n"
		"                                                    ^\n"
		" ffff88800b1c4f00: 00 00 00 00 fc fc fc fc fc fc fc fc fc fc fc fc\n",
		" ffff88800b1c4e00: fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc\n"
		">ffff88800b1c4e80: fa fb fb fb fb fb fb fb fb fb fb fb fb fb fb fb\n"
		"                                                    ^\n",
		" ffff88800b1c4e00: fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc\n"
		">ffff88800b1c4e80: fa fb fb fb fb fb fb fb fb fb fb fb fb fb fb fb\n"
		"                                                    ^\n"
		" ffff88800b1c4f00: free the object before the queue\n",
	};
	char *texts[ARRAY_SIZE(rows)];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_true(asprintf(&texts[i], "BUG: KASAN: slab-out-of-bounds in post_one_notification\n"
				     "Memory state around the buggy address:\n%s"
				     "==================================================================\n",
				     rows[i]) > 0);
	replay_variants("shadow", (const char *const *)texts, ARRAY_SIZE(texts), 2);
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		free(texts[i]);
}

static int setup(void **state)
{
	srand((unsigned)getpid());
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_untrusted),
		cmocka_unit_test(test_openai_tool_call),
		cmocka_unit_test(test_anthropic_conversation),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_retries_exhausted),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncated_then_ok),
		cmocka_unit_test(test_async_concurrent),
		cmocka_unit_test(test_record_replay),
		cmocka_unit_test(test_replay_masks_layout),
		cmocka_unit_test(test_replay_tolerates_run_noise),
		cmocka_unit_test(test_replay_masks_hexdump),
		cmocka_unit_test(test_replay_masks_shadow),
	};

	if (system("python3 -c 'import http.server' >/dev/null 2>&1") != 0) {
		printf("SKIP: python3 is needed for the scripted LLM server\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
