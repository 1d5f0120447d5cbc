/* Unit tests of the scrubber: each class of secret (known literal
 * values, URL credentials, HTTP credentials, providers' token forms,
 * key = value pairs, private keys) and of address is removed, wherever in
 * a text or a JSON document it stands; ordinary kernel text is kept. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/json.h"
#include "common/strutil.h"
#include "daemon/scrub.h"

static struct scrub *new_scrub(void)
{
	char *secrets[] = { (char *)"hunter2-configured", (char *)"abc", NULL };
	struct scrub *s = NULL;

	assert_int_equal(scrub_new(secrets, &s), 0);
	return s;
}

/* text scrubbed must not contain gone, and must contain kept (may be NULL) */
static void check(struct scrub *s, const char *text, const char *gone, const char *kept)
{
	char *out = NULL;

	assert_int_equal(scrub_text(s, text, &out), 0);
	if (strstr(out, gone))
		fail_msg("'%s' left in '%s'", gone, out);
	if (kept && !strstr(out, kept))
		fail_msg("'%s' lost from '%s'", kept, out);
	free(out);
}

static void test_known_secrets(void **state)
{
	struct scrub *s = new_scrub();
	char *out = NULL;

	(void)state;
	check(s, "header: xhunter2-configuredx", "hunter2-configured", "header: x");
	check(s, "hunter2-configuredhunter2-configured", "hunter2", NULL);
	/* a secret too short to search for does not cut words */
	assert_int_equal(scrub_text(s, "abcdef", &out), 0);
	assert_string_equal(out, "abcdef");
	free(out);
	scrub_free(s);
}

static void test_url_credentials(void **state)
{
	static const char *const urls[][2] = {
		{ "https://alice:s3cr3t-pw@git.example.org/linux.git", "git.example.org/linux.git" },
		{ "ssh://git:tok_123456@127.0.0.1:2222/tree", "127.0.0.1:2222/tree" },
		{ "smtps://bot%40x:p%3Ass@[::1]:465", "[::1]:465" },
		{ "clone it from http://ghp-only-token@example.com/a", "example.com/a" },
		{ "\"url\": \"postgresql://kfix:pg-pass-1@db:5432/kfix\"", "db:5432/kfix" },
	};
	static const char *const secret[] = { "s3cr3t-pw", "tok_123456", "p%3Ass", "ghp-only-token",
					      "pg-pass-1" };
	struct scrub *s = new_scrub();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(urls); i++)
		check(s, urls[i][0], secret[i], urls[i][1]);
	/* a URL without credentials, and an address in a path, are no credential */
	check(s, "https://lore.kernel.org/all/abc.def@x/", "[REDACTED]", "https://lore.kernel.org/");
	scrub_free(s);
}

static void test_http_credentials(void **state)
{
	struct scrub *s = new_scrub();

	(void)state;
	check(s, "Authorization: Bearer eyZ0aGlzIGlzIGEgdG9rZW4=", "eyZ0aGlz", "Authorization");
	check(s, "authorization: basic dXNlcjpwYXNzd29yZA==", "dXNlcjpw", NULL);
	check(s, "-H 'x-api-key: 7f9a1b2c3d4e5f60718293a4b5c6d7e8'", "7f9a1b2c", "-H");
	/* prose is not a credential */
	check(s, "Basic understanding of locking", "[REDACTED]", "Basic understanding");
	scrub_free(s);
}

static void test_token_forms(void **state)
{
	static const char *const tokens[] = {
		"sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
		"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx0123-_xyz",
		"ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"glpat-ABCDEFGHIJKLMNOPQRST",
		"xoxb-1234567890-abcdefghij",
		"AKIAIOSFODNN7EXAMPLE",
		"AIzaSyA-0123456789abcdefghijklmnopqrstu",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	};
	struct scrub *s = new_scrub();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tokens); i++) {
		char *text = NULL;

		assert_true(asprintf(&text, "the model said %s here", tokens[i]) > 0);
		check(s, text, tokens[i], "the model said ");
		free(text);
	}
	scrub_free(s);
}

static void test_key_value(void **state)
{
	static const char *const texts[][2] = {
		{ "api_key=Zm9vYmFyYmF6", "Zm9vYmFyYmF6" },
		{ "{\"password\": \"correct horse\"}", "correct" },
		{ "push-token = plain-literal-value", "plain-literal-value" },
		{ "GET /v1/models?key=QWERTY123456&x=1", "QWERTY123456" },
		{ "client_secret: 'c-l-i-e-n-t'", "c-l-i-e-n-t" },
		{ "SMTP_PASSWORD=letmein99", "letmein99" },
	};
	struct scrub *s = new_scrub();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		check(s, texts[i][0], texts[i][1], NULL);
	/* counts and code are not secrets */
	check(s, "\"max_tokens\": 4096, \"tokens_in\": 1200", "[REDACTED]", "4096");
	check(s, "int token = 0;", "[REDACTED]", "token = 0;");
	scrub_free(s);
}

