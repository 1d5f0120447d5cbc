/* kfixd: the kfix daemon. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "common/strutil.h"
#include "child.h"
#include "daemon.h"
#include "mailq.h"
#include "jobs.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kfixd [OPTIONS]\n"
		"\n"
		"The kfix daemon: takes kernel crash reports, reproduces them in VMs,\n"
		"repairs them with an LLM agent and publishes tested patches.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE     configuration file (default %s)\n"
		"  -t, --check-config    validate the configuration and exit (0 valid, 1 not)\n"
		"  -l, --log-level LEVEL override kfix.log-level (err, warning, info, debug)\n"
		"      --log-target T    auto, stderr or journal (default auto)\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"kfixd always runs in the foreground; under systemd it reports readiness\n"
		"with sd_notify. SIGTERM/SIGINT stop it cleanly, SIGHUP reloads the\n"
		"configuration (a configuration that does not load is ignored).\n"
		"See kfixd(8) and kfix.conf(5).\n",
		KFIX_CONFIG_DEFAULT);
}

static int check_config(const char *path)
{
	_cleanup_free_ char *err = NULL;
	struct config *cfg = NULL;
	unsigned problems = 0;
	int r = daemon_load_config(path, &cfg, &err);

	if (r < 0) {
		fprintf(stderr, "kfixd: %s\n", err ? err : strerror(-r));
		return 1;
	}
	r = daemon_check_config(cfg, path, stderr, &problems);
	config_free(cfg);
	if (r < 0 || problems) {
		fprintf(stderr, "kfixd: %s: %u problem(s): kfixd would not run as configured\n",
			path, problems);
		return 1;
	}
	printf("%s: configuration is valid\n", path);
	return 0;
}

static int self_exe(char *buf, size_t n)
{
	ssize_t l = readlink("/proc/self/exe", buf, n - 1);

	if (l < 0)
		return negerrno();
	buf[l] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_RUN_JOB = 0x100, OPT_OWNER, OPT_LOG_TARGET, OPT_RUN_OUTBOX,
	       OPT_RUN_MAILQ };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		/* internal: one job in a child process */
		{ "run-job", required_argument, NULL, OPT_RUN_JOB },
		{ "owner", required_argument, NULL, OPT_OWNER },
		/* internal: outbox deliveries in a child process */
		{ "run-outbox", no_argument, NULL, OPT_RUN_OUTBOX },
		{ "run-mailq", no_argument, NULL, OPT_RUN_MAILQ },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = KFIX_CONFIG_DEFAULT, *owner = NULL, *lvl = NULL;
	enum log_target target = LOG_TARGET_AUTO;
	bool check = false, run_outbox = false, run_mailq = false;
	struct daemon *d = NULL;
	char exe[PATH_MAX];
	int64_t run_job = 0;
	int c, r, prio;

	/* first thing: a SIGTERM during start-up waits for the loop */
	daemon_block_signals();
	while ((c = getopt_long(argc, argv, "c:tl:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 't':
			check = true;
			break;
		case 'l':
			lvl = optarg;
			break;
		case OPT_LOG_TARGET:
			if (streq(optarg, "stderr"))
				target = LOG_TARGET_STDERR;
			else if (streq(optarg, "journal"))
				target = LOG_TARGET_JOURNAL;
			else if (!streq(optarg, "auto")) {
				fprintf(stderr, "kfixd: --log-target: auto, stderr or journal\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kfixd %s\n", PACKAGE_VERSION);
			return 0;
		case OPT_RUN_JOB:
			if (parse_uint64(optarg, (uint64_t *)&run_job) < 0 || run_job <= 0) {
				fprintf(stderr, "kfixd: --run-job: not a job id\n");
				return 2;
			}
			break;
		case OPT_OWNER:
			owner = optarg;
			break;
		case OPT_RUN_OUTBOX:
			run_outbox = true;
			break;
		case OPT_RUN_MAILQ:
			run_mailq = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kfixd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (check)
		return check_config(config);
	log_setup(run_job ? "kfixd-job" : "kfixd", target);
	if (lvl) {
		if (log_parse_level(lvl, &prio) < 0) {
			fprintf(stderr, "kfixd: unknown log level '%s'\n", lvl);
			return 2;
		}
		log_set_level(prio);
	}
	if (run_job || run_outbox || run_mailq) {
		sigset_t none;

		/* a job process takes signals the default way */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (run_mailq)
			return mailq_run_child(config);
		return run_job ? jobs_run_child(config, run_job, owner ? owner : "")
			       : outbox_run_child(config);
	}
	r = self_exe(exe, sizeof(exe));
	if (r < 0) {
		log_error("cannot find my own executable: %s", strerror(-r));
		return 1;
	}
	r = daemon_new(config, exe, &d);
	if (r < 0)
		return 1;
	if (lvl)
		log_set_level(prio);
	r = daemon_run(d);
	daemon_free(d);
	return r < 0 ? 1 : 0;
}
