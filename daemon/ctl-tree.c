/* kfixctl tree: the configured kernel trees by hand (fetch, resolve,
 * show a file or function, search the log). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "source.h"
#include "repro/tree.h"

#define TREE_SHOW_MAX (8u << 20)

static int open_tree(struct ctl *c, const char *name, struct tree **ret)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_free_ char *err = NULL;
	struct config *cfg;
	int r;

	r = ctl_config(c, &cfg);
	if (r < 0)
		return r;
	r = tree_conf_from_config(cfg, name, &tc, &err);
	if (r < 0) {
		ctl_err("tree '%s': %s", name, err ?: strerror(-r));
		return r;
	}
	if (!tc.url) {
		ctl_err("tree '%s' has no url in %s", name, config_path(cfg));
		return -ENOENT;
	}
	r = tree_open_mirror(tc.cache_dir, name, tc.url, ret);
	if (r < 0)
		ctl_err("cannot open the mirror of '%s' in %s: %s", name, tc.cache_dir,
			strerror(-r));
	return r;
}

static int fetch_progress(const struct tree_progress *p, void *userdata)
{
	(void)userdata;
	fprintf(stderr, "\rreceived %u/%u objects, %llu KiB; indexed %u/%u deltas ",
		p->received_objects, p->total_objects,
		(unsigned long long)(p->received_bytes >> 10), p->indexed_deltas,
		p->total_deltas);
	return 0;
}

static int tree_fetch_cmd(struct ctl *c, struct tree *t, const char *name)
{
	bool tty = isatty(STDERR_FILENO);
	char head[TREE_OID_HEX];
	uint64_t timeout = 0;
	struct config *cfg;
	int r;

	if (ctl_config(c, &cfg) == 0)
		(void)config_get_duration(cfg, "kfix", NULL, "job-timeout", &timeout);
	r = tree_fetch(t, NULL, timeout, tty && !c->json ? fetch_progress : NULL, NULL);
	if (tty && !c->json)
		fputc('\n', stderr);
	if (r < 0) {
		ctl_err("%s", tree_error(t));
		return 1;
	}
	if (tree_resolve(t, "HEAD", head) < 0)
		head[0] = 0;
	if (c->json) {
		json_t *j = json_pack("{s:s, s:s, s:s}", "tree", name, "path", tree_path(t),
				      "head", head);
		r = json_print(j);
		json_decref(j);
		return r < 0 ? 1 : 0;
	}
	printf("%s: fetched into %s, HEAD %s\n", name, tree_path(t), head[0] ? head : "-");
	return 0;
}

static int print_result(struct ctl *c, const char *key, const char *value)
{
	if (c->json) {
		json_t *j = json_pack("{s:s?}", key, value);
		int r = json_print(j);
		json_decref(j);
		return r < 0 ? 1 : 0;
	}
	fputs(value ? value : "", stdout);
	if (value && !endswith(value, "\n"))
		fputc('\n', stdout);
	return 0;
}

/* show NAME REV PATH [--function F] */
static int tree_show_cmd(struct ctl *c, struct tree *t, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "function", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *text = NULL;
	const char *func = NULL;
	unsigned line = 1;
	size_t len;
	int ch, r;

	/* 0: glibc re-initialises, forgetting kfixctl's "+" (stop at the first
	 * non-option), so options may follow the arguments. */
	optind = 0;
	while ((ch = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		if (ch != 'f')
			return 2;
		func = optarg;
	}
	if (argc - optind != 2) {
		ctl_err("usage: kfixctl tree show NAME REV PATH [--function F]");
		return 2;
	}
	if (func)
		r = tree_read_function(t, argv[optind], argv[optind + 1], func, &text, &line);
	else
		r = tree_read_file(t, argv[optind], argv[optind + 1], TREE_SHOW_MAX, &text,
				   &len);
	if (r < 0) {
		ctl_err("%s", tree_error(t));
		return 1;
	}
	if (c->json) {
		json_t *j = json_pack("{s:s, s:i, s:s}", "path", argv[optind + 1], "line",
				      (int)line, "text", text);
		r = json_print(j);
		json_decref(j);
		return r < 0 ? 1 : 0;
	}
	fputs(text, stdout);
	return 0;
}

/* log-grep NAME TEXT [--rev REV] [--max N] */
static int tree_log_grep_cmd(struct ctl *c, struct tree *t, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rev", required_argument, NULL, 'r' },
		{ "max", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rev = "HEAD";
	char oid[TREE_OID_HEX];
	int64_t max = 0;
	int ch, r;

	/* 0: glibc re-initialises, forgetting kfixctl's "+" (stop at the first
	 * non-option), so options may follow the arguments. */
	optind = 0;
	while ((ch = getopt_long(argc, argv, "r:n:", opts, NULL)) != -1) {
		if (ch == 'r')
			rev = optarg;
		else if (ch != 'n' || ctl_parse_id("tree log-grep", optarg, &max) < 0)
			return 2;
	}
	if (argc - optind != 1) {
		ctl_err("usage: kfixctl tree log-grep NAME TEXT [--rev REV] [--max N]");
		return 2;
	}
	r = tree_log_grep(t, rev, argv[optind], (size_t)max, oid);
	if (r < 0) {
		ctl_err("%s", tree_error(t));
		return 1;
	}
	if (r == 0) {
		if (c->json)
			return print_result(c, "commit", NULL);
		printf("not found\n");
		return 1;
	}
	return print_result(c, "commit", oid);
}

int ctl_tree(struct ctl *c, int argc, char **argv)
{
	_cleanup_tree_ struct tree *t = NULL;
	char oid[TREE_OID_HEX];
	const char *sub;

	if (argc < 3) {
		ctl_err("usage: kfixctl tree fetch|resolve|show|log-grep NAME ...");
		return 2;
	}
	sub = argv[1];
	if (!streq(sub, "fetch") && !streq(sub, "resolve") && !streq(sub, "show") &&
	    !streq(sub, "log-grep")) {
		ctl_err("tree: unknown subcommand '%s'", sub);
		return 2;
	}
	if (open_tree(c, argv[2], &t) < 0)
		return 1;
	if (streq(sub, "fetch"))
		return argc == 3 ? tree_fetch_cmd(c, t, argv[2]) : 2;
	if (streq(sub, "show"))
		return tree_show_cmd(c, t, argc - 2, argv + 2);
	if (streq(sub, "log-grep"))
		return tree_log_grep_cmd(c, t, argc - 2, argv + 2);
	if (argc != 4) {
		ctl_err("usage: kfixctl tree resolve NAME REV");
		return 2;
	}
	if (tree_resolve(t, argv[3], oid) < 0) {
		ctl_err("%s", tree_error(t));
		return 1;
	}
	return print_result(c, "commit", oid);
}
