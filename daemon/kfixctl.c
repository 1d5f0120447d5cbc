/* kfixctl: the kfix administration tool. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/log.h"
#include "common/strutil.h"
#include "ctl.h"
#include "store.h"

#define NOARGS NULL, CTL_COUNT, 0, 0
#define ONE_ID NULL, CTL_COUNT | CTL_ID, 1, 1
#define ONE_ROW NULL, CTL_COUNT | CTL_ID | CTL_STORE, 1, 1

static const struct ctl_cmd commands[] = {
	{ "status", ctl_status, "", "bugs, jobs and outbox at a glance", NOARGS },
	{ "bugs", ctl_bugs, "[--state S] [--limit N]", "list bugs" },
	{ "bug", ctl_bug, "ID", "show one bug and its history", ONE_ROW },
	{ "jobs", ctl_jobs, "[--state S] [--limit N]", "list jobs" },
	{ "job", ctl_job, "ID", "show one job", ONE_ROW },
	{ "retry", ctl_retry, "JOB", "queue a failed, cancelled or done job again", ONE_ID },
	{ "cancel", ctl_cancel, "JOB", "cancel a queued or running job", ONE_ID },
	{ "submit", ctl_submit, "--title T --id ID [...]", "add a bug by hand" },
	{ "outbox", ctl_outbox, "[--state S] [--limit N]", "list outgoing mail and pushes" },
	{ "patches", ctl_patches, "[--state S] [--bug ID]", "list validated patches" },
	{ "patch", ctl_patch, "ID", "show a patch: diff, explanation, evidence, where sent", ONE_ROW },
	{ "publish", ctl_publish, "ID", "commit, push and mail a patch for moderation", ONE_ROW },
	{ "approve", ctl_approve, "--by 'NAME <ADDR>' ID", "approve a patch: mail it upstream, signed off" },
	{ "reject", ctl_reject, "[--reason TEXT] ID", "reject a patch" },
	{ "compare", ctl_compare, "BUG [COMMIT]", "compare the bug's patch with the fix that landed",
	  NULL, CTL_COUNT | CTL_ID, 1, 2 },
	{ "bisect", ctl_bisect, "[--good REV] BUG", "find the commit that introduced the bug" },
	{ "pause", ctl_pause, "", "take no new jobs (running ones go on)", NOARGS },
	{ "resume", ctl_resume, "", "take jobs again", NOARGS },
	{ "drain", ctl_drain, "", "finish running jobs, take no new ones, then stop kfixd", NOARGS },
	{ "report", ctl_report, "parse FILE|- | symbolize --vmlinux F [FILE]", "parse or symbolise a crash log" },
	{ "tree", ctl_tree, "fetch|resolve|show|log-grep NAME ...", "kernel tree mirrors" },
	{ "mail", ctl_mail, "parse [--json] FILE|-", "show what kfix understands of a mail" },
	{ "reproduce", ctl_reproduce, "--src DIR --config F --repro F.c|F.syz", "build and run a reproducer (C or syz)" },
	{ "build", ctl_build, "--src DIR --config F [--patch F [--compile-only]]", "build a kernel" },
	{ "test-patch", ctl_test_patch, "... --patch FILE [--selftests SPEC]",
	  "test a fix: base and patched, then their kselftests and KUnit suites" },
	{ "repair", ctl_repair, "--src DIR --report F [...]", "run one repair in the foreground" },
	{ "diagnose", ctl_diagnose, "[--fix PATCH] [--llm NAME] JOB",
	  "why a repair failed: the failure, the step and event, a recovery" },
	{ "rerun", ctl_rerun, "[--from STEP|EVENT] [--directive TEXT] JOB",
	  "a new repair job replaying JOB up to a step, live from there with a directive" },
	{ "bundle", ctl_bundle, "[--output DIR] JOB",
	  "a job's trajectory, report and manifest, scrubbed of secrets and addresses, to share" },
	{ "bench", ctl_bench, "[--out DIR] [--only ID]... [...] DATASET | compare A B",
	  "run kfix over a dataset of known bugs; compare two runs" },
	{ "trace", ctl_trace, "JOB|DIR|FILE", "show a repair's trajectory", NULL, CTL_COUNT, 1, 1 },
	{ "explore", ctl_explore, "--src DIR [--commit REV] [--vmlinux F] [--index F] TOOL [JSON]",
	  "answer one of the agent's exploration tools", ctl_explore_help },
	{ "check-patch", ctl_check_patch, "[--src DIR] [--report F] --patch F",
	  "run the agent's integrity gates on a patch" },
	{ "help", NULL, "[COMMAND]", "list the commands, or show one's usage" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kfixctl [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Administers kfix: inspects and changes bugs, jobs and the outbox.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE  configuration file (default %s)\n"
		"  -j, --json         print JSON instead of tables\n"
		"  -u, --url URL      the running daemon's API (default: [http] url, else\n"
		"                     [http] listen); status, retry, cancel, submit,\n"
		"                     approve and reject go through it (tokens from\n"
		"                     $KFIX_API_TOKEN/$KFIX_ADMIN_TOKEN or the config)\n"
		"                     and act on the store when no daemon answers\n"
		"  -h, --help         show this help\n"
		"  -V, --version      show the version\n"
		"\n"
		"Commands:\n",
		KFIX_CONFIG_DEFAULT);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-38s %s\n", head, commands[i].summary);
	}
	fprintf(f, "\nSee kfixctl(1).\n");
}

/* COMMAND --help (before any "--"): the command's line of the table, and
 * whatever more the command has to say. */
