/* kfixctl reproduce / test-patch: build a kernel, boot it in VMs, run a
 * reproducer, and (test-patch) do it again with a patch, like syzbot's
 * "#syz test". */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "repro/build.h"
#include "repro/run.h"
#include "repro/selftest.h"
#include "repro/tree.h"
#include "repro/vm.h"
#include "source.h"

struct repro_args {
	const char *tree, *src, *commit, *kconfig, *repro, *patch, *vm, *build, *kernel;
	const char *repro_opts;
	const char *selftests;	/* test-patch: overrides the configured selection */
	bool syz;
	char **titles;
	int runs, attempts;
	uint64_t timeout_usec;
	bool test_patch;
	bool build_only;
	bool compile_only; /* build: only the .c files the patch touches */
};

static void repro_args_free(struct repro_args *a)
{
	strv_free(a->titles);
}

static int parse_args(const char *cmd, int argc, char **argv, struct repro_args *a)
{
	static const struct option opts[] = {
		{ "tree", required_argument, NULL, 'T' },
		{ "src", required_argument, NULL, 's' },
		{ "commit", required_argument, NULL, 'C' },
		{ "config", required_argument, NULL, 'k' },
		{ "repro", required_argument, NULL, 'r' },
		{ "patch", required_argument, NULL, 'p' },
		{ "runs", required_argument, NULL, 'n' },
		{ "attempts", required_argument, NULL, 'a' },
		{ "vm", required_argument, NULL, 'v' },
		{ "build", required_argument, NULL, 'b' },
		{ "title", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'K' },
		{ "repro-syz", required_argument, NULL, 'S' },
		{ "repro-opts", required_argument, NULL, 'O' },
		{ "compile-only", no_argument, NULL, 'c' },
		{ "selftests", required_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'T': a->tree = optarg; break;
		case 's': a->src = optarg; break;
		case 'C': a->commit = optarg; break;
		case 'k': a->kconfig = optarg; break;
		case 'r':
			a->repro = optarg;
			a->syz = endswith(optarg, ".syz");
			break;
		case 'S':
			a->repro = optarg;
			a->syz = true;
			break;
		case 'O': a->repro_opts = optarg; break;
		case 'p': a->patch = optarg; break;
		case 'E': a->selftests = optarg; break;
		case 'v': a->vm = optarg; break;
		case 'b': a->build = optarg; break;
		case 'K': a->kernel = optarg; break;
		case 'c':
			if (!a->build_only)
				return -EINVAL;
			a->compile_only = true;
			break;
		case 't':
			if (strv_push(&a->titles, optarg) < 0)
				return -ENOMEM;
			break;
		case 'n':
		case 'a':
			if (parse_int(optarg, ch == 'n' ? &a->runs : &a->attempts) < 0 ||
			    (ch == 'n' ? a->runs : a->attempts) < 1) {
				ctl_err("%s: '%s' is not a positive number", cmd, optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			if (parse_duration(optarg, &a->timeout_usec) < 0) {
				ctl_err("%s: '%s' is not a duration", cmd, optarg);
				return -EINVAL;
			}
			break;
		default:
			return -EINVAL;
		}
	}
	/* a patch reproduce would build nothing with: said, not ignored */
	if (a->patch && !a->test_patch && !a->build_only) {
		ctl_err("%s: --patch is for test-patch (the base and the patched kernel) "
			"and build; reproduce runs the kernel as it is", cmd);
		return -EINVAL;
	}
	/* --kernel runs a kernel built before (reproduce only): no source. */
	if (a->kernel && !a->test_patch && !a->build_only && !a->tree && !a->src && a->repro &&
	    optind == argc)
		return 0;
	if (optind < argc || (!a->tree == !a->src) || !a->kconfig || (!a->repro && !a->build_only) ||
	    (a->test_patch && !a->patch) || (a->selftests && !a->test_patch)) {
		ctl_err("usage: kfixctl %s --tree NAME|--src DIR [--commit REV] --config FILE "
			"--repro FILE|--repro-syz FILE [--repro-opts FILE]%s [--kernel BZIMAGE] [--runs N] [--attempts N] [--title T]... [--vm NAME] "
			"[--build NAME] [--timeout DURATION] [--json]",
			cmd, a->test_patch ? " --patch FILE [--selftests auto|none|TARGET[:TEST],...]" : "");
		return -EINVAL;
	}
	return 0;
}

/* With --src the commit names the source's release (e.g. "v6.1.158" or
 * "6.1.158"), read from its top Makefile: an unknown commit is refused
 * rather than built under the wrong name. */
static int check_src_commit(const char *src, const char *commit, char **ret_error)
{
	_cleanup_free_ char *mk = NULL, *path = NULL, *ver = NULL;
	const char *fields[] = { "\nVERSION = ", "\nPATCHLEVEL = ", "\nSUBLEVEL = " };
	char parts[3][16];
	size_t len;

	if (access(src, R_OK | X_OK) < 0)
		return asprintf(ret_error, "cannot open the source folder %s", src) < 0 ? -ENOMEM
										      : -ENOTDIR;
	if (!commit)
		return 0;
	if (asprintf(&path, "%s/Makefile", src) < 0)
		return -ENOMEM;
	if (read_file_bounded(path, 1024 * 1024, &mk, &len) < 0)
		return asprintf(ret_error, "%s is not a kernel source tree", src) < 0 ? -ENOMEM
										     : -ENOENT;
	for (size_t i = 0; i < 3; i++) {
		/* The fields start a line; the first may start the file. */
		const char *p = strstr(mk, fields[i]), *val = NULL;

		if (strncmp(mk, fields[i] + 1, strlen(fields[i]) - 1) == 0)
			val = mk + strlen(fields[i]) - 1;
		else if (p)
			val = p + strlen(fields[i]);
		if (!val || sscanf(val, "%15[0-9]", parts[i]) != 1)
			return asprintf(ret_error, "%s/Makefile has no %s", src, fields[i] + 1) < 0
				       ? -ENOMEM
				       : -ENOENT;
	}
	if (asprintf(&ver, "%s.%s.%s", parts[0], parts[1], parts[2]) < 0)
		return -ENOMEM;
	if (streq(commit, ver) || (commit[0] == 'v' && streq(commit + 1, ver)))
		return 0;
	return asprintf(ret_error, "unknown commit '%s': the source in %s is %s", commit, src,
			ver) < 0
		       ? -ENOMEM
		       : -ENOENT;
}

static int first_subsection(const struct config *cfg, const char *section, const char *want,
			    char **ret)
{
	_cleanup_strv_ char **subs = NULL;
	int r;

	if (want) {
		*ret = strdup(want);
		return *ret ? 0 : -ENOMEM;
	}
	r = config_subsections(cfg, section, &subs);
	if (r < 0)
		return r;
	*ret = strdup(subs && subs[0] ? subs[0] : "default");
	return *ret ? 0 : -ENOMEM;
}

struct side {
	const char *name;
	struct build_result build;
	struct run_series series;
	bool built, ran;
	/* The progress line on a terminal: rewritten in place while the
	 * build and the runs go on; results get lines of their own. */
	bool tty;
	bool line_open;
	int runs_wanted;
	int last_stage;
	int last_percent;
	unsigned last_steps;
	int crashed_seen;
};

static void side_free(struct side *s)
{
	build_result_free(&s->build);
	run_series_free(&s->series);
}

static void line_clear(struct side *sd)
{
	if (sd->line_open)
		fputs("\r\033[K", stderr);
	sd->line_open = false;
}

static void line_runs(struct side *sd, int counted, int attempts, int crashed)
{
	line_clear(sd);
	fprintf(stderr, "%s: runs %d/%d done", sd->name, counted, sd->runs_wanted);
	if (attempts > counted)
		fprintf(stderr, ", %d attempt%s", attempts, attempts == 1 ? "" : "s");
	if (crashed > 0)
		fprintf(stderr, ", %d crashed", crashed);
	fflush(stderr);
	sd->line_open = true;
}

static void build_progress(void *userdata, const struct build_progress *p)
{
	struct side *sd = userdata;
	_cleanup_free_ char *target = NULL;

	/* A full build has thousands of steps: redraw when something a
	 * person can see changes. */
	if ((int)p->stage == sd->last_stage && p->percent == sd->last_percent &&
	    (p->percent >= 0 || p->steps - sd->last_steps < 20))
		return;
	sd->last_stage = (int)p->stage;
	sd->last_percent = p->percent;
	sd->last_steps = p->steps;
	if (p->stage == BUILD_STAGE_DONE)
		return;
	line_clear(sd);
	fprintf(stderr, "%s: build %s", sd->name, build_stage_to_string(p->stage));
	if (p->percent >= 0)
		fprintf(stderr, " %d%% (%u/%u steps)", p->percent, p->steps, p->expected);
	else if (p->steps > 0)
		fprintf(stderr, " (%u steps, no estimate yet)", p->steps);
	if (p->target) {
		target = str_escape(p->target, strlen(p->target), 60);
		fprintf(stderr, " %s", target ? target : "");
	}
	if (sd->runs_wanted > 0)
		fprintf(stderr, ", runs 0/%d", sd->runs_wanted);
	fflush(stderr);
	sd->line_open = true;
}

static void progress(void *userdata, const struct run_result *r, int counted, int attempts)
{
	struct side *sd = userdata;
	_cleanup_free_ char *t = NULL;

	t = str_escape(r->title ? r->title : r->message ? r->message : "",
		       r->title ? strlen(r->title) : r->message ? strlen(r->message) : 0, 160);
	line_clear(sd);
	fprintf(stderr, "  %s run %d: %s%s%s (boot %.1fs)\n", sd->name, attempts,
		run_outcome_to_string(r->outcome), t && *t ? ": " : "", t ? t : "",
		(double)r->boot_usec / 1e6);
	/* Called under the series lock, one attempt at a time. */
	sd->crashed_seen += r->outcome == RUN_CRASHED;
	line_runs(sd, counted, attempts, sd->crashed_seen);
}

/* Console text may hold bytes that are not UTF-8, which jansson refuses. */
static json_t *side_json(const struct side *s)
{
	json_t *o = json_object(), *outs = json_array(), *errs = json_array(), *b = json_object();

	if (!o || !outs || !errs || !b) {
		json_decref(o);
		json_decref(outs);
		json_decref(errs);
		json_decref(b);
		return NULL;
	}
	for (size_t i = 0; i < s->series.n_results; i++) {
		const struct run_result *r = &s->series.results[i];
		json_t *x = json_object();

		json_object_set_new(x, "outcome", json_string(run_outcome_to_string(r->outcome)));
		if (r->title)
			json_object_set_new(x, "title", json_str_or_null(r->title));
		if (r->message)
			json_object_set_new(x, "message", json_str_or_null(r->message));
		if (r->outcome == RUN_NO_CRASH) {
			json_object_set_new(x, "exit", r->timed_out ? json_string("timeout") :
					    r->exit_signal ? json_string("signal") :
					    r->exit_status >= 0 ? json_string("status") : json_null());
			json_object_set_new(x, "exit_status", json_integer(r->exit_status));
			json_object_set_new(x, "exit_signal", json_integer(r->exit_signal));
			json_object_set_new(x, "output", json_str_or_null(r->output));
		}
		if (r->leak_checked)
			json_object_set_new(x, "leaks", json_str_or_null(r->leaks));
		if (r->trace)
			json_object_set_new(x, "trace", json_str_or_null(r->trace));
		json_object_set_new(x, "boot_ms", json_integer((json_int_t)(r->boot_usec / 1000)));
		json_object_set_new(x, "run_ms", json_integer((json_int_t)(r->run_usec / 1000)));
		json_array_append_new(outs, x);
	}
	/* A build that failed for want of disk or time is not the code's
	 * fault: it is told apart from a compiler error. */
	if (s->built && s->build.status != BUILD_OK)
		json_array_append_new(outs, json_string(s->build.status == BUILD_FAILED
								 ? "build-error"
								 : "infra-error"));
	for (size_t i = 0; i < s->build.n_errors; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "file", json_string(s->build.errors[i].file));
		json_object_set_new(e, "line", json_integer(s->build.errors[i].line));
		json_object_set_new(e, "message", json_str_or_null(s->build.errors[i].message));
		json_array_append_new(errs, e);
	}
	json_object_set_new(b, "status", json_string(build_status_to_string(s->build.status)));
	json_object_set_new(b, "ms", json_integer((json_int_t)(s->build.usec / 1000)));
	json_object_set_new(b, "kept", json_boolean(s->build.kept));
	if (s->build.message)
		json_object_set_new(b, "message", json_str_or_null(s->build.message));
	if (s->build.log_path)
		json_object_set_new(b, "log", json_string(s->build.log_path));
	json_object_set_new(b, "errors", errs);
	json_object_set_new(o, "runs", json_integer(s->series.counted));
	json_object_set_new(o, "attempts", json_integer(s->series.attempts));
	json_object_set_new(o, "crashed", json_integer(s->series.crashed));
	json_object_set_new(o, "title", s->series.title ? json_str_or_null(s->series.title) : json_null());
	json_object_set_new(o, "outcomes", outs);
	json_object_set_new(o, "build", b);
	return o;
}

struct session {
	struct repro_args a;
	struct vm_opts vm;
	struct build_opts bo;
	char *build_dir, *vm_name, *build_name, *tmpdir, *binary, *worktree;
	char *syz_bin;	/* syzkaller's binaries, for a syz reproducer */
	struct syz_opts syz;
	int runs, attempts;
	char *error_kind, *error_msg;
	/* test-patch: the kselftests that cover the patch, run on both
	 * kernels once the crash is gone */
	char **st_selection;
	char *st_note;		/* why none ran */
	char *base_kernel;	/* a copy of the base's bzImage */
	struct selftest_set st_set;
	struct selftest_results st_base, st_patched;
	bool st_ran;
	int st_regressions;
	char *st_text;
	uint64_t st_timeout;
};

static void session_free(struct session *s)
{
	repro_args_free(&s->a);
	vm_opts_free(&s->vm);
	free(s->build_dir);
	free(s->vm_name);
	free(s->build_name);
	if (s->tmpdir)
		(void)rm_rf(s->tmpdir);
	free(s->tmpdir);
	free(s->binary);
	free(s->syz_bin);
	free(s->worktree);
	free(s->error_kind);
	free(s->error_msg);
	strv_free(s->st_selection);
	free(s->st_note);
	free(s->base_kernel);
	selftest_set_free(&s->st_set);
	selftest_results_free(&s->st_base);
	selftest_results_free(&s->st_patched);
	free(s->st_text);
}

/* An input error: reported as {"error": {...}} and exit code 1. */
static int input_error(struct session *s, const char *kind, const char *msg)
{
	free(s->error_kind);
	free(s->error_msg);
	s->error_kind = strdup(kind);
	s->error_msg = strdup(msg ? msg : "");
	return -EINVAL;
}

/* --tree NAME: the commit is checked out into the tree's worktree next to
 * its build directories; only files that differ from the last checkout
 * are rewritten, so the build stays incremental.  A url that is a local
 * folder is opened in place (a repository, or a plain source folder that
 * is imported as a snapshot); any other url is the mirror that
 * "kfixctl tree fetch" keeps. */
static int tree_checkout(const struct config *cfg, struct session *s)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_tree_ struct tree *t = NULL;
	_cleanup_free_ char *scratch = NULL, *err = NULL;
	char oid[TREE_OID_HEX];
	const char *url, *cache;
	int r;

	r = tree_conf_from_config(cfg, s->a.tree, &tc, &err);
	if (r < 0)
		return err ? input_error(s, "unknown-tree", err) : r;
	if (!tc.url)
		return input_error(s, "unknown-tree", "no [tree] section with a url for --tree");
	url = tc.url;
	cache = tc.cache_dir;
	if (asprintf(&scratch, "%s/trees/%s.snapshot", cache, s->a.tree) < 0 ||
	    asprintf(&s->worktree, "%s/wt-%s", s->build_dir, s->a.tree) < 0)
		return -ENOMEM;
	r = url[0] == '/' ? tree_open_path(url, scratch, &t)
			  : tree_open_mirror(cache, s->a.tree, url, &t);
	if (r < 0)
		return input_error(s, "unknown-tree", tree_error(NULL));
	r = tree_resolve(t, s->a.commit ? s->a.commit : "HEAD", oid);
	if (r == -ENOENT)
		return input_error(s, "unknown-commit", tree_error(t));
	if (r < 0)
		return r;
	r = mkdir_p(s->build_dir, 0755);
	if (r < 0)
		return r;
	r = tree_worktree_checkout(t, s->worktree, oid, NULL);
	if (r < 0)
		return input_error(s, "checkout-failed", tree_error(t));
	return 0;
}