static void test_private_key(void **state)
{
	struct scrub *s = new_scrub();

	(void)state;
	check(s,
	      "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJD\n"
	      "-----END OPENSSH PRIVATE KEY-----\nafter",
	      "b3BlbnNzaC1rZXkt", "after");
	/* cut short by a text limit: no END line */
	check(s, "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyu", "MIIEpAIB", NULL);
	scrub_free(s);
}

static void test_addresses(void **state)
{
	struct scrub *s = new_scrub();
	char *a = NULL, *b = NULL, *again = NULL;

	(void)state;
	assert_int_equal(scrub_text(s, "From: Alice <alice@example.org>, bob@kernel.org", &a), 0);
	assert_null(strstr(a, "alice@"));
	assert_null(strstr(a, "bob@"));
	assert_non_null(strstr(a, "person1@redacted.invalid"));
	assert_non_null(strstr(a, "person2@redacted.invalid"));
	/* the same person keeps their placeholder, whatever the case */
	assert_int_equal(scrub_text(s, "Cc: ALICE@example.org", &b), 0);
	assert_string_equal(b, "Cc: person1@redacted.invalid");
	/* a scrubbed text scrubbed again is the same */
	assert_int_equal(scrub_text(s, a, &again), 0);
	assert_string_equal(again, a);
	free(a);
	free(b);
	free(again);
	/* syzbot's per-bug address is an address too */
	check(s, "Reported-by: syzbot+0123abcd@syzkaller.appspotmail.com", "syzbot+0123abcd", "Reported-by");
	scrub_free(s);
}

static void test_kernel_text_kept(void **state)
{
	static const char report[] =
		"BUG: KASAN: use-after-free in msg_rcv+0x1a2/0x3c0 ipc/msg.c:1123\n"
		"Read of size 8 at addr ffff888012345678 by task repro/4242\n"
		"Call Trace:\n <TASK>\n dump_stack_lvl+0x48/0x60\n";
	struct scrub *s = new_scrub();
	char *out = NULL;

	(void)state;
	assert_int_equal(scrub_text(s, report, &out), 0);
	assert_string_equal(out, report);
	assert_int_equal(scrub_count(s), 0);
	free(out);
	scrub_free(s);
}

static void test_json(void **state)
{
	_cleanup_json_ json_t *j = json_loads(
		"{\"input\": {\"headers\": [\"x-api-key: sk-ant-api03-0123456789abcdefghij\"],"
		" \"api-key\": \"opaque\", \"token\": \"short1\"},"
		" \"output\": {\"text\": \"mail dave@example.net\"},"
		" \"carol@example.com\": [\"hunter2-configured\", 1, null]}",
		0, NULL);
	struct scrub *s = new_scrub();
	_cleanup_free_ char *dump = NULL;

	(void)state;
	assert_non_null(j);
	assert_int_equal(scrub_json(s, j), 0);
	dump = json_dumps(j, JSON_SORT_KEYS);
	assert_non_null(dump);
	assert_null(strstr(dump, "sk-ant"));
	assert_null(strstr(dump, "opaque"));
	assert_null(strstr(dump, "short1"));
	assert_null(strstr(dump, "dave@"));
	assert_null(strstr(dump, "carol@"));
	assert_null(strstr(dump, "hunter2"));
	/* a renamed key keeps its value */
	assert_non_null(json_object_get(j, "person2@redacted.invalid"));
	assert_int_equal(json_array_size(json_object_get(j, "person2@redacted.invalid")), 3);
	scrub_free(s);
}

static void test_hostile(void **state)
{
	size_t n = 4u * 1024 * 1024;
	char *big = malloc(n + 1), *out = NULL;
	struct scrub *s = new_scrub();
	int r;

	(void)state;
	assert_non_null(big);
	/* backtracking fodder: a long run that almost makes an address */
	memset(big, 'a', n);
	for (size_t i = 64; i < n; i += 65)
		big[i] = '.';
	big[n] = '\0';
	r = scrub_text(s, big, &out);
	assert_true(r == 0 || r == -E2BIG);
	assert_true(r < 0 || strlen(out) == n);
	free(out);
	free(big);
	scrub_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_secrets),
		cmocka_unit_test(test_url_credentials),
		cmocka_unit_test(test_http_credentials),
		cmocka_unit_test(test_token_forms),
		cmocka_unit_test(test_key_value),
		cmocka_unit_test(test_private_key),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_kernel_text_kept),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
