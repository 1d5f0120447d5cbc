/* kfixctl bench: kfix over a dataset of known bugs (kfixctl(1)).
 *
 * Each bug is one `kfixctl repair` (the base reproduced, the agent, the
 * candidates validated), run as a child so that a crash or a time-out
 * of one bug costs only that bug, with its output in the bug's folder.
 * Its patch is then held against the developers' fix (agent/fixcompare.h)
 * and the bug's result.json written last, atomically: a run killed at
 * any point resumes with the bugs that have none, redoing only the one
 * it was in.  The summary is rebuilt from the result files after every
 * bug, so it is never older than the last finished bug. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/fixcompare.h"
#include "agent/llm.h"
#include "bench.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "ctl.h"
#include "repro/tree.h"

#define BENCH_JOBS_MAX 16
#define BENCH_ONLY_MAX 256
#define BENCH_TIMEOUT_DEFAULT (3ull * 3600 * 1000000)
#define BENCH_RESULT_MAX (1u << 20)
#define BENCH_PATCH_MAX (4u << 20)
#define BENCH_LOG_TAIL 600

struct bench_opts {
	const char *dataset, *out, *src, *kconfig, *llm, *max_cost, *judge;
	char *only[BENCH_ONLY_MAX + 1];
	size_t n_only;
	bool live, record;
	unsigned jobs;
	uint64_t timeout_usec;
};

struct bench_run {
	const struct bench_opts *o;
	struct ctl *c;
	const struct bench_set *set;
	const struct config *cfg; /* with --judge */
	char self[PATH_MAX];
	char *out;
	const struct bench_bug **todo;
	size_t n_todo, next, done, total;
	pthread_mutex_t lock;
	int error; /* the first infrastructure error: the run stops */
};

static bool selected(const struct bench_opts *o, const char *id)
{
	if (o->n_only == 0)
		return true;
	for (size_t i = 0; i < o->n_only; i++)
		if (streq(o->only[i], id))
			return true;
	return false;
}

static char *bug_path(const struct bench_run *b, const struct bench_bug *bug, const char *name)
{
	char *p;

	return asprintf(&p, "%s/bugs/%s%s%s", b->out, bug->id, name ? "/" : "", name ? name : "") < 0 ? NULL : p;
}

/* The bug's source tree and kernel config: the command line's win over
 * the dataset's (a dataset may leave them to the machine it runs on). */
static const char *bug_src(const struct bench_run *b, const struct bench_bug *bug)
{
	return b->o->src ? b->o->src : bug->src;
}

static const char *bug_kconfig(const struct bench_run *b, const struct bench_bug *bug)
{
	return b->o->kconfig ? b->o->kconfig : bug->kconfig;
}

static int load_json_file(const char *path, size_t max, json_t **ret)
{
	_cleanup_free_ char *text = NULL;
	json_error_t je;
	size_t len = 0;
	int r = read_file_bounded(path, max, &text, &len);

	if (r < 0)
		return r;
	r = json_parse_bounded(text, len, max, ret, &je);
	return r < 0 ? -EBADMSG : 0;
}

static int write_json(const char *path, const json_t *j)
{
	_cleanup_free_ char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	_cleanup_free_ char *line = NULL;

	if (!text || asprintf(&line, "%s\n", text) < 0)
		return -ENOMEM;
	return write_file_atomic(path, line, strlen(line), 0644);
}