static int session_setup(struct ctl *c, struct session *s)
{
	_cleanup_free_ char *msg = NULL;
	struct config *cfg;
	int r;

	r = ctl_config(c, &cfg);
	if (r < 0)
		return r;
	if (!s->a.tree && s->a.src) {
		r = check_src_commit(s->a.src, s->a.commit, &msg);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return input_error(s, r == -ENOTDIR ? "bad-source" : "unknown-commit", msg);
	}
	if (s->a.kconfig && access(s->a.kconfig, R_OK) < 0)
		return input_error(s, "bad-config", "cannot read the --config file");
	if (s->a.patch && access(s->a.patch, R_OK) < 0)
		return input_error(s, "bad-patch", "cannot read the --patch file");
	r = first_subsection(cfg, "vm", s->a.vm, &s->vm_name);
	if (r < 0)
		return r;
	r = vm_opts_from_config(cfg, s->vm_name, &s->vm);
	if (r < 0)
		return r;
	r = first_subsection(cfg, "build", s->a.build, &s->build_name);
	if (r < 0)
		return r;
	r = build_opts_from_config(cfg, s->build_name, &s->bo, &s->build_dir);
	if (r < 0)
		return r;
	if (s->a.tree) {
		r = tree_checkout(cfg, s);
		if (r < 0)
			return r;
		s->a.src = s->worktree;
		s->bo.name = s->a.tree;
	}
	s->bo.src = s->a.src;
	s->bo.config = s->a.kconfig;
	s->bo.dir = s->build_dir;
	s->runs = s->a.runs ?: s->vm.runs;
	s->attempts = s->a.attempts ?: (s->a.runs ? 2 * s->runs : s->vm.max_attempts);
	s->attempts = MAX(s->attempts, s->runs);
	return 0;
}

