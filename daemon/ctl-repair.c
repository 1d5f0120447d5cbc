/* kfixctl repair: one repair in the foreground, with live progress. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "agent/llm.h"
#include "agent/repair.h"
#include "agent/toolstack.h"
#include "agent/trajectory.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "repro/report.h"
#include "store.h"

#define REPORT_MAX (16u * 1024 * 1024)
#define DIRECTIVE_MAX 4096

struct repair_args {
	const char *tree, *src, *commit, *kconfig, *repro, *report, *hints, *llm;
	const char *record, *replay, *out, *syzbot, *agent_conf;
	const char *rerun, *from, *directive;
	double max_cost;
};

static void progress(void *ud, const char *step, const char *msg)
{
	uint64_t *t0 = ud;
	_cleanup_free_ char *esc = str_escape(msg, strlen(msg), 300);

	fprintf(stderr, "[%7.1fs] %-10s %s\n", (double)(clock_mono_usec() - *t0) / 1e6, step, esc ?: "");
}

static int parse(int argc, char **argv, struct repair_args *a)
{
	static const struct option opts[] = {
		{ "tree", required_argument, NULL, 't' }, { "src", required_argument, NULL, 's' },
		{ "commit", required_argument, NULL, 'C' }, { "config", required_argument, NULL, 'k' },
		{ "repro", required_argument, NULL, 'r' }, { "report", required_argument, NULL, 'R' },
		{ "hint-file", required_argument, NULL, 'H' }, { "llm", required_argument, NULL, 'l' },
		{ "record", required_argument, NULL, 'w' }, { "replay", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' }, { "syzbot-id", required_argument, NULL, 'i' },
		{ "agent-conf", required_argument, NULL, 'a' }, { "max-cost", required_argument, NULL, 'M' },
		{ "rerun", required_argument, NULL, 'X' }, { "from", required_argument, NULL, 'F' },
		{ "directive", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 't': a->tree = optarg; break;
		case 's': a->src = optarg; break;
		case 'C': a->commit = optarg; break;
		case 'k': a->kconfig = optarg; break;
		case 'r': a->repro = optarg; break;
		case 'R': a->report = optarg; break;
		case 'H': a->hints = optarg; break;
		case 'l': a->llm = optarg; break;
		case 'w': a->record = optarg; break;
		case 'p': a->replay = optarg; break;
		case 'o': a->out = optarg; break;
		case 'i': a->syzbot = optarg; break;
		case 'a': a->agent_conf = optarg; break;
		case 'X': a->rerun = optarg; break;
		case 'F': a->from = optarg; break;
		case 'D': a->directive = optarg; break;
		case 'M': {
			char *end;

			a->max_cost = strtod(optarg, &end);
			if (*end || !(a->max_cost > 0) || a->max_cost > 1e6)
				return -EINVAL;
			break;
		}
		default: return -EINVAL;
		}
	}
	if (optind < argc || !a->report || (!a->src == !a->tree) || (a->record && a->replay) ||
	    !a->rerun != !a->from || (a->directive && !a->rerun) ||
	    (a->directive && strlen(a->directive) > DIRECTIVE_MAX)) {
		ctl_err("usage: repair --tree NAME|--src DIR --commit REV --config FILE --repro FILE "
			"--report FILE [--hint-file PATH] [--llm NAME] [--record FILE|--replay FILE] "
			"[--out DIR] [--syzbot-id ID] [--agent-conf FILE] [--max-cost USD] "
			"[--rerun DIR|FILE --from STEP|EVENT [--directive TEXT]]");
		return -EINVAL;
	}
	return 0;
}

/* --rerun: the earlier run's trajectory (its output folder or the file),
 * and the step --from names. */
static int load_rerun(const struct repair_args *a, json_t **ret_events, char **ret_step)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	_cleanup_json_ json_t *ev = NULL;
	struct stat st;
	int r;

	if (stat(a->rerun, &st) == 0 && S_ISDIR(st.st_mode))
		r = asprintf(&path, "%s/trajectory.jsonl", a->rerun) < 0 ? -ENOMEM : 0;
	else
		r = (path = strdup(a->rerun)) ? 0 : -ENOMEM;
	if (r >= 0)
		r = trajectory_load(path, &ev);
	if (r < 0 || json_array_size(ev) == 0) {
		ctl_err("--rerun: %s: %s", path ? path : a->rerun, r < 0 ? strerror(-r) : "no events");
		return r < 0 ? r : -ENOENT;
	}
	r = repair_rerun_resolve(ev, a->from, ret_step, &err);
	if (r < 0) {
		ctl_err("--from: %s", err ? err : strerror(-r));
		return r;
	}
	*ret_events = TAKE_PTR(ev);
	return 0;
}

struct overlay {
	struct config *cfg;
	int r;
};

static int overlay_key(const char *section, const char *sub, const char *key, const char *value,
		       enum config_type type, void *ud)
{
	struct overlay *o = ud;