/* The child's argument vector: kfixctl repair for one bug. */
static int repair_argv(const struct bench_run *b, const struct bench_bug *bug, const char *dir,
		       char ***ret)
{
	const struct bench_opts *o = b->o;
	_cleanup_strv_ char **v = NULL;
	_cleanup_free_ char *out = NULL, *hints = NULL, *cassette = NULL;
	int r = 0;

#define ADD(s) do { if (r >= 0) r = strv_push(&v, (s)); } while (0)
	if (asprintf(&out, "%s/repair", dir) < 0 || asprintf(&hints, "%s/hints.txt", dir) < 0 ||
	    asprintf(&cassette, "%s/cassette.jsonl", dir) < 0)
		return -ENOMEM;
	ADD(b->self);
	ADD("-c");
	ADD(b->c->config_path);
	ADD("repair");
	ADD("--src");
	ADD(bug_src(b, bug));
	if (bug->commit) {
		ADD("--commit");
		ADD(bug->commit);
	}
	ADD("--config");
	ADD(bug_kconfig(b, bug));
	if (bug->repro_c) {
		ADD("--repro");
		ADD(bug->repro_c);
	}
	ADD("--report");
	ADD(bug->report);
	if (bug->syzbot_id) {
		ADD("--syzbot-id");
		ADD(bug->syzbot_id);
	}
	if (bug->hints) {
		ADD("--hint-file");
		ADD(hints);
	}
	if (bug->agent_conf) {
		ADD("--agent-conf");
		ADD(bug->agent_conf);
	}
	if (o->max_cost) {
		ADD("--max-cost");
		ADD(o->max_cost);
	}
	if (bug->cassette && !o->live) {
		ADD("--replay");
		ADD(bug->cassette);
	} else {
		if (o->llm) {
			ADD("--llm");
			ADD(o->llm);
		}
		if (o->record) {
			ADD("--record");
			ADD(cassette);
		}
	}
	ADD("--out");
	ADD(out);
#undef ADD
	if (r < 0)
		return r;
	if (bug->hints) {
		_cleanup_free_ char *text = NULL;
		struct buf t = BUF_INIT(64 * 1024);

		for (size_t i = 0; bug->hints[i] && r >= 0; i++)
			r = buf_printf(&t, "%s\n", bug->hints[i]);
		text = buf_steal(&t, NULL);
		if (r < 0 || !text || (r = write_file_atomic(hints, text, strlen(text), 0644)) < 0)
			return r < 0 ? r : -ENOMEM;
	}
	*ret = TAKE_PTR(v);
	return 0;
}

struct old_reader {
	struct tree *t;
	const char *rev;
};

static int read_old(void *ud, const char *path, char **ret, size_t *ret_len)
{
	const struct old_reader *o = ud;

	return o->t ? tree_read_file(o->t, o->rev, path, 0, ret, ret_len) : -ENOENT;
}

/* The developers' fix, and the revision its files are read at before it. */
static int dev_fix(struct tree *t, const struct bench_bug *bug, char **ret_diff, char **ret_rev)
{
	int r;

	if (bug->fix_diff) {
		r = read_file_bounded(bug->fix_diff, BENCH_PATCH_MAX, ret_diff, NULL);
		if (r >= 0 && !(*ret_rev = strdup(bug->commit ? bug->commit : "HEAD")))
			r = -ENOMEM;
		return r;
	}
	if (!t)
		return -ENOENT;
	r = tree_diff_commits(t, NULL, bug->fix_commit, BENCH_PATCH_MAX, ret_diff, NULL);
	if (r >= 0 && asprintf(ret_rev, "%s^", bug->fix_commit) < 0)
		r = -ENOMEM;
	return r;
}

/* --judge: the model's word on whether the two are the same fix, beside
 * the rules'; a judge that fails leaves its error, not a verdict.  Each
 * bug gets its own connection: bugs run on several threads. */
static int judge_fix(const struct bench_run *b, const char *ours, const char *theirs, json_t *res)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	_cleanup_free_ char *err = NULL;
	json_t *j = NULL;
	int r = llm_new_from_config(b->cfg, b->o->judge, &l, &err);

	if (r >= 0)
		r = fixcompare_judge(l, ours, theirs, &j, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return json_object_set_new(res, "judge_error", json_str_or_null(err ? err : strerror(-r)));
	json_object_set_new(res, "judge_equivalent", json_boolean(json_is_true(json_object_get(j, "equivalent"))));
	return json_object_set_new(res, "judge", j);
}

/* kfix's patch against the developers' fix: the members of result.json
 * that say how close they are. */