#define SYZ_OPTS_MAX (64 * 1024)

/* A syz reproducer runs with the configured syzkaller build and syzbot's
 * options: --repro-opts, else the program's own "# {...}" line, else
 * syzkaller's defaults for reproduction. */
static int prepare_syz(struct session *s)
{
	_cleanup_free_ char *data = NULL, *msg = NULL, *missing = NULL;
	size_t len;
	int r;

	if (!s->vm.syzkaller) {
		if (asprintf(&msg, "a syz reproducer needs a syzkaller build: "
			     "[vm \"%s\"] syzkaller = DIR", s->vm_name) < 0)
			return -ENOMEM;
		return input_error(s, "no-syzkaller", msg);
	}
	r = syz_tools_find(s->vm.syzkaller, &s->syz_bin, &missing);
	if (r == -ENOENT) {
		if (asprintf(&msg, "%s is missing: build syzkaller there", missing) < 0)
			return -ENOMEM;
		return input_error(s, "no-syzkaller", msg);
	}
	if (r < 0)
		return r;
	s->binary = strdup(s->a.repro);
	if (!s->binary)
		return -ENOMEM;
	r = read_file_bounded(s->a.repro_opts ? s->a.repro_opts : s->a.repro,
			      s->a.repro_opts ? SYZ_OPTS_MAX : 16 * 1024 * 1024, &data, &len);
	if (r < 0)
		return input_error(s, "bad-repro", s->a.repro_opts ? "cannot read --repro-opts"
								      : "cannot read the reproducer");
	r = s->a.repro_opts ? syz_opts_parse(data, len, &s->syz)
			    : syz_opts_from_program(data, len, &s->syz);
	if (r == -ENOENT)
		syz_opts_default(&s->syz);
	else if (r == -EINVAL)
		return input_error(s, "bad-repro-opts",
				   "the repro options are not syzbot's (JSON or {Key:value ...}) "
				   "or hold a value syz-execprog does not take");
	else if (r < 0)
		return r;
	return 0;
}

