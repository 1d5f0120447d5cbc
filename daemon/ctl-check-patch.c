/* kfixctl check-patch: the agent's integrity gates on a given patch. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/gates.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"

#define PATCH_MAX (4u * 1024 * 1024)
#define REPORT_MAX (16u * 1024 * 1024)

/* The configuration is optional here: a person checking a patch by hand
 * gets the default limits. */
static int limits(struct ctl *c, struct gate_limits *ret)
{
	struct config *cfg;

	*ret = GATE_LIMITS_DEFAULT;
	if (access(c->config_path, F_OK) < 0)
		return 0;
	if (ctl_config(c, &cfg) < 0)
		return -EINVAL;
	return gate_limits_from_config(cfg, ret);
}

static void print_human(const struct gate_verdicts *v)
{
	for (size_t i = 0; i < gate_verdicts_count(v); i++) {
		const char *name, *reason;
		enum gate_status st;

		gate_verdicts_get(v, i, &name, &st, &reason);
		printf("%-11s %-7s %s\n", name, gate_status_name(st), reason);
	}
	if (!gate_verdicts_accepted(v))
		printf("rejected\n");
	else if (gate_verdicts_flags(v))
		printf("accepted, %zu flag(s) for review\n", gate_verdicts_flags(v));
	else
		printf("accepted\n");
}

int ctl_check_patch(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "src", required_argument, NULL, 's' },
		{ "report", required_argument, NULL, 'r' },
		{ "patch", required_argument, NULL, 'p' },
		{ "reproducer", required_argument, NULL, 'R' },
		{ "no-checkpatch", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src = NULL, *report = NULL, *patch = NULL, *repro = NULL;
	_cleanup_free_ char *ptext = NULL, *rtext = NULL;
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = NULL;
	struct gate_limits lim;
	bool no_checkpatch = false;
	size_t plen = 0, rlen = 0;
	int ch, r;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': src = optarg; break;
		case 'r': report = optarg; break;
		case 'p': patch = optarg; break;
		case 'R': repro = optarg; break;
		case 'n': no_checkpatch = true; break;
		default: return 2;
		}
	}
	if (!patch || optind < argc) {
		ctl_err("usage: check-patch [--src DIR] [--report FILE] --patch FILE [--json]");
		return 2;
	}
	if (limits(c, &lim) < 0)
		return 1;
	lim.reproducer = repro;
	if (no_checkpatch)
		lim.checkpatch = false;
	r = read_file_bounded(patch, PATCH_MAX, &ptext, &plen);
	if (r < 0) {
		ctl_err("cannot read %s: %s", patch, strerror(-r));
		return 1;
	}
	if (report && (r = read_file_bounded(report, REPORT_MAX, &rtext, &rlen)) < 0) {
		ctl_err("cannot read %s: %s", report, strerror(-r));
		return 1;
	}
	r = gates_run(ptext, plen, rtext, rlen, src, &lim, &v);
	if (r < 0) {
		ctl_err("gates failed: %s", strerror(-r));
		return 1;
	}
	if (c->json) {
		_cleanup_json_ json_t *j = gate_verdicts_to_json(v);

		json_print(j);
	} else
		print_human(v);
	return gate_verdicts_accepted(v) ? 0 : 1;
}
