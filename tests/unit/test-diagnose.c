/* Unit tests of failure attribution: each family is recognised from the
 * events the agent writes for it, attributed to the right step and event
 * with a quote of that event, and the earlier decisive cause wins when
 * several are present. */
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

#include "agent/diagnose.h"
#include "common/json.h"
#include "common/strutil.h"

#define START "{\"id\": 1, \"step\": \"run\", \"kind\": \"run.start\"}"
#define LOC(id, file) \
	"{\"id\": " #id ", \"step\": \"localise\", \"kind\": \"plan\", \"verdict\": \"new location\"," \
	" \"input\": {\"file\": \"" file "\", \"function\": \"f\"}}"
#define CALL(id, step) "{\"id\": " #id ", \"step\": \"" step "\", \"kind\": \"llm.call\", \"verdict\": \"t\"}"
#define DIFF(file) \
	"diff --git a/" file " b/" file "\\n--- a/" file "\\n+++ b/" file "\\n@@ -1,1 +1,1 @@\\n-a\\n+b\\n"
#define GATE(id, file, v) \
	"{\"id\": " #id ", \"step\": \"patch\", \"kind\": \"gate\", \"verdict\": \"" v "\"," \
	" \"input\": {\"diff\": \"" DIFF(file) "\"}, \"output\": {\"accepted\": false, \"gates\":" \
	" [{\"gate\": \"size\", \"verdict\": \"pass\", \"reason\": \"\"}," \
	"  {\"gate\": \"no-bypass\", \"verdict\": \"reject\", \"reason\": \"removes the WARN_ON\"}]}}"
#define OBS(id, v, result) \
	"{\"id\": " #id ", \"step\": \"patch\", \"kind\": \"observation\", \"verdict\": \"" v "\"," \
	" \"output\": {\"result\": \"" result "\"}}"
#define END(v) "{\"id\": 99, \"step\": \"run\", \"kind\": \"run.end\", \"verdict\": \"" v "\"}"

struct expect {
	const char *family, *step, *from, *evidence;
	int64_t event;
};

static void check(const char *events, char *const *fix, const struct expect *x)
{
	json_error_t jerr;
	_cleanup_json_ json_t *ev = json_loads(events, 0, &jerr);
	struct diagnosis *d = NULL;

	if (!ev)
		fail_msg("bad test JSON: %s at %d", jerr.text, jerr.position);
	assert_int_equal(diagnose_trajectory(ev, fix, &d), 0);
	assert_string_equal(diag_family_name(d->family), x->family);
	assert_string_equal(d->step, x->step);
	assert_int_equal(d->event, x->event);
	if (x->from)
		assert_string_equal(d->from, x->from);
	if (x->evidence && !strstr(d->evidence, x->evidence))
		fail_msg("evidence '%s' lacks '%s'", d->evidence, x->evidence);
	diagnosis_free(d);
}

static void test_validated(void **state)
{
	(void)state;
	check("[" START ", " OBS(5, "validated", "no crash in 2/2 runs") ", " END("validated") "]",
	      NULL, &(struct expect){ "none", "run", "run", NULL, 99 });
}

static void test_infra(void **state)
{
	(void)state;
	check("[" START ", " CALL(2, "localise") ", {\"id\": 3, \"step\": \"patch\", \"kind\": \"tool.build\","
	      " \"verdict\": \"infra-error\", \"error\": \"Connection refused\"}, " GATE(4, "ipc/msg.c", "rejected")
	      ", " END("gave-up") "]",
	      NULL, &(struct expect){ "infrastructure", "patch", "patch", "Connection refused", 3 });
	/* a retry that got through: the host is not the cause */
	check("[" START ", {\"id\": 3, \"step\": \"patch\", \"kind\": \"tool.run\", \"verdict\": \"x\","
	      " \"output\": {\"crashed\": 0, \"survived\": 0, \"infra\": 1}},"
	      " {\"id\": 4, \"step\": \"patch\", \"kind\": \"tool.run\", \"verdict\": \"crashed 1/1: X\","
	      " \"output\": {\"crashed\": 1, \"survived\": 0, \"infra\": 0}}, "
	      OBS(5, "same-crash", "still crashes (1/1): X") ", " END("gave-up") "]",
	      NULL, &(struct expect){ "validation", "patch", "hypotheses", "still crashes", 5 });
}

static void test_model(void **state)
{
	(void)state;
	check("[" START ", " CALL(2, "localise") ", {\"id\": 3, \"step\": \"hypotheses\", \"kind\": \"llm.call\","
	      " \"error\": \"HTTP 529: overloaded\"}, " END("") "]",
	      NULL, &(struct expect){ "model-error", "hypotheses", NULL, "HTTP 529", 3 });
}

