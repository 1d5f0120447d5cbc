/* Talking to the model for the workflow steps.  A step is a
 * conversation: the model may call exploration and execution tools as
 * often as the limits allow before it calls one of the step's answer
 * tools.  Every model call and every tool call is an event. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "explore.h"
#include "llm-internal.h"
#include "prompt.h"
#include "repair-internal.h"

void repair_set_var(struct repair_ctx *c, const char *key, const char *value)
{
	json_object_set_new(c->vars, key, json_str_or_null(value ?: ""));
}

void repair_progress(struct repair_ctx *c, const char *step, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	if (!c->p->progress)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		c->p->progress(c->p->progress_ud, step, msg);
}

int64_t repair_event(struct repair_ctx *c, const char *step, const char *kind,
		     uint64_t start, json_t *input, json_t *output,
		     const char *verdict, const char *error)
{
	struct traj_event e = {
		.step = step, .kind = kind, .parent = c->run_event, .start_usec = start,
		.duration_usec = start ? trajectory_now() - start : 0,
		.input = input, .output = output, .verdict = verdict, .error = error,
	};
	int64_t id = 0;

	(void)trajectory_add(c->traj, &e, &id);
	json_decref(input);
	json_decref(output);
	return id;
}

static bool offered(const char *const *names, const char *name)
{
	for (const char *const *n = names; *n; n++)
		if (streq(*n, name))
			return true;
	return false;
}

#define EXPERT_STEP "expert"
#define EXPERT_QUESTION_MAX 4000

static json_t *pick_tools(struct repair_ctx *c, const char *const *names)
{
	json_t *out = json_array(), *t;
	size_t i;

	for (const char *const *n = names; *n; n++)
		json_array_foreach(c->tools, i, t)
			if (streq_ptr(json_get_str(t, "name"), *n))
				json_array_append(out, t);
	return out;
}

/* The step's answer tools first (a model that must answer is shown only
 * those), then what it may look at and run on the way. */
static json_t *step_tools(struct repair_ctx *c, const char *step, const char *const *names,
			  bool answer_only)
{
	json_t *out = pick_tools(c, names);

	if (answer_only || !out)
		return out;
	if (c->ts->explore) {
		_cleanup_json_ json_t *x = explore_tool_defs();

		json_array_extend(out, x);
	}
	/* the expert explores; it does not ask another expert */
	if (c->ts->explore && !streq(step, EXPERT_STEP)) {
		static const char *const expert[] = { "ask_expert", NULL };
		_cleanup_json_ json_t *x = pick_tools(c, expert);

		json_array_extend(out, x);
	}
	{
		_cleanup_json_ json_t *x = repair_exec_defs(c, step);

		json_array_extend(out, x);
	}
	return out;
}

/* One state per step: what the loop judge and the limits look at. */
struct convo {
	const char *step;
	const char *const *names;
	json_t *req;
	unsigned turns;
	size_t answer_bytes;
	json_t *calls_seen;	/* call key -> times made */
	json_t *answers_seen;	/* digest of an answer -> 1 */
	unsigned stale;
	const char *stop;	/* why the step must answer now */
};

static void convo_clear(struct convo *v)
{
	json_decref(v->req);
	json_decref(v->calls_seen);
	json_decref(v->answers_seen);
}

static char *digest_hex(const char *s)
{
	/* FNV-1a: the loop judge only compares answers of one step */
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return strdup_printf("%016llx", (unsigned long long)h);
}

/* Cut at a line end within max bytes, saying so. */
static char *bounded_answer(const char *text, size_t max)
{
	size_t n = strlen(text), cut;
	char *out;

	if (n <= max)
		return strdup(text);
	cut = max;
	while (cut > 0 && text[cut - 1] != '\n')
		cut--;
	if (cut == 0)
		cut = max;
	cut = utf8_cut(text, n, cut);
	if (asprintf(&out, "%.*s[answer cut at %zu of %zu bytes: ask for less]\n", (int)cut,
		     text, cut, n) < 0)
		return NULL;
	return out;
}