static int compare_fix(const struct bench_run *b, const struct bench_bug *bug, const char *dir,
		       json_t *res)
{
	_cleanup_free_ char *path = NULL, *ours = NULL, *theirs = NULL, *rev = NULL, *err = NULL;
	_cleanup_(tree_freep) struct tree *t = NULL;
	_cleanup_json_ json_t *cmp = NULL;
	struct old_reader ro = {}, rd = {};
	const json_t *files, *funcs, *hunks;
	json_int_t dev_hunks;
	int r;

	if (asprintf(&path, "%s/repair/0001-fix.patch", dir) < 0)
		return -ENOMEM;
	if (read_file_bounded(path, BENCH_PATCH_MAX, &ours, NULL) < 0)
		return 0; /* no validated patch: nothing to compare */
	json_object_set_new(res, "patch", json_string("repair/0001-fix.patch"));
	if (tree_open_path(bug_src(b, bug), dir, &t) < 0)
		t = NULL;
	r = dev_fix(t, bug, &theirs, &rev);
	if (r < 0)
		return json_object_set_new(res, "compare_error",
					   json_string("the developers' fix cannot be read"));
	ro = (struct old_reader){ t, bug->commit ? bug->commit : "HEAD" };
	rd = (struct old_reader){ t, rev };
	r = fixcompare_diffs(&(struct fixcompare_side){ .diff = ours, .read_old = read_old, .ud = &ro },
			     &(struct fixcompare_side){ .diff = theirs, .read_old = read_old, .ud = &rd },
			     &cmp, &err);
	if (r < 0)
		return json_object_set_new(res, "compare_error", json_str_or_null(err ? err : strerror(-r)));
	files = json_object_get(cmp, "files");
	funcs = json_object_get(cmp, "functions");
	hunks = json_object_get(cmp, "hunks");
	dev_hunks = json_integer_value(json_object_get(hunks, "developer"));
	json_object_set_new(res, "touches_dev_files",
			    json_boolean(json_array_size(json_object_get(files, "shared")) > 0));
	json_object_set_new(res, "touches_dev_functions",
			    json_boolean(json_array_size(json_object_get(funcs, "shared")) > 0));
	json_object_set_new(res, "hunk_overlap",
			    dev_hunks ? json_real((double)json_integer_value(json_object_get(hunks, "overlapping")) /
						  (double)dev_hunks)
				      : json_null());
	json_object_set(res, "similarity", json_object_get(cmp, "similarity"));
	json_object_set(res, "verdict", json_object_get(cmp, "verdict"));
	json_object_set_new(res, "solved", json_boolean(json_is_true(json_object_get(cmp, "matches"))));
	json_object_set(res, "equivalent", json_object_get(cmp, "equivalent"));
	json_object_set(res, "compare", cmp);
	return b->o->judge ? judge_fix(b, ours, theirs, res) : 0;
}

static bool reproduced(const char *result)
{
	return streq(result, "validated") || streq(result, "gave-up") || streq(result, "already-fixed");
}

/* result.json's counts, and the summary.json members they come from */
static const char *const counts[][2] = {
	{ "tokens_in", "tokens_in" }, { "tokens_out", "tokens_out" }, { "turns", "llm_calls" },
	{ "tool_calls", "tool_calls" }, { "attempts", "attempts" },
};

/* What the repair said: its summary.json, else how the child ended. */
static int record_repair(const char *dir, const struct proc_result *pr, json_t *res)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *s = NULL;
	const char *result;

	if (asprintf(&path, "%s/repair/summary.json", dir) < 0)
		return -ENOMEM;
	if (pr->timed_out || load_json_file(path, BENCH_RESULT_MAX, &s) < 0 || !json_is_object(s)) {
		_cleanup_free_ char *tail = str_printable_tail(pr->output ? pr->output : "", pr->output_len,
							       BENCH_LOG_TAIL);

		json_object_set_new(res, "result", json_string(pr->timed_out ? "timeout" : "error"));
		json_object_set_new(res, "reason", json_str_or_null(pr->timed_out ? "the bug's time ran out" : tail));
		json_object_set_new(res, "reproduced", json_false());
		json_object_set_new(res, "validated", json_false());
		return 0;
	}
	result = json_get_str(s, "result") ?: "?";
	json_object_set_new(res, "result", json_string(result));
	json_object_set_new(res, "reason", json_str_or_null(json_get_str(s, "reason")));
	json_object_set_new(res, "reproduced", json_boolean(reproduced(result)));
	json_object_set_new(res, "validated", json_boolean(streq(result, "validated")));
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++)
		json_object_set_new(res, counts[i][0], json_integer(json_get_int(s, counts[i][1], 0)));
	json_object_set_new(res, "cost", json_real(json_number_value(json_object_get(s, "cost"))));
	return 0;
}