	(void)type;
	if (!streq(section, "agent") || sub) {
		ctl_err("--agent-conf: only [agent] keys may be set, not [%s] %s", section, key);
		return o->r = -EINVAL, 1;
	}
	o->r = config_set(o->cfg, section, NULL, key, value);
	return o->r < 0;
}

/* --agent-conf: [agent] keys of one repair (a benchmark bug's) on top of
 * the configuration. */
static int apply_agent_conf(const char *path, struct config **cfg)
{
	_cleanup_free_ char *err = NULL;
	struct config *extra = NULL;
	struct overlay o = {};
	int r;

	if (!*cfg) {
		ctl_err("--agent-conf: there is no configuration file to add the keys to");
		return -ENOENT;
	}
	r = config_load(path, &extra, &err);
	if (r < 0) {
		ctl_err("--agent-conf: %s", err ? err : strerror(-r));
		return r;
	}
	o.cfg = *cfg;
	config_each(extra, overlay_key, &o);
	config_free(extra);
	return o.r;
}

/* The command's settings beyond repair_params, read before it starts. */
struct repair_cmd_conf {
	struct llm_agent_conf llm;
	char *cache_dir;	/* NULL: no configuration */
	char *prompts_dir;	/* NULL: the built-in prompts */
};

static void repair_cmd_conf_free(struct repair_cmd_conf *rc)
{
	llm_agent_conf_free(&rc->llm);
	free(rc->cache_dir);
	free(rc->prompts_dir);
	*rc = (struct repair_cmd_conf){ 0 };
}

static int repair_cmd_conf_from_config(const struct config *cfg, struct repair_cmd_conf *ret)
{
	_cleanup_(repair_cmd_conf_free) struct repair_cmd_conf rc = { 0 };
	int r;

	r = llm_agent_conf_from_config(cfg, &rc.llm);
	if (r < 0)
		return r;
	/* unset paths stay NULL: the command does without them */
	(void)config_get_path(cfg, "kfix", NULL, "cache-dir", &rc.cache_dir);
	(void)config_get_path(cfg, "agent", NULL, "prompts-dir", &rc.prompts_dir);
	*ret = rc;
	rc = (struct repair_cmd_conf){ 0 };
	return 0;
}

static int make_llm(struct ctl *c, const struct repair_args *a, struct config *cfg,
		    const char *configured, struct llm **ret)
{
	_cleanup_free_ char *err = NULL;
	_cleanup_strv_ char **names = NULL;
	const char *name = a->llm ?: configured;
	int r;

	if (a->replay && !name && (!cfg || config_subsections(cfg, "llm", &names) < 0 ||
				   !names || !names[0])) {
		r = llm_new_for_replay(a->replay, ret);
		if (r < 0)
			ctl_err("cannot replay %s: %s", a->replay, strerror(-r));
		return r;
	}
	if (!cfg) {
		ctl_err("no configuration: an [llm \"NAME\"] section is needed (or --replay)");
		return -ENOENT;
	}
	r = llm_new_from_config(cfg, name, ret, &err);
	if (r < 0) {
		ctl_err("%s", err ?: strerror(-r));
		return r;
	}
	if (a->replay && (r = llm_replay(*ret, a->replay)) < 0)
		ctl_err("cannot replay %s: %s", a->replay, strerror(-r));
	else if (a->record && (r = llm_record(*ret, a->record)) < 0)
		ctl_err("cannot record to %s: %s", a->record, strerror(-r));
	return r;
}

static int src_from_tree(const char *cache, const char *name, char **ret)
{
	/* a configured tree's worktree is prepared by kfixd's tree jobs */
	if (!cache)
		return -ENOENT;
	return asprintf(ret, "%s/worktrees/%s", cache, name) < 0 ? -ENOMEM : 0;
}

static void print_summary(struct ctl *c, const struct repair_summary *s, const char *out,
			  bool replay)
{
	if (c->json) {
		_cleanup_json_ json_t *j = json_pack("{s:s, s:s?, s:s, s:i, s:i, s:I, s:I, s:f, s:b}",
			"result", repair_result_name(s->result), "reason", s->reason, "out", out,
			"attempts", s->attempts, "llm_calls", s->llm_calls,
			"tokens_in", (json_int_t)s->tokens_in, "tokens_out", (json_int_t)s->tokens_out,
			"cost", s->cost, "replay", replay);

		json_print(j);
		return;
	}
	printf("result:    %s\n", repair_result_name(s->result));
	ctl_print_escaped("reason:   ", s->reason ?: "");
	printf("attempts:  %u\nllm calls: %u%s\ntokens:    %llu in, %llu out\ncost:      %.4f\n",
	       s->attempts, s->llm_calls, replay ? " (replayed from a cassette, no network)" : "",
	       (unsigned long long)s->tokens_in, (unsigned long long)s->tokens_out, s->cost);
	printf("output:    %s\n", out);
	if (s->commit_message)
		printf("\n%s", s->commit_message);
}