/* When the conversation grows past the budget, the oldest tool answers
 * give way to a note; the latest few stay whole. */
static void compress(struct repair_ctx *c, struct convo *v)
{
	json_t *msgs = json_object_get(v->req, "messages"), *m;
	size_t i, n_tool = 0, seen = 0, dropped = 0;
	_cleanup_free_ char *dump = json_dumps(v->req, JSON_COMPACT);
	size_t size = dump ? strlen(dump) : 0;

	if (size <= c->p->turns.context)
		return;
	json_array_foreach(msgs, i, m)
		n_tool += streq_ptr(json_get_str(m, "role"), "tool");
	json_array_foreach(msgs, i, m) {
		const char *content = json_get_str(m, "content");
		size_t len = content ? strlen(content) : 0;
		char note[160];

		if (!streq_ptr(json_get_str(m, "role"), "tool") || ++seen + 2 > n_tool)
			continue;
		if (size <= c->p->turns.context)
			break;
		if (len < 200 || startswith(content, "[dropped"))
			continue;
		snprintf(note, sizeof(note),
			 "[dropped to save context: this answer had %zu bytes; call again if you "
			 "need it]", len);
		size -= len - strlen(note);
		json_object_set_new(m, "content", json_string(note));
		dropped++;
	}
	if (dropped)
		repair_event(c, v->step, "guardrail", 0, NULL,
			     json_pack("{s:i, s:i}", "dropped", (int)dropped, "bytes", (int)size),
			     "context compressed", NULL);
}

/* A rerun's prefix: the earlier run's answer to this call, which must
 * have been made with the same prompt and main tool at the same turn.
 * It costs nothing now: no tokens are counted. */
static int replay_call(struct repair_ctx *c, struct convo *v, const char *prompt,
		       struct llm_response **ret)
{
	const json_t *e, *in, *out;
	struct llm_response *resp;
	int r = repair_replay_next(c, "llm.call", v->step, &e);

	if (r < 0)
		return r;
	in = json_object_get(e, "input");
	if (!streq_ptr(json_get_str(in, "prompt"), prompt) ||
	    !streq_ptr(json_get_str(in, "tool"), v->names[0]) ||
	    json_get_int(in, "turn", 0) != (json_int_t)v->turns + 1) {
		if (!c->rerun_error)
			c->rerun_error = strdup_printf("rerun: step %s asked prompt %s (turn %u) where the "
						       "earlier run's event %lld asked %s", v->step, prompt,
						       v->turns + 1, (long long)json_get_int(e, "id", 0),
						       json_get_str(in, "prompt") ?: "?");
		return -ESTALE;
	}
	if (json_get_str(e, "error"))
		return -EIO;
	out = json_object_get(e, "output");
	resp = calloc(1, sizeof(*resp));
	if (!resp)
		return -ENOMEM;
	resp->text = json_get_strdup(out, "text");
	resp->tool_calls = json_deep_copy(json_object_get(out, "tool_calls") ?: json_array());
	resp->replayed = true;
	if (!resp->tool_calls) {
		llm_response_free(resp);
		return -ENOMEM;
	}
	*ret = resp;
	return 0;
}

