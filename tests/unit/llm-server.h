/* Test helper: starts tests/agent/llm-server.py on loopback with a script
 * and reads back the requests it saw.  Define SERVER_TMPDIR (a folder
 * that exists) before including. */
#ifndef KFIX_TEST_LLM_SERVER_H
#define KFIX_TEST_LLM_SERVER_H

#include <signal.h>
#include <sys/wait.h>

struct server {
	pid_t pid;
	char dir[64];
	char url[128];
	char log[128];
};

static void server_start(struct server *s, const char *script)
{
	char path[256], port_file[256];
	_cleanup_free_ char *srv = NULL;
	const char *top = getenv("top_srcdir") ?: ".";

	snprintf(s->dir, sizeof(s->dir), "%s/s%d", SERVER_TMPDIR, rand());
	assert_int_equal(mkdir_p(s->dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/script.json", s->dir);
	snprintf(port_file, sizeof(port_file), "%s/port", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/requests.jsonl", s->dir);
	assert_int_equal(write_file_atomic(path, script, strlen(script), 0600), 0);
	assert_true(asprintf(&srv, "%s/tests/agent/llm-server.py", top) > 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		execlp("python3", "python3", srv, "--script", path, "--log", s->log,
		       "--port-file", port_file, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		_cleanup_free_ char *port = NULL;

		if (read_file_bounded(port_file, 64, &port, NULL) == 0) {
			snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", atoi(port));
			return;
		}
		usleep(50 * 1000);
	}
	fail_msg("scripted server did not start");
}

static void server_stop(struct server *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

/* The idx-th request the server saw, as JSON. */
static _unused_ json_t *server_request(const struct server *s, int idx)
{
	_cleanup_free_ char *data = NULL;
	char *line, *save = NULL;
	int i = 0;

	assert_int_equal(read_file_bounded(s->log, 1 << 24, &data, NULL), 0);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (i++ == idx)
			return json_loads(line, 0, NULL);
	return NULL;
}

#endif