static int compile_repro(struct session *s)
{
	_cleanup_free_ char *msg = NULL;
	char tmpl[] = "/tmp/kfixctl-XXXXXX";
	int r;

	if (!mkdtemp(tmpl))
		return -errno;
	s->tmpdir = strdup(tmpl);
	if (!s->tmpdir)
		return -ENOMEM;
	if (s->a.syz)
		return prepare_syz(s);
	if (asprintf(&s->binary, "%s/repro", tmpl) < 0)
		return -ENOMEM;
	if (!endswith(s->a.repro, ".c")) {
		/* Already a binary. */
		free(s->binary);
		s->binary = strdup(s->a.repro);
		return s->binary ? 0 : -ENOMEM;
	}
	r = run_compile_repro(s->a.repro, NULL, s->binary, s->bo.sandbox, &msg);
	if (r == -EINVAL)
		return input_error(s, "repro-does-not-compile", msg);
	return r;
}

static int check_patch_applies(struct session *s)
{
	_cleanup_(build_result_free) struct build_result res = { 0 };
	char *patches[] = { (char *)s->a.patch, NULL };
	int r;

	s->bo.patches = patches;
	r = build_check_apply(&s->bo, &res);
	s->bo.patches = NULL;
	if (r < 0)
		return r;
	if (res.status == BUILD_BAD_PATCH)
		return input_error(s, "patch-does-not-apply", res.message);
	return 0;
}

