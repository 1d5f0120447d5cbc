/* Unit tests of the "changes since vN" lines of a new version: the
 * model's "- " lines, bounded and made one line of text each, and the
 * lines kfix writes itself when the model gives none. */
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

#include "agent/llm.h"
#include "daemon/iterate.h"

struct script {
	const char *text;	/* the model's answer, or NULL */
	const char *error;	/* or this error */
	char *prompt;		/* what the model was asked */
};

static int answer(void *userdata, const json_t *request, json_t **ret)
{
	struct script *s = userdata;
	json_t *msgs = json_object_get(request, "messages");
	const char *content = json_string_value(json_object_get(json_array_get(msgs, 0), "content"));

	free(s->prompt);
	s->prompt = content ? strdup(content) : NULL;
	*ret = s->error ? json_pack("{s:s}", "error", s->error)
			: json_pack("{s:s?}", "text", s->text);
	return *ret ? 0 : -ENOMEM;
}

static char *changes(struct script *s, const char *reviewers)
{
	char prompts[4096], *out = NULL;
	struct iterate it = { .previous_version = 1,
			      .previous_diff = "-\tdo_slab_free(s, x);\n",
			      .comments = "Mod Erator: warn once here.",
			      .reviewers = (char *)reviewers };
	struct llm *l = NULL;
	const char *src = getenv("top_srcdir");

	snprintf(prompts, sizeof(prompts), "%s/agent/prompts", src ? src : ".");
	assert_int_equal(llm_new_scripted("test-model", answer, s, &l), 0);
	assert_int_equal(iterate_changes(l, &it, prompts, "+\tWARN_ON_ONCE(!x);\n", &out), 0);
	llm_free(l);
	assert_non_null(out);
	return out;
}

static void test_model_lines(void **state)
{
	struct script s = { .text = "Here you are:\n- Warn once (Mod Erator).  \r\n"
				    "not a line\n-no space\n- Keep\x01the \x7f" "check\n" };
	char *out;

	(void)state;
	out = changes(&s, "Mod Erator <mod@example.org>");
	assert_string_equal(out, "- Warn once (Mod Erator).\n- Keep the  check\n");
	/* the model saw both versions, the comments and the numbers */
	assert_non_null(s.prompt);
	assert_non_null(strstr(s.prompt, "from version 1 to version 2"));
	assert_non_null(strstr(s.prompt, "-\tdo_slab_free(s, x);"));
	assert_non_null(strstr(s.prompt, "+\tWARN_ON_ONCE(!x);"));
	assert_non_null(strstr(s.prompt, "Mod Erator: warn once here."));
	free(out);
	free(s.prompt);
}

static void test_bounded(void **state)
{
	char text[8192], *out;
	struct script s = { .text = text };
	size_t n = 0;
	int lines = 0;

	(void)state;
	for (int i = 0; i < 20; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "- change %d\n", i);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "- ");
	memset(text + n, 'x', 1000);
	text[n + 1000] = '\0';
	out = changes(&s, "");
	for (const char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 8);
	assert_true(strncmp(out, "- change 0\n", 11) == 0);
	assert_null(strstr(out, "change 8"));
	free(out);

	/* one long line is cut, not dropped */
	memmove(text, text + n - 2, 1003);
	out = changes(&s, "");
	assert_int_equal(strlen(out), 300 + 1);
	assert_true(strncmp(out, "- xxx", 5) == 0);
	free(out);
	free(s.prompt);
}

static void test_fallback(void **state)
{
	struct script failing = { .error = "overloaded" }, silent = { .text = "Sure.\nNo changes.\n" };
	char *out;

	(void)state;
	out = changes(&failing, "Mod Erator <mod@example.org>");
	assert_string_equal(out, "- Revised after the comments of Mod Erator <mod@example.org> on v1.\n");
	free(out);
	out = changes(&silent, "");
	assert_string_equal(out, "- Revised after the comments of the reviewers on v1.\n");
	free(out);
	free(failing.prompt);
	free(silent.prompt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_lines),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