static int model_call(struct repair_ctx *c, struct convo *v, const char *prompt,
		      const char *user, struct llm_response **ret, char **ret_error)
{
	_cleanup_(llm_response_freep) struct llm_response *resp = NULL;
	_cleanup_free_ char *err = NULL;
	uint64_t t0 = trajectory_now();
	struct traj_event e = { .step = v->step, .kind = "llm.call", .parent = c->run_event,
				.start_usec = t0 };
	_cleanup_json_ json_t *in = json_pack("{s:s, s:s, s:s, s:i}", "prompt", prompt,
					      "tool", v->names[0], "user", user, "turn",
					      (int)v->turns + 1);
	_cleanup_json_ json_t *out = NULL;
	json_t *call;
	int r;

	compress(c, v);
	if (repair_replaying(c)) {
		r = replay_call(c, v, prompt, &resp);
		if (r == -ESTALE) {
			*ret_error = strdup(c->rerun_error ?: "rerun: the run left the record");
			return r;
		}
		json_object_set_new(in, "replayed", json_true());
	} else
		r = llm_chat(c->llm, v->req, &resp, &err);
	e.duration_usec = trajectory_now() - t0;
	e.input = in;
	v->turns++;
	c->turns++;
	c->sum->llm_calls++;
	if (r < 0) {
		e.error = err ?: strerror(-r);
		(void)trajectory_add(c->traj, &e, NULL);
		*ret_error = strdup_printf("model call for %s failed: %s", v->step, err ?: strerror(-r));
		return r;
	}
	out = json_pack("{s:s?, s:O}", "text", resp->text, "tool_calls", resp->tool_calls);
	e.output = out;
	e.tokens_in = resp->input_tokens;
	e.tokens_out = resp->output_tokens;
	e.cost = resp->cost;
	c->sum->tokens_in += resp->input_tokens;
	c->sum->tokens_out += resp->output_tokens;
	c->sum->cost += resp->cost;
	search_spend(c->search, resp->input_tokens + resp->output_tokens, resp->cost);
	call = json_array_get(resp->tool_calls, 0);
	e.verdict = call ? json_get_str(call, "name") : "no tool call";
	(void)trajectory_add(c->traj, &e, NULL);
	*ret = TAKE_PTR(resp);
	return 0;
}

/* The code expert: a conversation of its own, with the read-only tools,
 * on the question asked; its answer is the tool's.  Its calls are events
 * of the "expert" step and count against the repair's turns. */