/* SIGINT, SIGTERM or SIGHUP: the running repairs are stopped, no new one
 * starts, and the bugs without a result run again on the next call. */
static volatile sig_atomic_t bench_stop;

static void on_stop_signal(int sig)
{
	bench_stop = sig;
}

static int run_bug(struct bench_run *b, const struct bench_bug *bug, json_t **ret)
{
	_cleanup_free_ char *dir = bug_path(b, bug, NULL), *sub = NULL, *log = NULL, *cas = NULL;
	_cleanup_strv_ char **argv = NULL;
	_cleanup_json_ json_t *res = NULL;
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = {};
	uint64_t t0;
	int r, fd;

	if (!dir || asprintf(&sub, "%s/repair", dir) < 0 || asprintf(&log, "%s/repair.log", dir) < 0 ||
	    asprintf(&cas, "%s/cassette.jsonl", dir) < 0)
		return -ENOMEM;
	/* a bug cut short by a kill starts again from nothing: a recording
	 * would otherwise go on after the exchanges of the lost run */
	r = rm_rf(sub);
	if (r >= 0 && unlink(cas) < 0 && errno != ENOENT)
		r = -errno;
	if (r >= 0)
		r = mkdir_p(dir, 0755);
	if (r >= 0)
		r = repair_argv(b, bug, dir, &argv);
	if (r < 0)
		return r;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	po.timeout_usec = b->o->timeout_usec;
	po.output_max = 64 * 1024;
	po.tee_fd = fd;
	po.cancel = &bench_stop;
	t0 = clock_mono_usec();
	r = proc_run(argv, &po, &pr);
	close(fd);
	if (r < 0)
		return r;
	res = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:f}", "id", bug->id, "title", bug->title,
			"crash_type", bug->crash_type, "replayed", bug->cassette && !b->o->live,
			"solved", false, "equivalent", false,
			"wall_seconds", (double)((clock_mono_usec() - t0) / 100000) / 10.0);
	if (!res)
		r = -ENOMEM;
	if (r >= 0)
		r = record_repair(dir, &pr, res);
	if (r >= 0 && json_is_true(json_object_get(res, "validated")))
		r = compare_fix(b, bug, dir, res);
	proc_result_free(&pr);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(res);
	return 0;
}

/* The summary from every selected bug's result.json, in dataset order,
 * in the three renderings. */
static int write_summary(const struct bench_run *b, json_t **ret)
{
	_cleanup_json_ json_t *all = json_array(), *s = NULL;
	_cleanup_free_ char *pj = NULL, *pm = NULL, *ph = NULL, *md = NULL, *html = NULL;
	struct buf m = BUF_INIT(16u << 20), h = BUF_INIT(16u << 20);
	int r;

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < b->set->n; i++) {
		_cleanup_free_ char *p = NULL;
		json_t *res = NULL;

		if (!selected(b->o, b->set->bugs[i].id))
			continue;
		p = bug_path(b, &b->set->bugs[i], "result.json");
		if (!p)
			return -ENOMEM;
		if (load_json_file(p, BENCH_RESULT_MAX, &res) >= 0 && json_array_append_new(all, res) < 0)
			return -ENOMEM;
	}
	r = bench_summary(b->set->name, all, &s);
	if (r >= 0)
		r = bench_render_markdown(s, &m);
	if (r >= 0)
		r = bench_render_html(s, &h);
	md = buf_steal(&m, NULL);
	html = buf_steal(&h, NULL);
	buf_free(&m);
	buf_free(&h);
	if (r < 0)
		return r;
	if (!md || !html || asprintf(&pj, "%s/summary.json", b->out) < 0 ||
	    asprintf(&pm, "%s/summary.md", b->out) < 0 || asprintf(&ph, "%s/summary.html", b->out) < 0)
		return -ENOMEM;
	r = write_json(pj, s);
	if (r >= 0)
		r = write_file_atomic(pm, md, strlen(md), 0644);
	if (r >= 0)
		r = write_file_atomic(ph, html, strlen(html), 0644);
	if (r >= 0 && ret)
		*ret = TAKE_PTR(s);
	return r;
}