#define PATCH_MAX (64 * 1024 * 1024)

/* A patch that adds a trace_printk() call, as a developer's probe does:
 * its run reads the trace buffer back. */
static bool patch_traces(const char *path)
{
	_cleanup_free_ char *patch = NULL;
	size_t len;

	if (!path || read_file_bounded(path, PATCH_MAX, &patch, &len) < 0)
		return false;
	for (const char *l = patch; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");

		if (l[0] == '+' && !startswith(l, "+++ ") && memmem(l, n, "trace_printk(", 13))
			return true;
	}
	return false;
}

static bool titles_are_leaks(char *const *titles)
{
	for (size_t i = 0; titles && titles[i]; i++)
		if (run_title_is_leak(titles[i]))
			return true;
	return false;
}

static int do_side(struct session *s, struct side *sd, bool progress_on, bool stop_on_crash)
{
	char *patches[] = { (char *)s->a.patch, NULL };
	struct run_opts ro = {
		.vm = &s->vm,
		.backend = vm_backend_find(s->vm.backend ? s->vm.backend : "qemu"),
		.timeout_usec = s->a.timeout_usec,
		.runs = s->runs,
		.max_attempts = s->attempts,
		.stop_on_crash = stop_on_crash,
		/* what the patch leaks is judged on the patched kernel alone:
		 * the leaks from before the reproducer are cleared */
		.leak_check = streq(sd->name, "patched") && s->vm.leak_check,
		/* a leak is seen by kmemleak alone, on both kernels */
		.leak_is_crash = titles_are_leaks(s->a.titles),
		.trace_read = streq(sd->name, "patched") && patch_traces(s->a.patch),
		.progress = progress_on ? progress : NULL,
		.userdata = sd,
	};
	int r;

	sd->runs_wanted = s->runs;
	sd->last_percent = -2; /* draw the first progress line */
	s->bo.patches = streq(sd->name, "patched") ? patches : NULL;
	s->bo.progress = progress_on ? build_progress : NULL;
	s->bo.userdata = sd;
	if (s->a.kernel) {
		sd->build.bzimage = strdup(s->a.kernel);
		if (!sd->build.bzimage)
			return -ENOMEM;
	} else {
		if (progress_on)
			fprintf(stderr, "%s: building (%s)\n", sd->name, s->a.src);
		r = build_kernel(&s->bo, &sd->build);
		if (progress_on)
			line_clear(sd);
		if (r < 0)
			return r;
	}
	sd->built = true;
	if (progress_on && !s->a.kernel)
		fprintf(stderr, "%s: build %s in %.0fs%s%s%s\n", sd->name,
			build_status_to_string(sd->build.status), (double)sd->build.usec / 1e6,
			sd->build.kept ? " (the kernel kept from an earlier build)" : "",
			sd->build.message ? ": " : "", sd->build.message ? sd->build.message : "");
	if (sd->build.status == BUILD_BAD_PATCH)
		return input_error(s, "patch-does-not-apply", sd->build.message);
	if (sd->build.status == BUILD_BAD_CONFIG)
		return input_error(s, "config-missing-options", sd->build.message);
	if (sd->build.status != BUILD_OK)
		return 0;
	if (!ro.backend)
		return input_error(s, "bad-vm", "unknown VM backend");
	ro.kernel = sd->build.bzimage;
	ro.repro = s->binary;
	ro.syz_bin = s->syz_bin;
	ro.syz = s->syz_bin ? &s->syz : NULL;
	if (progress_on)
		line_runs(sd, 0, 0, 0);
	r = run_series(&ro, &sd->series);
	if (progress_on)
		line_clear(sd);
	if (r < 0)
		return r;
	sd->ran = true;
	return 0;
}