static int ask_expert(struct repair_ctx *c, const json_t *args, char **ret)
{
	static const char *const names[] = { "expert_answer", NULL };
	_cleanup_free_ char *tool = NULL, *err = NULL;
	_cleanup_json_ json_t *ans = NULL;
	const char *q = json_get_str(args, "question");
	int r;

	if (!q || !*q || strlen(q) > EXPERT_QUESTION_MAX) {
		*ret = strdup_printf("error: ask_expert needs a question of at most %d bytes",
				     EXPERT_QUESTION_MAX);
		return *ret ? 0 : -ENOMEM;
	}
	repair_set_var(c, "question", q);
	r = repair_converse(c, EXPERT_STEP, "expert", names, NULL, NULL, &tool, &ans, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		*ret = strdup_printf("error: the expert gave no answer (%s)", err ?: strerror(-r));
	else
		*ret = strdup_printf("%s", json_get_str(ans, "answer") ?: "(the expert said nothing)");
	return *ret ? 0 : -ENOMEM;
}

/* An exploration or execution call; its answer (bounded) for the model. */
static int tool_answer(struct repair_ctx *c, struct convo *v, const char *name,
		       const json_t *args, char **ret)
{
	_cleanup_free_ char *raw = NULL, *key = NULL, *args_s = NULL, *dig = NULL;
	uint64_t t0 = trajectory_now();
	json_int_t times;
	int r = -ENOENT;

	args_s = json_dumps(args ?: json_null(), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!args_s || asprintf(&key, "%s %s", name, args_s) < 0)
		return -ENOMEM;
	times = json_integer_value(json_object_get(v->calls_seen, key)) + 1;
	json_object_set_new(v->calls_seen, key, json_integer(times));
	if (times > c->p->turns.repeats) {
		v->stop = "the same call was made again and again";
		raw = strdup_printf("error: %s was called %lld times with these arguments; its answer "
				    "does not change", name, (long long)times);
	} else if (v->answer_bytes >= c->p->turns.step_answers) {
		v->stop = "the step's tool answers reached their size limit";
		raw = strdup_printf("error: this step's tool answers reached %zu bytes", v->answer_bytes);
	} else if (streq(name, "ask_expert") && c->ts->explore && !streq(v->step, EXPERT_STEP)) {
		r = ask_expert(c, args, &raw);
		if (r < 0)
			return r;
	} else {
		if (c->ts->explore)
			r = c->ts->explore(c->ts->ud, name, args, &raw);
		if (r == -ENOENT)
			r = repair_exec_call(c, v->step, name, args, &raw);
		if (r == -ENOENT)
			raw = strdup_printf("error: there is no tool %s in this step", name);
		else if (r < 0)
			return r;
	}
	if (!raw || !(*ret = bounded_answer(raw, c->p->turns.tool_answer)))
		return -ENOMEM;
	v->answer_bytes += strlen(*ret);
	c->sum->tool_calls++;
	json_object_set_new(c->tool_counts, name,
			    json_integer(json_integer_value(json_object_get(c->tool_counts, name)) + 1));
	dig = digest_hex(*ret);
	if (!dig)
		return -ENOMEM;
	r = json_object_get(v->answers_seen, dig) ? 1 : 0;
	json_object_set_new(v->answers_seen, dig, json_true());
	repair_event(c, v->step, "tool.explore", t0, json_pack("{s:s, s:O?}", "tool", name,
		     "args", args), json_pack("{s:s}", "answer", *ret), name, NULL);
	return r;	/* 1: nothing new */
}

static void push(struct convo *v, json_t *msg)
{
	json_array_append_new(json_object_get(v->req, "messages"), msg);
}

/* The model's turn was spent: say why it must answer now, and offer the
 * answer tools only. */
static int force_answer(struct repair_ctx *c, struct convo *v)
{
	json_t *tools = step_tools(c, v->step, v->names, true);

	if (!tools)
		return -ENOMEM;
	repair_event(c, v->step, "guardrail", 0, NULL, json_pack("{s:i}", "turns", (int)v->turns),
		     "must answer", v->stop);
	json_object_set_new(v->req, "tools", tools);
	if (!v->names[1])
		json_object_set_new(v->req, "tool_choice", json_string(v->names[0]));
	push(v, json_pack("{s:s, s:s+}", "role", "user", "content", "Stop exploring (",
			  v->stop, "). Answer now by calling one of the offered tools."));
	return 0;
}

/* Handles the calls of one model turn.  1 when an answer tool ended the
 * step (ret_* set), 0 to go on. */
static int handle_calls(struct repair_ctx *c, struct convo *v, const struct llm_response *resp,
			repair_act_fn act, void *ud, char **ret_tool, json_t **ret_args)
{
	json_t *call;
	size_t i;
	bool all_stale = true;
	int r;

	push(v, json_pack("{s:s, s:s?, s:O}", "role", "assistant", "content", resp->text,
			  "tool_calls", resp->tool_calls));
	json_array_foreach(resp->tool_calls, i, call) {
		const char *name = json_get_str(call, "name") ?: "";
		const json_t *args = json_object_get(call, "arguments");
		_cleanup_free_ char *answer = NULL;

		if (offered(v->names, name)) {
			r = act ? act(c, name, args, ud, &answer) : 0;
			if (r < 0)
				return r;
			if (r == 0) {
				*ret_tool = strdup(name);
				*ret_args = json_incref((json_t *)args);
				return *ret_tool ? 1 : -ENOMEM;
			}
			/* sent back: the feedback is news by definition */
			all_stale = false;
		} else if (v->stop) {
			answer = strdup("error: not run; answer the step now");
		} else {
			r = tool_answer(c, v, name, args, &answer);
			if (r < 0)
				return r;
			all_stale &= r == 1;
		}
		if (!answer)
			return -ENOMEM;
		push(v, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
				  json_get_str(call, "id") ?: "", "content", answer));
	}
	v->stale = all_stale ? v->stale + 1 : 0;
	if (!v->stop && v->stale >= c->p->turns.stale)
		v->stop = "several turns in a row brought nothing new";
	return 0;
}