static void *worker(void *ud)
{
	struct bench_run *b = ud;

	for (;;) {
		_cleanup_json_ json_t *res = NULL;
		_cleanup_free_ char *path = NULL;
		const struct bench_bug *bug;
		int r;

		pthread_mutex_lock(&b->lock);
		bug = b->error == 0 && !bench_stop && b->next < b->n_todo ? b->todo[b->next++] : NULL;
		pthread_mutex_unlock(&b->lock);
		if (!bug)
			return NULL;
		r = run_bug(b, bug, &res);
		path = r >= 0 ? bug_path(b, bug, "result.json") : NULL;
		if (r >= 0)
			r = path ? write_json(path, res) : -ENOMEM;
		pthread_mutex_lock(&b->lock);
		if (r < 0 && b->error == 0)
			b->error = r;
		if (r >= 0) {
			b->done++;
			fprintf(stderr, "[%zu/%zu] %s: %s%s%s (%.1fs)\n", b->done, b->total, bug->id,
				json_get_str(res, "result"),
				json_is_true(json_object_get(res, "solved")) ? ", solved" : "",
				json_is_true(json_object_get(res, "equivalent")) ? ", equivalent" : "",
				json_number_value(json_object_get(res, "wall_seconds")));
			if (write_summary(b, NULL) < 0 && b->error == 0)
				b->error = -EIO;
		} else if (r != -ECANCELED) {
			fprintf(stderr, "kfixctl: bench: %s: %s\n", bug->id, strerror(-r));
		}
		pthread_mutex_unlock(&b->lock);
	}
}

/* run.json names the dataset a folder's results belong to: resuming
 * with another dataset would mix two runs. */
static int claim_out(struct bench_run *b)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *old = NULL, *j = NULL;
	int r = mkdir_p(b->out, 0755);

	if (r < 0 || asprintf(&path, "%s/run.json", b->out) < 0)
		return r < 0 ? r : -ENOMEM;
	if (load_json_file(path, BENCH_RESULT_MAX, &old) >= 0) {
		if (!streq_ptr(json_get_str(old, "dataset_path"), b->set->path))
			return -EEXIST;
		return 0;
	}
	j = json_pack("{s:s, s:s, s:s, s:I, s:b}", "format", BENCH_FORMAT, "dataset", b->set->name,
		      "dataset_path", b->set->path, "started", (json_int_t)time(NULL), "live", b->o->live);
	return j ? write_json(path, j) : -ENOMEM;
}

static int plan(struct bench_run *b)
{
	b->todo = calloc(b->set->n ? b->set->n : 1, sizeof(*b->todo));
	if (!b->todo)
		return -ENOMEM;
	for (size_t i = 0; i < b->set->n; i++) {
		const struct bench_bug *bug = &b->set->bugs[i];
		_cleanup_free_ char *p = NULL;

		if (!selected(b->o, bug->id))
			continue;
		b->total++;
		p = bug_path(b, bug, "result.json");
		if (!p)
			return -ENOMEM;
		if (access(p, F_OK) == 0)
			b->done++;
		else
			b->todo[b->n_todo++] = bug;
	}
	return 0;
}