static void test_localisation_with_fix(void **state)
{
	char *fix[] = { (char *)"ipc/msg.c", NULL };
	const char *wrong = "[" START ", " CALL(2, "localise") ", " LOC(3, "ipc/sem.c") ", " LOC(4, "ipc/util.c")
			    ", " GATE(5, "ipc/sem.c", "accepted") ", " OBS(6, "same-crash", "still crashes (2/2)")
			    ", " END("gave-up") "]";

	(void)state;
	check(wrong, fix, &(struct expect){ "localisation", "localise", "localise", "ipc/sem.c, ipc/util.c", 3 });
	/* without the fix known, the same story is a validation failure */
	check(wrong, NULL, &(struct expect){ "validation", "patch", "hypotheses", "still crashes", 6 });
	/* a candidate in the fixed file: localisation found it */
	check("[" START ", " LOC(3, "ipc/sem.c") ", " GATE(5, "ipc/msg.c", "accepted") ", "
	      OBS(6, "other-crash", "a different crash (1/2): Y") ", " END("gave-up") "]",
	      fix, &(struct expect){ "validation", "patch", "hypotheses", "a different crash", 6 });
}

static void test_gates(void **state)
{
	(void)state;
	check("[" START ", " LOC(3, "ipc/msg.c") ", " GATE(4, "ipc/msg.c", "rejected") ", "
	      OBS(5, "rejected", "rejected by an integrity gate") ", " GATE(6, "ipc/msg.c", "rejected") ", "
	      OBS(7, "rejected", "rejected") ", " END("gave-up") "]",
	      NULL, &(struct expect){ "gates", "patch", "patch", "no-bypass: removes the WARN_ON", 4 });
}

static void test_edits(void **state)
{
	(void)state;
	check("[" START ", " LOC(3, "ipc/msg.c") ", {\"id\": 4, \"step\": \"patch\", \"kind\": \"guardrail\","
	      " \"verdict\": \"edits sent back\", \"output\": {\"error\": \"old text not found in ipc/msg.c\"}}, "
	      OBS(5, "unusable", "the edits do not apply") ", " END("gave-up") "]",
	      NULL, &(struct expect){ "edits", "patch", "patch", "old text not found", 4 });
	check("[" START ", " LOC(3, "ipc/msg.c") ", " GATE(4, "ipc/msg.c", "accepted") ", "
	      OBS(5, "build-error", "the patched kernel does not build") ", " END("gave-up") "]",
	      NULL, &(struct expect){ "edits", "patch", "patch", "does not build", 5 });
}

static void test_probes(void **state)
{
	(void)state;
	check("[" START ", " LOC(3, "ipc/msg.c") ", {\"id\": 4, \"step\": \"probe\", \"kind\": \"tool.probe\","
	      " \"verdict\": \"build-error\"}, {\"id\": 5, \"step\": \"probe\", \"kind\": \"tool.probe\","
	      " \"verdict\": \"probe failed\", \"error\": \"Timer expired\"}, " END("gave-up") "]",
	      NULL, &(struct expect){ "probes", "probe", "probe", "build-error", 4 });
	/* one probe that ran is evidence enough */
	check("[" START ", " LOC(3, "ipc/msg.c") ", {\"id\": 4, \"step\": \"probe\", \"kind\": \"tool.probe\","
	      " \"verdict\": \"build-error\"}, {\"id\": 5, \"step\": \"probe\", \"kind\": \"tool.probe\","
	      " \"verdict\": \"crashed\"}, {\"id\": 99, \"step\": \"run\", \"kind\": \"run.end\","
	      " \"verdict\": \"gave-up\", \"output\": {\"reason\": \"no validated patch: budget spent\"}}]",
	      NULL, &(struct expect){ "budget", "run", NULL, "budget spent", 99 });
}

static void test_no_location_and_unknown(void **state)
{
	(void)state;
	check("[" START ", " CALL(2, "localise") ", " CALL(3, "localise") ", " END("gave-up") "]", NULL,
	      &(struct expect){ "localisation", "localise", "localise", "no location proposed", 2 });
	check("[" START ", " END("gave-up") "]", NULL, &(struct expect){ "unknown", "run", "run", NULL, 99 });
	check("[]", NULL, &(struct expect){ "unknown", "run", "run", "no end", 0 });
}

static void test_json_and_files(void **state)
{
	_cleanup_json_ json_t *ev = json_loads("[" START ", " END("validated") "]", 0, NULL);
	_cleanup_json_ json_t *j = NULL;
	struct diagnosis *d = NULL;
	char **files = NULL;

	(void)state;
	assert_int_equal(diagnose_trajectory(ev, NULL, &d), 0);
	j = diagnosis_json(d);
	assert_string_equal(json_get_str(j, "family"), "none");
	assert_non_null(json_object_get(json_object_get(j, "recovery"), "directive"));
	diagnosis_free(d);
	assert_int_equal(diagnose_diff_files("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"
					     "diff --git a/y.h b/y.h\n--- a/y.h\n+++ b/y.h\n@@ -1 +1 @@\n-a\n+b\n",
					     &files), 0);
	assert_string_equal(files[0], "x.c");
	assert_string_equal(files[1], "y.h");
	assert_null(files[2]);
	strv_free(files);
	assert_int_equal(diagnose_diff_files("not a diff", &files), 0);
	assert_null(files[0]);
	strv_free(files);
	assert_int_equal(diagnose_trajectory(json_object_get(ev, "x") ?: json_null(), NULL, &d), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validated),
		cmocka_unit_test(test_infra),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_localisation_with_fix),
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_edits),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_no_location_and_unknown),
		cmocka_unit_test(test_json_and_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