static enum verdict side_verdict(const struct session *s, const struct side *sd, bool base,
				 enum verdict base_v)
{
	if (sd->build.status == BUILD_FAILED)
		return VERDICT_BUILD_ERROR;
	if (sd->build.status != BUILD_OK)
		return VERDICT_INFRA_ERROR;
	if (base)
		return verdict_base(&sd->series, s->a.titles, s->runs);
	return verdict_patch(base_v, &sd->series, s->runs);
}

#define BZIMAGE_MAX (256 * 1024 * 1024)

/* Which kselftests and KUnit suites cover the patch: --selftests, else
 * the tree's selftests, else [agent] selftests ("auto" by default).
 * Called before the builds (a bad spec is an input error) and again
 * once the base is built, whose objects say which KUnit suites the
 * kernel has. */
static int selftests_select(struct ctl *c, struct session *s, bool built)
{
	_cleanup_(tree_conf_done) struct tree_conf tc = { 0 };
	_cleanup_free_ char *objdir = NULL;
	_cleanup_free_ char *patch = NULL, *err = NULL;
	_cleanup_strv_ char **files = NULL;
	const char *spec = s->a.selftests;
	struct config *cfg;
	size_t len;
	int r;

	r = ctl_config(c, &cfg);
	if (r < 0)
		return r;
	if (!spec && s->a.tree && tree_conf_from_config(cfg, s->a.tree, &tc, NULL) >= 0)
		spec = tc.selftests;
	if (!spec)
		(void)config_get_string(cfg, "agent", NULL, "selftests", &spec);
	r = config_get_duration(cfg, "agent", NULL, "selftest-timeout", &s->st_timeout);
	if (r < 0)
		return r;
	r = read_file_bounded(s->a.patch, PATCH_MAX, &patch, &len);
	if (r < 0)
		return input_error(s, "bad-patch", "cannot read the --patch file");
	if (built && build_objdir(&s->bo, &objdir) < 0)
		return -ENOMEM;
	strv_free(s->st_selection);
	s->st_selection = NULL;
	free(s->st_note);
	s->st_note = NULL;
	r = selftest_patch_files(patch, len, &files);
	if (r >= 0)
		r = selftest_select(s->a.src, objdir, spec, files, &s->st_selection, &err);
	if (r == -EINVAL || r == -E2BIG)
		return input_error(s, "bad-selftests", err);
	if (r < 0)
		return r;
	if (!s->st_selection[0] &&
	    !(s->st_note = strdup(spec && streq(spec, "none") ? "selftests = none"
				  : "no kselftest or KUnit suite covers the changed files")))
		return -ENOMEM;
	return 0;
}

/* The patched build replaces the base's bzImage: its selftests run on
 * a copy. */
static int keep_base_kernel(struct session *s, const struct side *base)
{
	if (!s->st_selection || !s->st_selection[0] || !base->build.bzimage)
		return 0;
	if (asprintf(&s->base_kernel, "%s/base-bzImage", s->tmpdir) < 0)
		return -ENOMEM;
	return copy_file_bounded(base->build.bzimage, s->base_kernel, BZIMAGE_MAX);
}

