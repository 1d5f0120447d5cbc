/* kfixctl trace: a job's trajectory as a timeline. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"

/* JOB is a job id (STATE/jobs/ID/trajectory.jsonl), an output folder of
 * kfixctl repair, or a trajectory file. */
static int trace_path(struct ctl *c, const char *job, char **ret)
{
	struct config *cfg;
	char sub[64];
	struct stat st;
	uint64_t id;

	if (stat(job, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return asprintf(ret, "%s/trajectory.jsonl", job) < 0 ? -ENOMEM : 0;
		*ret = strdup(job);
		return *ret ? 0 : -ENOMEM;
	}
	if (parse_uint64(job, &id) < 0 || id == 0) {
		ctl_err("trace: '%s' is neither a job id nor a trajectory", job);
		return -EINVAL;
	}
	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	snprintf(sub, sizeof(sub), "jobs/%llu/trajectory.jsonl", (unsigned long long)id);
	return config_state_path(cfg, sub, ret);
}

int ctl_trace(struct ctl *c, int argc, char **argv)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *ev = NULL;
	int r;

	(void)argc;
	if (trace_path(c, argv[1], &path) < 0)
		return 1;
	r = trajectory_load(path, &ev);
	if (r < 0) {
		ctl_err("cannot read %s: %s", path, strerror(-r));
		return 1;
	}
	if (c->json) {
		_cleanup_json_ json_t *j = json_pack("{s:O, s:o}", "events", ev,
						     "summary", trajectory_summary(ev));

		json_print(j);
	} else
		trajectory_print(ev, stdout);
	return 0;
}
