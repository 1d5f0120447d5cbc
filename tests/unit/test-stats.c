/* Unit tests of the jobs' numbers: recorded in the store by several
 * processes, rendered in the Prometheus text format. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "daemon/stats.h"
#include "daemon/store.h"
#include "tests/unit/store-fixture.h"

static char *render(struct store *s)
{
	struct buf out = BUF_INIT(1024 * 1024);

	assert_int_equal(stats_render(s, &out), 0);
	return out.data ? out.data : strdup("");
}

static void assert_has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing \"%s\" in:\n%s", line, text);
}

static void test_empty(void **state)
{
	struct fixture *f = *state;
	char *t = render(f->s);

	assert_string_equal(t, "");
	free(t);
}

static void test_builds_runs_llm(void **state)
{
	struct fixture *f = *state;
	char *t;

	assert_int_equal(stats_build(f->s, "ok", 400), 0);
	assert_int_equal(stats_build(f->s, "ok", 700), 0);
	assert_int_equal(stats_build(f->s, "build-error", 30), 0);
	assert_int_equal(stats_build(f->s, "made-up\"}\n", 1), 0);
	assert_int_equal(stats_vm_run(f->s, "crashed", 90), 0);
	assert_int_equal(stats_vm_run(f->s, "infra-error", 0.05), 0);
	assert_int_equal(stats_llm_call(f->s, "gpt-4.1", true, 3.5, 1200, 300, 0.0042), 0);
	assert_int_equal(stats_llm_call(f->s, "gpt-4.1", false, 60, 1000, 0, 0), 0);
	assert_int_equal(stats_llm_call(f->s, "bad\"model\nname", true, 1, 10, 20, 0), 0);
	t = render(f->s);
	assert_has(t, "# TYPE kfix_builds_total counter\n");
	assert_has(t, "kfix_builds_total{result=\"ok\"} 2\n");
	assert_has(t, "kfix_builds_total{result=\"build-error\"} 1\n");
	assert_has(t, "kfix_builds_total{result=\"other\"} 1\n");
	assert_has(t, "# TYPE kfix_build_duration_seconds histogram\n");
	/* 400 s and 700 s: none up to 300, one up to 600, both up to 1200 */
	assert_has(t, "kfix_build_duration_seconds_bucket{result=\"ok\",le=\"300\"} 0\n");
	assert_has(t, "kfix_build_duration_seconds_bucket{result=\"ok\",le=\"600\"} 1\n");
	assert_has(t, "kfix_build_duration_seconds_bucket{result=\"ok\",le=\"1200\"} 2\n");
	assert_has(t, "kfix_build_duration_seconds_bucket{result=\"ok\",le=\"+Inf\"} 2\n");
	assert_has(t, "kfix_build_duration_seconds_sum{result=\"ok\"} 1100.000000\n");
	assert_has(t, "kfix_build_duration_seconds_count{result=\"ok\"} 2\n");
	assert_has(t, "kfix_vm_runs_total{outcome=\"crashed\"} 1\n");
	assert_has(t, "kfix_vm_run_duration_seconds_bucket{outcome=\"infra-error\",le=\"0.1\"} 1\n");
	assert_has(t, "kfix_llm_calls_total{model=\"gpt-4.1\",result=\"ok\"} 1\n");
	assert_has(t, "kfix_llm_calls_total{model=\"gpt-4.1\",result=\"failed\"} 1\n");
	assert_has(t, "kfix_llm_call_duration_seconds_count{model=\"gpt-4.1\"} 2\n");
	assert_has(t, "kfix_llm_tokens_total{model=\"gpt-4.1\",direction=\"input\"} 2200\n");
	assert_has(t, "kfix_llm_tokens_total{model=\"gpt-4.1\",direction=\"output\"} 300\n");
	assert_has(t, "kfix_llm_cost_dollars_total{model=\"gpt-4.1\"} 0.0042\n");
	assert_has(t, "kfix_llm_calls_total{model=\"other\",result=\"ok\"} 1\n");
	/* one HELP and TYPE per family */
	assert_null(strstr(strstr(t, "# TYPE kfix_builds_total") + 1, "# TYPE kfix_builds_total"));
	free(t);
}

static void test_store_checks(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(store_metric_add(f->s, "1bad", NULL, 1), -EINVAL);
	assert_int_equal(store_metric_add(f->s, "bad name", NULL, 1), -EINVAL);
	assert_int_equal(store_metric_add(f->s, "ok_total", "a=\"b\"\n", 1), -EINVAL);
	assert_int_equal(store_metric_add(f->s, "ok_total", NULL, -1), -EINVAL);
	assert_int_equal(store_metric_observe(f->s, "ok_seconds", NULL, 0.0 / 0.0), -EINVAL);
	assert_int_equal(store_metric_add(f->s, "ok_total", NULL, 2.5), 0);
	/* a counter name cannot become a histogram */
	assert_true(store_metric_observe(f->s, "ok_total", NULL, 1) < 0);
	for (int i = 1; i < STORE_METRIC_SERIES_MAX; i++) {
		char labels[32];

		snprintf(labels, sizeof(labels), "n=\"%d\"", i);
		assert_int_equal(store_metric_add(f->s, "many_total", labels, 1), 0);
	}
	assert_int_equal(store_metric_add(f->s, "many_total", "n=\"new\"", 1), -E2BIG);
	/* known series still count */
	assert_int_equal(store_metric_add(f->s, "many_total", "n=\"7\"", 1), 0);
	assert_int_equal(store_metric_add(f->s, "ok_total", NULL, 1), 0);
}

/* Job processes record at the same time; nothing is lost. */
static void test_processes(void **state)
{
	struct fixture *f = *state;
	pid_t pids[4];
	char *t;

	for (int p = 0; p < 4; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			struct store *s;
			int bad = 0;

			if (store_open(f->path, &s) < 0)
				_exit(1);
			for (int i = 0; i < 50; i++)
				bad |= stats_vm_run(s, "no-crash", 1.5) < 0;
			store_close(s);
			_exit(bad);
		}
	}
	for (int p = 0; p < 4; p++) {
		int st;

		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	t = render(f->s);
	assert_has(t, "kfix_vm_runs_total{outcome=\"no-crash\"} 200\n");
	assert_has(t, "kfix_vm_run_duration_seconds_sum{outcome=\"no-crash\"} 300.000000\n");
	assert_has(t, "kfix_vm_run_duration_seconds_bucket{outcome=\"no-crash\",le=\"2.5\"} 200\n");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builds_runs_llm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_processes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