/* Every bug runs on a tree and with a reproducer kfix can use. */
static int check_bugs(const struct bench_run *b)
{
	for (size_t i = 0; i < b->set->n; i++) {
		const struct bench_bug *bug = &b->set->bugs[i];

		if (!selected(b->o, bug->id))
			continue;
		if (!bug_src(b, bug) || !bug_kconfig(b, bug)) {
			ctl_err("bench: bug %s: no %s (give %s, or \"%s\" in the dataset)", bug->id,
				bug_src(b, bug) ? "kernel config" : "source tree", bug_src(b, bug) ? "--config" : "--src",
				bug_src(b, bug) ? "config" : "src");
			return -EINVAL;
		}
		if (!bug->repro_c && bug->repro_syz) {
			ctl_err("bench: bug %s: only a syz reproducer; kfixctl repair takes a C one", bug->id);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < b->o->n_only; i++)
		if (!bench_set_find(b->set, b->o->only[i])) {
			ctl_err("bench: no bug %s in the dataset", b->o->only[i]);
			return -EINVAL;
		}
	return 0;
}

static int run_all(struct bench_run *b)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal }, old[ARRAY_SIZE(stops)];
	pthread_t th[BENCH_JOBS_MAX];
	unsigned n = 0;

	/* a signal ignored by whoever started kfixctl (SIGINT for a shell's
	 * background job, SIGHUP under nohup) stays ignored */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stops); i++)
		if (sigaction(stops[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN)
			sigaction(stops[i], &sa, NULL);

	fprintf(stderr, "kfixctl: bench %s: %zu bugs, %zu done already, %u at a time; results in %s\n",
		b->set->name, b->total, b->done, b->o->jobs, b->out);
	pthread_mutex_init(&b->lock, NULL);
	for (; n < b->o->jobs && n < b->n_todo; n++)
		if (pthread_create(&th[n], NULL, worker, b) != 0)
			break;
	if (n == 0 && b->n_todo)
		worker(b);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&b->lock);
	for (size_t i = 0; i < ARRAY_SIZE(stops); i++)
		sigaction(stops[i], &old[i], NULL);
	return bench_stop ? -ECANCELED : b->error;
}

static int parse_run(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },      { "src", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'k' },
		{ "only", required_argument, NULL, 'O' },     { "llm", required_argument, NULL, 'l' },
		{ "live", no_argument, NULL, 'L' },	      { "record", no_argument, NULL, 'w' },
		{ "jobs", required_argument, NULL, 'j' },     { "timeout", required_argument, NULL, 't' },
		{ "max-cost", required_argument, NULL, 'M' }, { "judge", required_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, n;

	optind = 0;
	o->jobs = 1;
	o->timeout_usec = BENCH_TIMEOUT_DEFAULT;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': o->out = optarg; break;
		case 's': o->src = optarg; break;
		case 'k': o->kconfig = optarg; break;
		case 'l': o->llm = optarg; break;
		case 'L': o->live = true; break;
		case 'w': o->record = true; break;
		case 'M': o->max_cost = optarg; break;
		case 'J': o->judge = optarg; break;
		case 'O':
			if (o->n_only == BENCH_ONLY_MAX)
				return -E2BIG;
			o->only[o->n_only++] = optarg;
			break;
		case 'j':
			if (parse_int(optarg, &n) < 0 || n < 1 || n > BENCH_JOBS_MAX)
				return -EINVAL;
			o->jobs = (unsigned)n;
			break;
		case 't':
			if (parse_duration(optarg, &o->timeout_usec) < 0 || o->timeout_usec == 0)
				return -EINVAL;
			break;
		default: return -EINVAL;
		}
	}
	if (optind != argc - 1)
		return -EINVAL;
	o->dataset = argv[optind];
	if (o->max_cost) {
		char *end;
		double d = strtod(o->max_cost, &end);

		if (*end || !(d > 0) || d > 1e6)
			return -EINVAL;
	}
	return 0;
}

