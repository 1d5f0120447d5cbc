/* Writing, reading and showing trajectories; see trajectory.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "trajectory.h"

struct trajectory {
	FILE *f;
	int64_t next_id;
};

uint64_t trajectory_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int64_t last_id(FILE *f)
{
	char line[512];
	int64_t id = 0;

	/* ids continue across reopenings (a resumed job appends) */
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		const char *p = startswith(line, "{\"id\":");

		if (p)
			id = MAX(id, strtoll(p, NULL, 10));
	}
	return id;
}

int trajectory_open(const char *path, struct trajectory **ret)
{
	struct trajectory *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->f = fopen(path, "a+e");
	if (!t->f) {
		int r = negerrno();

		free(t);
		return r;
	}
	t->next_id = last_id(t->f) + 1;
	*ret = t;
	return 0;
}

void trajectory_close(struct trajectory *t)
{
	if (!t)
		return;
	fclose(t->f);
	free(t);
}

/* A copy of j with long strings cut, so one huge prompt or build log
 * cannot make the trajectory unreadable. */
static json_t *bounded_copy(const json_t *j, int depth)
{
	if (depth > 16)
		return json_string("(nested too deep)");
	if (json_is_string(j) && json_string_length(j) > TRAJECTORY_TEXT_MAX) {
		char *s = NULL;
		json_t *out;

		if (asprintf(&s, "%.*s\n[... %zu bytes cut]", (int)TRAJECTORY_TEXT_MAX,
			     json_string_value(j), json_string_length(j) - TRAJECTORY_TEXT_MAX) < 0)
			return json_null();
		out = json_str_or_null(s);
		free(s);
		return out;
	}
	if (json_is_object(j)) {
		json_t *o = json_object(), *v;
		const char *k;

		json_object_foreach((json_t *)j, k, v)
			json_object_set_new(o, k, bounded_copy(v, depth + 1));
		return o;
	}
	if (json_is_array(j)) {
		json_t *a = json_array(), *v;
		size_t i;

		json_array_foreach(j, i, v)
			json_array_append_new(a, bounded_copy(v, depth + 1));
		return a;
	}
	return json_deep_copy(j);
}

static void iso_time(uint64_t usec, char *buf, size_t n)
{
	time_t s = (time_t)(usec / 1000000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(usec % 1000000 / 1000));
}

int trajectory_add(struct trajectory *t, const struct traj_event *e, int64_t *ret_id)
{
	_cleanup_json_ json_t *o = json_object();
	_cleanup_free_ char *line = NULL;
	uint64_t start = e->start_usec ?: trajectory_now();
	char ts[80];
	int64_t id = t->next_id++;

	iso_time(start, ts, sizeof(ts));
	/* "id" first: last_id() relies on it */
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "parent", e->parent ? json_integer(e->parent) : json_null());
	json_object_set_new(o, "step", json_string(e->step ?: ""));
	json_object_set_new(o, "kind", json_string(e->kind ?: ""));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "start_us", json_integer((json_int_t)start));
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)(e->duration_usec / 1000)));
	if (e->input)
		json_object_set_new(o, "input", bounded_copy(e->input, 0));
	if (e->output)
		json_object_set_new(o, "output", bounded_copy(e->output, 0));
	if (e->tokens_in || e->tokens_out)
		json_object_set_new(o, "tokens", json_pack("{s:I, s:I}", "in",
			(json_int_t)e->tokens_in, "out", (json_int_t)e->tokens_out));
	if (e->cost > 0)
		json_object_set_new(o, "cost", json_real(e->cost));
	if (e->verdict)
		json_object_set_new(o, "verdict", json_string(e->verdict));
	if (e->error)
		json_object_set_new(o, "error", json_string(e->error));
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!line)
		return -ENOMEM;
	if (fprintf(t->f, "%s\n", line) < 0 || fflush(t->f) != 0)
		return negerrno();
	if (ret_id)
		*ret_id = id;
	return 0;
}

int trajectory_load(const char *path, json_t **ret_events)
{
	_cleanup_free_ char *data = NULL;
	json_t *arr = json_array();
	char *line, *save = NULL;
	int r;

	r = read_file_bounded(path, TRAJECTORY_FILE_MAX, &data, NULL);
	if (r < 0) {
		json_decref(arr);
		return r;
	}
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *e = json_loads(line, 0, NULL);

		if (json_is_object(e))
			json_array_append_new(arr, e);
		else
			json_decref(e);
	}
	*ret_events = arr;
	return 0;
}

static const char *family(const char *kind)
{
	if (startswith(kind, "llm."))
		return "llm";
	if (streq(kind, "tool.build"))
		return "build";
	if (streq(kind, "tool.run") || streq(kind, "tool.probe"))
		return "vm";
	return "other";
}

static bool in_family(const json_t *e)
{
	return !streq(family(json_get_str(e, "kind") ?: ""), "other");
}

/* The tool and model events' intervals, sorted by start: an event is a
 * span when a shorter one lies inside it, found by looking only at the
 * events that start within it. */
struct leaf {
	json_int_t start, end, dur;
	const json_t *e;
};

static int leaf_cmp(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct leaf *leaves_of(const json_t *events, size_t *ret_n)
{
	struct leaf *l = calloc(json_array_size(events) + 1, sizeof(*l));
	const json_t *o;
	size_t i, n = 0;

	if (!l)
		return NULL;
	json_array_foreach(events, i, o) {
		json_int_t os = json_get_int(o, "start_us", 0), od = json_get_int(o, "duration_ms", 0);

		if (in_family(o) && od > 0)
			l[n++] = (struct leaf){ os, os + od * 1000, od, o };
	}
	qsort(l, n, sizeof(*l), leaf_cmp);
	*ret_n = n;
	return l;
}

/* An event around other tool or model events (a probe is a build and a
 * run): its time is theirs, counting it too would count it twice. */
static bool is_span(const struct leaf *l, size_t n, const json_t *e)
{
	json_int_t s = json_get_int(e, "start_us", 0), d = json_get_int(e, "duration_ms", 0);
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l[mid].start < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && l[i].start <= s + d * 1000; i++)
		if (l[i].e != e && l[i].dur < d && l[i].end <= s + d * 1000)
			return true;
	return false;
}