static void st_log(bool prog, const char *fmt, ...) _printf_(2, 3);
static void st_log(bool prog, const char *fmt, ...)
{
	va_list ap;

	if (!prog)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Built once per build folder, then run on the base and on the patched
 * kernel: a test that passed on the base and not on the patch is a
 * regression. */
static int selftests_run(struct session *s, const struct side *patched, bool prog,
			 enum verdict *v)
{
	_cleanup_free_ char *objdir = NULL, *out = NULL, *err = NULL;
	const struct vm_backend *b = vm_backend_find(s->vm.backend ? s->vm.backend : "qemu");
	int r;

	if (!s->base_kernel || !b)
		return 0;
	r = build_objdir(&s->bo, &objdir);
	if (r < 0 || asprintf(&out, "%s.selftests", objdir) < 0)
		return r < 0 ? r : -ENOMEM;
	st_log(prog, "selftests: building %zu selection(s) into %s", strv_len(s->st_selection), out);
	r = selftest_build(s->a.src, s->st_selection, out, s->bo.sandbox, 30 * 60 * 1000000ULL,
			   &s->st_set, &err);
	if (r == -ENOENT) {
		free(s->st_note);
		s->st_note = TAKE_PTR(err);
		return 0;
	}
	if (r < 0)
		return r;
	st_log(prog, "selftests: %zu test(s) on the base kernel", s->st_set.n);
	r = selftest_run(&s->vm, b, s->base_kernel, &s->st_set, s->st_timeout, &s->st_base);
	if (r < 0)
		return r;
	r = selftest_set_prune(&s->st_set, &s->st_base);
	if (r < 0)
		return r;
	st_log(prog, "selftests: %zu test(s) on the patched kernel", s->st_set.n);
	r = selftest_run(&s->vm, b, patched->build.bzimage, &s->st_set, s->st_timeout,
			 &s->st_patched);
	if (r < 0)
		return r;
	s->st_ran = true;
	r = selftest_regressions(&s->st_base, &s->st_patched, &s->st_text);
	if (r < 0)
		return r;
	s->st_regressions = r;
	if (r > 0)
		*v = VERDICT_SELFTEST_REGRESSION;
	return 0;
}

static json_t *selftests_json(const struct session *s)
{
	json_t *o = json_object(), *sel = json_array();

	if (!o || !sel) {
		json_decref(o);
		json_decref(sel);
		return NULL;
	}
	for (size_t i = 0; s->st_selection && s->st_selection[i]; i++)
		json_array_append_new(sel, json_string(s->st_selection[i]));
	json_object_set_new(o, "selected", sel);
	json_object_set_new(o, "note", json_str_or_null(s->st_note));
	json_object_set_new(o, "unbuilt", json_str_or_null(s->st_set.unbuilt));
	if (s->st_ran) {
		json_object_set_new(o, "base", selftest_results_to_json(&s->st_base));
		json_object_set_new(o, "patched", selftest_results_to_json(&s->st_patched));
	}
	json_object_set_new(o, "regressions", json_integer(s->st_regressions));
	json_object_set_new(o, "regression_report", json_str_or_null(s->st_text));
	return o;
}

static void selftests_print(const struct session *s)
{
	_cleanup_free_ char *sum = NULL;

	if (!s->st_ran) {
		if (s->st_note)
			ctl_print_escaped("selftests", s->st_note);
		return;
	}
	if (selftest_summary(&s->st_base, &s->st_patched, &sum) >= 0)
		ctl_print_escaped("selftests", sum);
	if (s->st_text)
		ctl_print_escaped("regressions", s->st_text);
}

static int print_result(struct ctl *c, struct session *s, struct side *base, struct side *patched,
			const char *verdict)
{
	if (c->json) {
		_cleanup_json_ json_t *o = json_object();

		if (!o)
			return -ENOMEM;
		if (s->error_kind) {
			json_t *e = json_object();

			json_object_set_new(e, "kind", json_string(s->error_kind));
			json_object_set_new(e, "message", json_str_or_null(s->error_msg));
			json_object_set_new(o, "error", e);
		}
		if (base->built)
			json_object_set_new(o, "base", side_json(base));
		if (patched && patched->built)
			json_object_set_new(o, "patched", side_json(patched));
		if (patched && s->a.test_patch && !s->error_kind)
			json_object_set_new(o, "selftests", selftests_json(s));
		json_object_set_new(o, "verdict", verdict ? json_string(verdict) : json_null());
		return json_print(o);
	}
	if (s->error_kind) {
		_cleanup_free_ char *m = str_escape(s->error_msg, strlen(s->error_msg), 4000);

		ctl_err("%s: %s", s->error_kind, m ? m : "");
		return 0;
	}
	for (struct side *sd = base; sd; sd = sd == base ? patched : NULL) {
		if (!sd->built)
			continue;
		printf("%-8s build %s", sd->name, build_status_to_string(sd->build.status));
		if (sd->ran)
			printf(", runs %d, crashed %d", sd->series.counted, sd->series.crashed);
		printf("\n");
		if (sd->build.status != BUILD_OK && sd->build.message)
			ctl_print_escaped("  message", sd->build.message);
		if (sd->series.title)
			ctl_print_escaped("  title", sd->series.title);
		for (size_t i = 0; i < sd->series.n_results; i++) {
			const struct run_result *rr = &sd->series.results[i];
			char what[64];

			if (run_result_failed_exit(rr)) {
				if (rr->exit_signal)
					snprintf(what, sizeof(what), "  run %zu killed by signal", i + 1);
				else
					snprintf(what, sizeof(what), "  run %zu exit status", i + 1);
				printf("%s %d\n", what, rr->exit_signal ? rr->exit_signal : rr->exit_status);
				if (rr->output && *rr->output)
					ctl_print_escaped("  output", rr->output);
			}
			if (rr->leaks) {
				snprintf(what, sizeof(what), "  run %zu kmemleak", i + 1);
				ctl_print_escaped(what, rr->leaks);
			}
		}
		for (size_t i = 0; i < sd->build.n_errors && i < 5; i++)
			printf("  %s:%d: %s\n", sd->build.errors[i].file, sd->build.errors[i].line,
			       sd->build.errors[i].message);
	}
	if (patched && s->a.test_patch)
		selftests_print(s);
	if (verdict)
		printf("verdict: %s\n", verdict);
	return 0;
}

static int repro_main(struct ctl *c, int argc, char **argv, bool test_patch)
{
	_cleanup_(session_free) struct session s = { .a.test_patch = test_patch };
	_cleanup_(side_free) struct side base = { .name = "base" }, patched = { .name = "patched" };
	const char *cmd = test_patch ? "test-patch" : "reproduce";
	bool prog = !c->json && isatty(STDERR_FILENO);
	enum verdict vb = VERDICT_INFRA_ERROR, v = VERDICT_INFRA_ERROR;
	int r;

	r = parse_args(cmd, argc, argv, &s.a);
	if (r < 0)
		return 2;
	r = session_setup(c, &s);
	if (r == 0)
		r = compile_repro(&s);
	if (r == 0 && test_patch)
		r = check_patch_applies(&s);
	if (r == 0 && test_patch)
		r = selftests_select(c, &s, false);
	if (r == 0)
		r = do_side(&s, &base, prog, test_patch);
	if (r == 0) {
		vb = side_verdict(&s, &base, true, 0);
		v = vb;
		if (test_patch && vb == VERDICT_REPRODUCED) {
			r = selftests_select(c, &s, true);
			if (r == 0)
				r = keep_base_kernel(&s, &base);
			if (r == 0)
				r = do_side(&s, &patched, prog, true);
			if (r == 0)
				v = side_verdict(&s, &patched, false, vb);
			if (r == 0 && v == VERDICT_FIXED)
				r = selftests_run(&s, &patched, prog, &v);
		} else if (test_patch && vb == VERDICT_BUILD_ERROR)
			v = VERDICT_INFRA_ERROR; /* the base, not the patch, broke */
	}
	if (r < 0 && !s.error_kind) {
		ctl_err("%s: %s", cmd, strerror(-r));
		return 1;
	}
	print_result(c, &s, &base, test_patch ? &patched : NULL,
		     s.error_kind ? NULL : verdict_to_string(v));
	if (s.error_kind)
		return 1;
	return (test_patch ? v == VERDICT_FIXED : v == VERDICT_REPRODUCED) ? 0 : 1;
}

int ctl_reproduce(struct ctl *c, int argc, char **argv)
{
	return repro_main(c, argc, argv, false);
}

int ctl_test_patch(struct ctl *c, int argc, char **argv)
{
	return repro_main(c, argc, argv, true);
}

/* kfixctl build: one build (optionally patched), for people and benches. */
int ctl_build(struct ctl *c, int argc, char **argv)
{
	_cleanup_(session_free) struct session s = { 0 };
	_cleanup_(side_free) struct side sd = { .name = "build" };
	char *patches[] = { NULL, NULL };
	int r;

	s.a.build_only = true;
	r = parse_args("build", argc, argv, &s.a);
	if (r < 0)
		return 2;
	r = session_setup(c, &s);
	if (r == 0) {
		patches[0] = (char *)s.a.patch;
		s.bo.patches = s.a.patch ? patches : NULL;
		if (!c->json && isatty(STDERR_FILENO)) {
			sd.last_percent = -2;
			s.bo.progress = build_progress;
			s.bo.userdata = &sd;
		}
		/* --compile-only: the fast check of the touched files. */
		r = s.a.compile_only ? build_check_patch(&s.bo, &sd.build)
				     : build_kernel(&s.bo, &sd.build);
		line_clear(&sd);
		sd.built = r == 0;
	}
	if (r < 0 && !s.error_kind) {
		ctl_err("build: %s", strerror(-r));
		return 1;
	}
	if (c->json && !s.error_kind) {
		_cleanup_json_ json_t *o = side_json(&sd);

		if (o) {
			json_object_set_new(o, "bzImage", sd.build.bzimage ? json_string(sd.build.bzimage) : json_null());
			json_print(o);
		}
	} else
		print_result(c, &s, &sd, NULL, NULL);
	return s.error_kind || sd.build.status != BUILD_OK ? 1 : 0;
}
