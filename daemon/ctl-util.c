#include "config.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "store.h"

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("kfixctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ctl_config(struct ctl *c, struct config **ret)
{
	_cleanup_free_ char *err = NULL;
	int r;

	if (!c->cfg) {
		r = config_load(c->config_path, &c->cfg, &err);
		if (r < 0) {
			ctl_err("%s", err ? err : strerror(-r));
			return r;
		}
	}
	*ret = c->cfg;
	return 0;
}

int ctl_store(struct ctl *c, struct store **ret)
{
	_cleanup_free_ char *state = NULL;
	struct config *cfg;
	char why[512] = "";
	int r;

	if (c->store) {
		*ret = c->store;
		return 0;
	}
	r = ctl_config(c, &cfg);
	if (r < 0)
		return r;
	r = config_state_path(cfg, NULL, &state);
	if (r < 0)
		return r;
	r = mkdir_p(state, 0750);
	if (r < 0) {
		ctl_err("cannot create the state directory %s: %s", state, strerror(-r));
		return r;
	}
	r = store_open_config(cfg, why, sizeof(why), &c->store);
	if (r < 0) {
		ctl_err("cannot open the store: %s",
			r == -EBUSY ? "it is locked by another process"
			: r == -ENOSPC ? "the disk is full"
			: why[0] ? why : strerror(-r));
		return r;
	}
	*ret = c->store;
	return 0;
}

int ctl_parse_id(const char *cmd, const char *s, int64_t *ret)
{
	uint64_t v;

	if (!s || parse_uint64(s, &v) < 0 || v == 0 || v > INT64_MAX) {
		ctl_err("%s: '%s' is not an id", cmd, s ? s : "");
		return -EINVAL;
	}
	*ret = (int64_t)v;
	return 0;
}

const char *ctl_time(int64_t t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		snprintf(buf, n, "-");
		return buf;
	}
	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

void ctl_print_escaped(const char *label, const char *s)
{
	_cleanup_free_ char *e = NULL;

	if (!s)
		s = "-";
	e = str_escape(s, strlen(s), 4096);
	printf("%-14s %s\n", label, e ? e : "?");
}

int ctl_print_json(json_t *j)
{
	int r = j ? json_print(j) : -ENOMEM;

	json_decref(j);
	return r < 0 ? 1 : 0;
}

int ctl_job_trajectory(struct ctl *c, int64_t id, json_t **ret)
{
	_cleanup_free_ char *path = NULL;
	struct config *cfg;
	char sub[64];
	int r = ctl_config(c, &cfg);

	if (r < 0)
		return r;
	snprintf(sub, sizeof(sub), "jobs/%lld/trajectory.jsonl", (long long)id);
	r = config_state_path(cfg, sub, &path);
	if (r < 0)
		return r;
	if (access(path, F_OK) != 0) {
		*ret = json_array();
		return *ret ? 0 : -ENOMEM;
	}
	return trajectory_load(path, ret);
}

int ctl_parse_option_id(const char *cmd, const char *usage, int argc, char **argv,
			const char *const *options, const char **ret_values, int64_t *ret_id)
{
	struct option opts[CTL_OPTIONS_MAX + 1] = {};
	const char *values[CTL_OPTIONS_MAX] = {};
	size_t n = 0;
	int ch;

	for (; options[n]; n++) {
		assert(n < CTL_OPTIONS_MAX);
		opts[n] = (struct option){ options[n], required_argument, NULL, (int)n + 1 };
	}
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch < 1 || (size_t)ch > n)
			return -EINVAL;
		values[ch - 1] = optarg;
	}
	if (optind + 1 != argc) {
		ctl_err("%s: usage: kfixctl %s %s", cmd, cmd, usage);
		return -EINVAL;
	}
	if (ctl_parse_id(cmd, argv[optind], ret_id) < 0)
		return -EINVAL;
	memcpy(ret_values, values, n * sizeof(*values));
	return 0;
}