/* The earliest start of all: a span (run.end) is written last but starts
 * before the events inside it. */
static json_int_t first_start(const json_t *events)
{
	json_int_t first = 0;
	const json_t *e;
	size_t i;

	json_array_foreach(events, i, e) {
		json_int_t s = json_get_int(e, "start_us", 0);

		if (s && (!first || s < first))
			first = s;
	}
	return first;
}

json_t *trajectory_summary(const json_t *events)
{
	json_int_t calls = 0, tin = 0, tout = 0, ms[4] = {}, first = first_start(events), last = 0;
	static const char *const fams[] = { "llm", "build", "vm", "other" };
	double cost = 0;
	size_t n_leaves = 0;
	_cleanup_free_ struct leaf *leaves = leaves_of(events, &n_leaves);
	json_t *e;
	size_t i;

	if (!leaves)
		return NULL;
	json_array_foreach(events, i, e) {
		const char *kind = json_get_str(e, "kind") ?: "";
		json_int_t start = json_get_int(e, "start_us", 0);
		json_int_t dur = json_get_int(e, "duration_ms", 0);
		json_t *tok = json_object_get(e, "tokens");

		if (streq(kind, "llm.call"))
			calls++;
		tin += json_get_int(tok, "in", 0);
		tout += json_get_int(tok, "out", 0);
		cost += json_real_value(json_object_get(e, "cost"));
		/* only leaf tool/LLM events count, not the spans around them */
		for (size_t k = 0; k < 3; k++)
			if (streq(family(kind), fams[k]) && !is_span(leaves, n_leaves, e))
				ms[k] += dur;
		last = MAX(last, start + dur * 1000);
	}
	ms[3] = MAX((last - first) / 1000 - ms[0] - ms[1] - ms[2], 0);
	return json_pack("{s:I, s:I, s:I, s:f, s:I, s:{s:I, s:I, s:I, s:I}}",
		"llm_calls", calls, "tokens_in", tin, "tokens_out", tout, "cost", cost,
		"wall_ms", (last - first) / 1000,
		"ms", "llm", ms[0], "build", ms[1], "vm", ms[2], "other", ms[3]);
}

static void print_text(FILE *f, const char *label, const json_t *v)
{
	const char *s = json_string_value(v);
	_cleanup_free_ char *dump = NULL, *esc = NULL;

	if (!v)
		return;
	if (!s)
		s = dump = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!s)
		return;
	esc = str_escape(s, strlen(s), 160);
	fprintf(f, "      %s %s\n", label, esc ?: "");
}

void trajectory_print(const json_t *events, FILE *f)
{
	_cleanup_json_ json_t *sum = trajectory_summary(events);
	json_int_t t0 = first_start(events);
	json_t *e, *ms = json_object_get(sum, "ms");
	size_t i;

	fprintf(f, "%5s %9s  %-12s %-12s %8s %13s %-10s\n", "ID", "T+", "STEP", "KIND",
		"DUR", "TOKENS", "VERDICT");
	json_array_foreach(events, i, e) {
		json_t *tok = json_object_get(e, "tokens");
		const char *st = json_get_str(e, "step") ?: "", *kd = json_get_str(e, "kind") ?: "";
		const char *vd = json_get_str(e, "verdict") ?: "";
		_cleanup_free_ char *step = str_escape(st, strlen(st), 12);
		_cleanup_free_ char *kind = str_escape(kd, strlen(kd), 12);
		_cleanup_free_ char *verdict = str_escape(vd, strlen(vd), 40);
		char tokens[32] = "";

		if (tok)
			snprintf(tokens, sizeof(tokens), "%lld/%lld",
				 (long long)json_get_int(tok, "in", 0),
				 (long long)json_get_int(tok, "out", 0));
		fprintf(f, "%5lld %8.1fs  %-12s %-12s %7.1fs %13s %-10s\n",
			(long long)json_get_int(e, "id", 0),
			(double)(json_get_int(e, "start_us", 0) - t0) / 1e6, step ?: "", kind ?: "",
			(double)json_get_int(e, "duration_ms", 0) / 1000.0, tokens, verdict ?: "");
		print_text(f, "in: ", json_object_get(e, "input"));
		print_text(f, "out:", json_object_get(e, "output"));
		if (json_get_str(e, "error"))
			print_text(f, "err:", json_object_get(e, "error"));
	}
	fprintf(f, "\n%lld LLM call(s), %lld input + %lld output tokens, cost %.4f\n",
		(long long)json_get_int(sum, "llm_calls", 0), (long long)json_get_int(sum, "tokens_in", 0),
		(long long)json_get_int(sum, "tokens_out", 0),
		json_real_value(json_object_get(sum, "cost")));
	fprintf(f, "wall %.1fs: llm %.1fs, build %.1fs, vm %.1fs, agent/other %.1fs\n",
		(double)json_get_int(sum, "wall_ms", 0) / 1000,
		(double)json_get_int(ms, "llm", 0) / 1000, (double)json_get_int(ms, "build", 0) / 1000,
		(double)json_get_int(ms, "vm", 0) / 1000, (double)json_get_int(ms, "other", 0) / 1000);
}
