/* kfixctl diagnose: why a job's repair failed, from its trajectory. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diagnose.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"

#define FIX_MAX (4u * 1024 * 1024)

/* The files the developers' fix changes, from a patch file. */
static int fix_files(const char *path, char ***ret)
{
	_cleanup_strv_ char **files = NULL;
	_cleanup_free_ char *text = NULL;
	size_t n;
	int r;

	r = read_file_bounded(path, FIX_MAX, &text, &n);
	if (r < 0) {
		ctl_err("diagnose: cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = diagnose_diff_files(text, &files);
	if (r < 0)
		return r;
	if (!files[0]) {
		ctl_err("diagnose: %s changes no file (not a unified diff?)", path);
		return -EINVAL;
	}
	*ret = TAKE_PTR(files);
	return 0;
}

static void print(int64_t id, const struct diagnosis *d)
{
	char event[32];

	printf("%-10s %lld\n", "Job:", (long long)id);
	printf("%-10s %s\n", "Failure:", diag_family_name(d->family));
	ctl_print_escaped("Why:", d->why);
	snprintf(event, sizeof(event), " (event %lld)", (long long)d->event);
	printf("%-10s %s%s\n", "Step:", d->step, d->event ? event : "");
	ctl_print_escaped("Evidence:", d->evidence);
	ctl_print_escaped("Rerun from:", d->from);
	ctl_print_escaped("Directive:", d->directive);
}

int ctl_diagnose(struct ctl *c, int argc, char **argv)
{
	_cleanup_(diagnosis_freep) struct diagnosis *d = NULL;
	_cleanup_json_ json_t *events = NULL;
	_cleanup_strv_ char **files = NULL;
	const char *fix;
	int64_t id;
	int r;

	if (ctl_parse_option_id("diagnose", "[--fix PATCH] JOB", argc, argv, "fix", &fix, &id) < 0)
		return 2;
	if (fix && fix_files(fix, &files) < 0)
		return 2;
	r = ctl_job_trajectory(c, id, &events);
	if (r < 0) {
		ctl_err("diagnose: job %lld: cannot read its trajectory: %s", (long long)id,
			strerror(-r));
		return 1;
	}
	if (json_array_size(events) == 0) {
		ctl_err("diagnose: job %lld left no trajectory (not a repair, or not started)",
			(long long)id);
		return 1;
	}
	r = diagnose_trajectory(events, files, &d);
	if (r < 0) {
		ctl_err("diagnose: %s", strerror(-r));
		return 1;
	}
	if (c->json)
		return ctl_print_json(diagnosis_json(d));
	print(id, d);
	return 0;
}