static bool command_help(const struct ctl_cmd *cmd, int argc, char **argv)
{
	for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
		if (streq(argv[i], "--help")) {
			printf("Usage: kfixctl %s %s\n\n%s.\n", cmd->name, cmd->args, cmd->summary);
			if (cmd->help)
				cmd->help(stdout);
			printf("\nSee kfixctl(1).\n");
			return true;
		}
	return false;
}

/* The checks every command of the table would otherwise repeat: the
 * exit code (2 usage, 1 failure) when one fails, else -1. */
static int command_prologue(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct store *s;

	if ((cmd->flags & CTL_COUNT) && (argc - 1 < cmd->min_args || argc - 1 > cmd->max_args)) {
		if (cmd->max_args == 0)
			ctl_err("%s: takes no arguments", cmd->name);
		else
			ctl_err("%s: usage: kfixctl %s %s", cmd->name, cmd->name, cmd->args);
		return 2;
	}
	if ((cmd->flags & CTL_ID) && ctl_parse_id(cmd->name, argv[1], &c->id) < 0)
		return 2;
	if ((cmd->flags & CTL_STORE) && ctl_store(c, &s) < 0)
		return 1;
	return -1;
}

static const struct ctl_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* help [COMMAND]: what --help and COMMAND --help print. */
static int help_command(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	char *args[] = { NULL, (char *)"--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (argc > 2 || !cmd) {
		_cleanup_free_ char *e = str_escape(argv[1], strlen(argv[1]), 64);

		ctl_err("help: no command '%s' (see kfixctl --help)", e ?: "?");
		return 2;
	}
	args[0] = argv[1];
	return command_help(cmd, 2, args) ? 0 : 2;
}

/* --json is accepted after the command name too; it is removed from argv
 * so that the command's own parser does not see it. */
static int take_global_flags(struct ctl *c, int argc, char **argv)
{
	int j = optind + 1;

	for (int i = optind + 1; i < argc; i++) {
		if (streq(argv[i], "--")) {
			while (i < argc)
				argv[j++] = argv[i++];
			break;
		}
		if (streq(argv[i], "--json") || streq(argv[i], "-j"))
			c->json = true;
		else if (streq(argv[i], "--url") && i + 1 < argc)
			c->url = argv[++i];
		else if (startswith(argv[i], "--url="))
			c->url = argv[i] + 6;
		else
			argv[j++] = argv[i];
	}
	for (int i = j; i < argc; i++)
		argv[i] = NULL;
	return j;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "url", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .config_path = KFIX_CONFIG_DEFAULT };
	const struct ctl_cmd *cmd;
	int ch, r = 2;

	log_setup("kfixctl", LOG_TARGET_STDERR);
	log_set_level(LOG_WARNING);
	/* "+": stop at the command name; its own options follow it */
	while ((ch = getopt_long(argc, argv, "+c:jhVu:", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			c.config_path = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 'u':
			c.url = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kfixctl %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc = take_global_flags(&c, argc, argv);
	cmd = find_command(argv[optind]);
	if (cmd && command_help(cmd, argc - optind, argv + optind))
		r = 0;
	else if (cmd && !cmd->run)
		r = help_command(argc - optind, argv + optind);
	else if (cmd) {
		r = command_prologue(&c, cmd, argc - optind, argv + optind);
		if (r < 0)
			r = cmd->run(&c, argc - optind, argv + optind);
	} else
		ctl_err("unknown command '%s' (see kfixctl --help)", argv[optind]);
	store_close(c.store);
	config_free(c.cfg);
	return r;
}
