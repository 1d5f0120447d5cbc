#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "common/conf.h"
#include "common/log.h"
#include "common/macro.h"
#include "store.h"

int child_open(const char *config_path, struct config **ret_cfg,
	       struct store **ret_store)
{
	_cleanup_free_ char *err = NULL;
	struct config *cfg = NULL;
	char why[512] = "";
	int r;

	r = config_load(config_path, &cfg, &err);
	if (r < 0) {
		log_error("%s", err ? err : strerror(-r));
		return r;
	}
	r = store_open_config(cfg, why, sizeof(why), ret_store);
	if (r < 0) {
		log_error("cannot open store: %s", why[0] ? why : strerror(-r));
		config_free(cfg);
		return r;
	}
	*ret_cfg = cfg;
	return 0;
}

int child_spawn(struct child *c, sd_event *event, const char *self_exe,
		const char *config_path, const char *flag,
		sd_event_child_handler_t on_exit, void *userdata)
{
	sigset_t none;
	int r;

	if (c->pid > 0)
		return 0;
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		return negerrno();
	}
	if (c->pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl(self_exe, self_exe, "--config", config_path, flag, (char *)NULL);
		_exit(127);
	}
	r = sd_event_add_child(event, &c->src, c->pid, WEXITED, on_exit, userdata);
	if (r < 0) {
		kill(c->pid, SIGKILL);
		(void)waitpid(c->pid, NULL, 0);
		c->pid = 0;
	}
	return r;
}

void child_exited(struct child *c)
{
	c->pid = 0;
	c->src = sd_event_source_disable_unref(c->src);
}

void child_stop(struct child *c, unsigned wait_ms)
{
	if (c->pid > 0) {
		for (unsigned i = 0; i < wait_ms / 50; i++) {
			if (waitpid(c->pid, NULL, WNOHANG) != 0)
				break;
			usleep(50000);
		}
		if (kill(c->pid, SIGKILL) == 0)
			(void)waitpid(c->pid, NULL, 0);
	}
	child_exited(c);
}

void child_owner_name(char *buf, size_t n, pid_t pid)
{
	char host[HOST_NAME_MAX + 1] = "localhost";

	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(buf, n, "%s:%d", host, (int)pid);
}

bool child_bind_to_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return getppid() != 1;
}