static int bench_run(struct ctl *c, int argc, char **argv)
{
	struct bench_opts o = {};
	_cleanup_(bench_set_freep) struct bench_set *set = NULL;
	_cleanup_json_ json_t *s = NULL;
	_cleanup_free_ char *err = NULL, *out = NULL;
	struct bench_run b = { .o = &o, .c = c };
	ssize_t n;
	int r;

	if (parse_run(argc, argv, &o) < 0) {
		ctl_err("bench: usage: kfixctl bench [--out DIR] [--src DIR] [--config FILE] [--only ID]... [--llm NAME] "
			"[--live] [--record] [--jobs N] [--timeout DURATION] [--max-cost USD] [--judge NAME] DATASET");
		return 2;
	}
	r = bench_set_load(o.dataset, &set, &err);
	if (r < 0) {
		ctl_err("bench: %s", err ? err : strerror(-r));
		return r == -EINVAL ? 2 : 1;
	}
	b.set = set;
	if (o.judge) {
		struct config *cfg;
		struct llm *probe = NULL;
		_cleanup_free_ char *jerr = NULL;

		/* a judge that cannot be made is said now, not after hours */
		if (ctl_config(c, &cfg) < 0)
			return 1;
		if (llm_new_from_config(cfg, o.judge, &probe, &jerr) < 0) {
			ctl_err("bench: --judge %s: %s", o.judge, jerr ? jerr : "no such model");
			return 2;
		}
		llm_free(probe);
		b.cfg = cfg;
	}
	if (o.out)
		out = strdup(o.out);
	else if (asprintf(&out, "kfix-bench-%s", set->name) < 0)
		out = NULL;
	n = readlink("/proc/self/exe", b.self, sizeof(b.self) - 1);
	if (!out || n <= 0)
		return 1;
	b.self[n] = '\0';
	b.out = out;
	if (check_bugs(&b) < 0)
		return 2;
	r = claim_out(&b);
	if (r == -EEXIST) {
		ctl_err("bench: %s holds a run of another dataset", out);
		return 1;
	}
	if (r >= 0)
		r = plan(&b);
	if (r >= 0)
		r = run_all(&b);
	if (r == -ECANCELED) {
		free(b.todo);
		ctl_err("bench: stopped by a signal: %zu of %zu bugs have a result in %s; "
			"the same command runs the rest", b.done, b.total, out);
		return 130;
	}
	if (r >= 0)
		r = write_summary(&b, &s);
	free(b.todo);
	if (r < 0) {
		ctl_err("bench: %s: %s", out, strerror(-r));
		return 1;
	}
	if (c->json)
		return ctl_print_json(TAKE_PTR(s));
	printf("%s: %lld bugs, %lld reproduced, %lld plausible, %lld solved, %lld equivalent; "
	       "cost %.4f; summary in %s/summary.{json,md,html}\n",
	       set->name, (long long)json_get_int(s, "bugs", 0), (long long)json_get_int(s, "reproduced", 0),
	       (long long)json_get_int(s, "plausible", 0), (long long)json_get_int(s, "solved", 0),
	       (long long)json_get_int(s, "equivalent", 0), json_number_value(json_object_get(s, "cost")), out);
	return 0;
}

/* A run's folder or its summary.json. */
static int load_summary(const char *path, json_t **ret)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&p, "%s/summary.json", path) < 0)
			return -ENOMEM;
		path = p;
	}
	return load_json_file(path, 16u << 20, ret);
}

static int bench_compare_cmd(struct ctl *c, int argc, char **argv)
{
	_cleanup_json_ json_t *a = NULL, *b = NULL, *cmp = NULL;
	struct buf out = BUF_INIT(16u << 20);
	int r;

	if (argc != 3) {
		ctl_err("bench: usage: kfixctl bench compare A B");
		return 2;
	}
	if (load_summary(argv[1], &a) < 0 || load_summary(argv[2], &b) < 0 ||
	    !streq_ptr(json_get_str(a, "format"), "kfix-bench-summary-1") ||
	    !streq_ptr(json_get_str(b, "format"), "kfix-bench-summary-1")) {
		ctl_err("bench: compare: %s and %s must be benchmark runs (a folder or its summary.json)",
			argv[1], argv[2]);
		return 1;
	}
	r = bench_compare(a, b, &cmp);
	if (r >= 0 && c->json)
		return ctl_print_json(TAKE_PTR(cmp));
	if (r >= 0)
		r = bench_render_compare(cmp, &out);
	if (r >= 0)
		fwrite(out.data, 1, out.len, stdout);
	buf_free(&out);
	return r < 0 ? 1 : 0;
}

int ctl_bench(struct ctl *c, int argc, char **argv)
{
	if (argc > 1 && streq(argv[1], "compare"))
		return bench_compare_cmd(c, argc - 1, argv + 1);
	return bench_run(c, argc, argv);
}