static int convo_start(struct repair_ctx *c, struct convo *v, const char *prompt,
		       char **ret_user, char **ret_error)
{
	_cleanup_free_ char *system = NULL, *user = NULL;
	bool answer_only;
	int r;

	repair_rerun_step(c, v->step);
	r = prompt_render(c->p->prompts_dir, "system", c->vars, &system);
	if (r >= 0)
		r = prompt_render(c->p->prompts_dir, prompt, c->vars, &user);
	if (r < 0) {
		*ret_error = strdup_printf("prompt %s: %s", prompt, strerror(-r));
		return r;
	}
	/* a rerun's directive, in every step from where it went live */
	if (c->rerun && !repair_replaying(c) && c->p->directive) {
		char *with = strdup_printf("%s\n\nA directive from the operator who reran this repair "
					   "from step %s:\n%s\n", user, c->p->rerun_from ?: "run",
					   c->p->directive);

		if (!with)
			return -ENOMEM;
		free(user);
		user = with;
	}
	if (c->turns >= c->p->turns.job_turns)
		v->stop = "the repair's turns are spent";
	{
		_cleanup_json_ json_t *exec = repair_exec_defs(c, v->step);

		answer_only = v->stop || (!c->ts->explore && json_array_size(exec) == 0);
	}
	v->req = json_pack("{s:s, s:[{s:s, s:s}], s:o}", "system", system, "messages",
			   "role", "user", "content", user, "tools",
			   step_tools(c, v->step, v->names, answer_only));
	v->calls_seen = json_object();
	v->answers_seen = json_object();
	if (!v->req || !v->calls_seen || !v->answers_seen)
		return -ENOMEM;
	if (answer_only && !v->names[1])
		json_object_set_new(v->req, "tool_choice", json_string(v->names[0]));
	else
		json_object_set_new(v->req, "tool_required", json_true());
	*ret_user = TAKE_PTR(user);
	return 0;
}

int repair_converse(struct repair_ctx *c, const char *step, const char *prompt,
		    const char *const *names, repair_act_fn act, void *ud, char **ret_tool,
		    json_t **ret_args, char **ret_error)
{
	_cleanup_(convo_clear) struct convo v = { .step = step, .names = names };
	_cleanup_free_ char *user = NULL;
	unsigned prose = 0, after_force = 0;
	bool forced;
	int r;

	r = convo_start(c, &v, prompt, &user, ret_error);
	if (r < 0)
		return r;
	forced = v.stop != NULL;
	/* a forced answer gets the call and one reminder */
	while (after_force < 2) {
		_cleanup_(llm_response_freep) struct llm_response *resp = NULL;

		if (!v.stop && v.turns + 1 >= c->p->turns.step_turns)
			v.stop = "the step's turns are spent";
		if (!v.stop && c->turns + 1 >= c->p->turns.job_turns)
			v.stop = "the repair's turns are spent";
		if (v.stop && !forced) {
			r = force_answer(c, &v);
			if (r < 0)
				return r;
			forced = true;
		}
		r = model_call(c, &v, prompt, user, &resp, ret_error);
		if (r < 0)
			return r;
		after_force += forced;
		if (json_array_size(resp->tool_calls) == 0) {
			/* one reminder when the model answers in prose */
			if (++prose > 1)
				break;
			push(&v, json_pack("{s:s, s:s}", "role", "assistant", "content",
					   resp->text ?: "(no answer)"));
			push(&v, json_pack("{s:s, s:s}", "role", "user", "content",
					   "Answer by calling one of the offered tools."));
			continue;
		}
		prose = 0;
		r = handle_calls(c, &v, resp, act, ud, ret_tool, ret_args);
		if (r < 0)
			return r;
		if (r > 0)
			return 0;
	}
	*ret_error = strdup_printf("the model did not call %s", names[0]);
	return -EBADMSG;
}

int repair_ask(struct repair_ctx *c, const char *step, const char *prompt,
	       const char *const *names, char **ret_tool, json_t **ret_args,
	       char **ret_error)
{
	return repair_converse(c, step, prompt, names, NULL, NULL, ret_tool, ret_args, ret_error);
}