int ctl_repair(struct ctl *c, int argc, char **argv)
{
	struct repair_args a = {};
	_cleanup_(llm_freep) struct llm *llm = NULL;
	_cleanup_(toolstack_freep) struct toolstack *ts = NULL;
	_cleanup_(repair_summary_freep) struct repair_summary *sum = NULL;
	_cleanup_free_ char *report = NULL, *hints = NULL, *err = NULL, *out = NULL;
	_cleanup_free_ char *scratch = NULL, *src = NULL, *kb = NULL, *state = NULL, *from = NULL;
	_cleanup_json_ json_t *rerun = NULL;
	_cleanup_(repair_cmd_conf_free) struct repair_cmd_conf rc = { 0 };
	struct config *cfg = NULL;
	struct repair_params p;
	_cleanup_(report_freep) struct report *rep = NULL;
	struct toolstack_opts to;
	uint64_t t0 = clock_mono_usec();
	size_t rlen = 0;
	int r;

	if (parse(argc, argv, &a) < 0)
		return 2;
	if (access(c->config_path, F_OK) == 0 && ctl_config(c, &cfg) < 0)
		return 1;
	if (a.agent_conf && apply_agent_conf(a.agent_conf, &cfg) < 0)
		return 1;
	repair_params_default(&p);
	if (cfg && (repair_params_from_config(cfg, &p) < 0 ||
		    repair_cmd_conf_from_config(cfg, &rc) < 0)) {
		ctl_err("invalid [agent] settings");
		return 1;
	}
	if (a.max_cost > 0)
		p.limits.max_cost = a.max_cost;
	r = read_file_bounded(a.report, REPORT_MAX, &report, &rlen);
	if (r < 0 || (a.hints && (r = read_file_bounded(a.hints, 64 * 1024, &hints, NULL)) < 0)) {
		ctl_err("cannot read the report or hints: %s", strerror(-r));
		return 1;
	}
	if (a.tree && src_from_tree(rc.cache_dir, a.tree, &src) < 0) {
		ctl_err("tree %s: no cache-dir configured", a.tree);
		return 1;
	}
	if (a.out)
		out = strdup(a.out);
	else if (asprintf(&out, "kfix-repair-%lld", (long long)time(NULL)) < 0)
		out = NULL;
	if (!out || asprintf(&scratch, "%s/scratch", out) < 0 || mkdir_p(scratch, 0755) < 0) {
		ctl_err("cannot create the output folder");
		return 1;
	}
	if (cfg && config_state_path(cfg, NULL, &state) >= 0 && access(state, W_OK) == 0 &&
	    config_state_path(cfg, STATE_KNOWLEDGE, &kb) < 0)
		return 1;
	/* the report's title tells the toolstack a leak from a crash (none:
	 * the repair itself says what is wrong with the report) */
	(void)report_parse(report, rlen, &rep);
	to = (struct toolstack_opts){ .src = src ?: a.src, .commit = a.commit, .scratch = scratch,
				      .kconfig = a.kconfig, .repro = a.repro, .cfg = cfg, .tree = a.tree,
				      .title = rep ? report_title(rep) : NULL };
	r = toolstack_new(&to, &ts, &err);
	if (r < 0) {
		ctl_err("%s", err ?: strerror(-r));
		return 1;
	}
	if (make_llm(c, &a, cfg, rc.llm.llm, &llm) < 0)
		return 1;
	p.report = report;
	p.report_len = rlen;
	p.src_dir = src ?: a.src;
	p.base_commit = toolstack_base(ts) ?: a.commit;
	p.syzbot_id = a.syzbot;
	p.hints = hints;
	p.have_reproducer = a.repro != NULL;
	p.out_dir = out;
	p.kb_path = kb;
	/* $KFIX_PROMPTS_DIR wins over [agent] prompts-dir (tests) */
	if (!getenv("KFIX_PROMPTS_DIR") && rc.prompts_dir)
		p.prompts_dir = rc.prompts_dir;
	p.progress = progress;
	p.progress_ud = &t0;
	if (a.rerun && load_rerun(&a, &rerun, &from) < 0)
		return 1;
	p.rerun_events = rerun;
	p.rerun_from = from;
	p.directive = a.directive;
	if (llm_is_replay(llm))
		fprintf(stderr, "kfixctl: replaying the model from %s: no model is called\n", a.replay);
	r = repair_run(&p, toolstack_ops(ts), llm, &sum, &err);
	if (r < 0) {
		_cleanup_free_ char *esc = str_escape(err ?: strerror(-r), strlen(err ?: strerror(-r)), 500);

		ctl_err("repair failed: %s (trajectory in %s)", esc ?: "", out);
		return 1;
	}
	print_summary(c, sum, out, llm_is_replay(llm));
	return sum->result == REPAIR_VALIDATED ? 0 : 1;
}
