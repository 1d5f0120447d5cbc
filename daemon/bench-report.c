/* The figures of a benchmark run and their three renderings (JSON,
 * Markdown, an HTML page with bar charts drawn as inline SVG by the
 * dashboard's escaping printf), and two runs side by side.
 *
 * Rates are over every bug of the run: reproduced (the base kernel
 * crashed), plausible (a patch was validated: the crash stopped and the
 * checks passed), solved (plausible, and the patch changes the place the
 * developers changed: fixcompare's same or same-place) and equivalent
 * (plausible, and the same change as the developers' by
 * fixcompare-equiv.c's rules).  Cost and time per plausible bug divide
 * what the whole run spent by the plausible bugs: the price of one fix,
 * failures included. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common/json.h"
#include "common/strutil.h"
#include "html.h"

#define SUMMARY_FORMAT "kfix-bench-summary-1"

/* a bug's result.json member, and its count's name in the summary */
static const char *const counted[] = { "reproduced", "validated", "solved", "equivalent", NULL };
static const char *const count_name[] = { "reproduced", "plausible", "solved", "equivalent" };

/* x rounded to 1/k, without libm */
static double round_to(double x, double k)
{
	return (double)(long long)(x * k + (x >= 0 ? 0.5 : -0.5)) / k;
}

static int type_add(json_t *types, const char *type, const json_t *r)
{
	json_t *t = json_object_get(types, type);

	if (!t) {
		t = json_pack("{s:i, s:i, s:i, s:i, s:i}", "bugs", 0, "reproduced", 0, "plausible", 0,
			      "solved", 0, "equivalent", 0);
		if (!t || json_object_set_new(types, type, t) < 0)
			return -ENOMEM;
	}
	json_object_set_new(t, "bugs", json_integer(json_get_int(t, "bugs", 0) + 1));
	for (size_t i = 0; counted[i]; i++)
		if (json_get_bool(r, counted[i], false))
			json_object_set_new(t, count_name[i],
					    json_integer(json_get_int(t, count_name[i], 0) + 1));
	return 0;
}

static json_t *rate(size_t k, size_t n)
{
	return n ? json_real(round_to((double)k / (double)n, 1000.0)) : json_null();
}

static json_t *per(double total, size_t n)
{
	return n ? json_real(round_to(total / (double)n, 10000.0)) : json_null();
}

static json_t *brief(const json_t *r)
{
	return json_pack("{s:O?, s:O?, s:O?, s:O?, s:b, s:b, s:b, s:b, s:O?, s:O?, s:O?, s:O?, s:O?}",
			 "id", json_object_get(r, "id"), "title", json_object_get(r, "title"),
			 "crash_type", json_object_get(r, "crash_type"),
			 "result", json_object_get(r, "result"),
			 "reproduced", json_get_bool(r, "reproduced", false),
			 "validated", json_get_bool(r, "validated", false),
			 "solved", json_get_bool(r, "solved", false),
			 "equivalent", json_get_bool(r, "equivalent", false),
			 "similarity", json_object_get(r, "similarity"), "cost", json_object_get(r, "cost"),
			 "turns", json_object_get(r, "turns"),
			 "wall_seconds", json_object_get(r, "wall_seconds"),
			 "judge_equivalent", json_object_get(r, "judge_equivalent"));
}

/* The model judge's verdicts (--judge), beside the rules': null when no
 * bug was judged. */
static void judged_counts(json_t *s, const json_t *results, size_t n)
{
	size_t judged = 0, eq = 0, i;
	const json_t *r;

	json_array_foreach(results, i, r) {
		judged += json_object_get(r, "judge") != NULL;
		eq += json_get_bool(r, "judge_equivalent", false);
	}
	json_object_set_new(s, "judged", json_integer((json_int_t)judged));
	json_object_set_new(s, "judge_equivalent", judged ? json_integer((json_int_t)eq) : json_null());
	json_object_set_new(json_object_get(s, "rates"), "judge_equivalent", judged ? rate(eq, n) : json_null());
}

int bench_summary(const char *dataset, json_t *results, json_t **ret)
{
	_cleanup_json_ json_t *types = json_object(), *bugs = json_array();
	size_t n = json_array_size(results), k[4] = { 0 };
	double cost = 0, wall = 0;
	json_int_t tin = 0, tout = 0, turns = 0;
	json_t *r, *s;
	size_t i;

	if (!types || !bugs)
		return -ENOMEM;
	json_array_foreach(results, i, r) {
		const char *type = json_get_str(r, "crash_type");

		for (size_t c = 0; counted[c]; c++)
			k[c] += json_get_bool(r, counted[c], false);
		cost += json_number_value(json_object_get(r, "cost"));
		wall += json_number_value(json_object_get(r, "wall_seconds"));
		tin += json_get_int(r, "tokens_in", 0);
		tout += json_get_int(r, "tokens_out", 0);
		turns += json_get_int(r, "turns", 0);
		if (type_add(types, type ? type : "?", r) < 0 ||
		    json_array_append_new(bugs, brief(r)) < 0)
			return -ENOMEM;
	}
	s = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:{s:o, s:o, s:o, s:o}, s:f, s:I, s:I, s:I,"
		      " s:f, s:o, s:o, s:O, s:O}",
		      "format", SUMMARY_FORMAT, "dataset", dataset, "bugs", (int)n,
		      "reproduced", (int)k[0], "plausible", (int)k[1], "solved", (int)k[2],
		      "equivalent", (int)k[3],
		      "rates", "reproduced", rate(k[0], n), "plausible", rate(k[1], n),
		      "solved", rate(k[2], n), "equivalent", rate(k[3], n),
		      "cost", round_to(cost, 10000.0), "tokens_in", tin, "tokens_out", tout,
		      "turns", turns, "wall_seconds", round_to(wall, 10.0),
		      "cost_per_plausible", per(cost, k[1]), "wall_per_plausible", per(wall, k[1]),
		      "by_crash_type", types, "results", bugs);
	if (!s)
		return -ENOMEM;
	judged_counts(s, results, n);
	*ret = s;
	return 0;
}

static const char *pct(char buf[16], const json_t *v)
{
	if (!json_is_number(v))
		return "-";
	snprintf(buf, 16, "%.1f%%", json_number_value(v) * 100.0);
	return buf;
}

static const char *num(char buf[32], const json_t *v, int decimals)
{
	if (!json_is_number(v))
		return "-";
	snprintf(buf, 32, "%.*f", decimals, json_number_value(v));
	return buf;
}

/* A figure of compare: as short as it goes, a change with its sign. */
static const char *fig(char buf[32], const json_t *v, bool sign)
{
	if (!json_is_number(v))
		return "-";
	if (sign)
		snprintf(buf, 32, "%+g", json_number_value(v));
	else
		snprintf(buf, 32, "%g", json_number_value(v));
	return buf;
}

/* Markdown cells hold model- or dataset-written text: a '|' or a line
 * break would end the cell. */
static int md_cell(struct buf *out, const char *s)
{
	int r = 0;

	for (const char *p = s ? s : ""; *p && r >= 0; p++)
		r = *p == '|' ? buf_puts(out, "\\|") : (*p == '\n' || *p == '\r') ? buf_puts(out, " ")
							   : buf_append(out, p, 1);
	return r;
}

static int md_types(const json_t *s, struct buf *out)
{
	const json_t *types = json_object_get(s, "by_crash_type"), *t;
	const char *name;
	int r = buf_puts(out, "\n| crash type | bugs | reproduced | plausible | solved | equivalent |\n"
			      "| --- | ---: | ---: | ---: | ---: | ---: |\n");

	json_object_foreach((json_t *)types, name, t) {
		if (r >= 0)
			r = buf_puts(out, "| ");
		if (r >= 0)
			r = md_cell(out, name);
		if (r >= 0)
			r = buf_printf(out, " | %lld | %lld | %lld | %lld | %lld |\n",
				       (long long)json_get_int(t, "bugs", 0),
				       (long long)json_get_int(t, "reproduced", 0),
				       (long long)json_get_int(t, "plausible", 0),
				       (long long)json_get_int(t, "solved", 0),
				       (long long)json_get_int(t, "equivalent", 0));
	}
	return r;
}

static const char *yes(const json_t *o, const char *key)
{
	return json_get_bool(o, key, false) ? "yes" : "no";
}

static int md_bugs(const json_t *s, struct buf *out)
{
	const json_t *b;
	size_t i;
	int r = buf_puts(out, "\n| bug | title | crash type | result | plausible | solved | equivalent "
			      "| similarity | cost | turns | wall (s) |\n"
			      "| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");

	json_array_foreach(json_object_get(s, "results"), i, b) {
		char x[32], y[32], z[32], w[32];

		if (r >= 0)
			r = buf_puts(out, "| ");
		if (r >= 0)
			r = md_cell(out, json_get_str(b, "id"));
		if (r >= 0)
			r = buf_puts(out, " | ");
		if (r >= 0)
			r = md_cell(out, json_get_str(b, "title"));
		if (r >= 0)
			r = buf_puts(out, " | ");
		if (r >= 0)
			r = md_cell(out, json_get_str(b, "crash_type"));
		if (r >= 0)
			r = buf_puts(out, " | ");
		if (r >= 0)
			r = md_cell(out, json_get_str(b, "result"));
		if (r >= 0)
			r = buf_printf(out, " | %s | %s | %s | %s | %s | %s | %s |\n", yes(b, "validated"),
				       yes(b, "solved"), yes(b, "equivalent"),
				       num(x, json_object_get(b, "similarity"), 2),
				       num(y, json_object_get(b, "cost"), 4),
				       num(z, json_object_get(b, "turns"), 0),
				       num(w, json_object_get(b, "wall_seconds"), 1));
	}
	return r;
}

int bench_render_markdown(const json_t *s, struct buf *out)
{
	const json_t *rates = json_object_get(s, "rates");
	char a[16], b[16], c[16], d[16], e[32], f[32], g[32];
	int r = buf_puts(out, "# kfix bench: ");

	if (r >= 0)
		r = md_cell(out, json_get_str(s, "dataset"));
	if (r >= 0)
		r = buf_printf(out, "\n\n| bugs | reproduced | plausible | solved | equivalent | cost | "
				    "cost per plausible | wall per plausible (s) |\n"
				    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
				    "| %lld | %s | %s | %s | %s | %s | %s | %s |\n",
			       (long long)json_get_int(s, "bugs", 0),
			       pct(a, json_object_get(rates, "reproduced")),
			       pct(b, json_object_get(rates, "plausible")),
			       pct(c, json_object_get(rates, "solved")),
			       pct(d, json_object_get(rates, "equivalent")),
			       num(e, json_object_get(s, "cost"), 4),
			       num(f, json_object_get(s, "cost_per_plausible"), 4),
			       num(g, json_object_get(s, "wall_per_plausible"), 1));
	if (r >= 0 && json_get_int(s, "judged", 0) > 0)
		r = buf_printf(out, "\nThe model judge found %lld of the %lld judged patches the same fix "
				    "as the developers'.\n", (long long)json_get_int(s, "judge_equivalent", 0),
			       (long long)json_get_int(s, "judged", 0));
	if (r >= 0)
		r = md_types(s, out);
	if (r >= 0)
		r = md_bugs(s, out);
	return r;
}

/* One bar chart: per crash type, the share of its bugs that were
 * plausible (light) and solved (dark). */
static int html_chart(const json_t *s, struct buf *out)
{
	const json_t *types = json_object_get(s, "by_crash_type"), *t;
	size_t n = json_object_size(types), row = 0;
	const char *name;
	int r = html_fmt(out, "<svg class=\"chart\" role=\"img\" width=\"720\" height=\"%u\" "
			      "viewBox=\"0 0 720 %u\"><title>plausible and solved share per crash type</title>",
			 (unsigned)(n * 28 + 10), (unsigned)(n * 28 + 10));

	json_object_foreach((json_t *)types, name, t) {
		double bugs = (double)json_get_int(t, "bugs", 0);
		unsigned pw = bugs ? (unsigned)(400.0 * (double)json_get_int(t, "plausible", 0) / bugs) : 0;
		unsigned sw = bugs ? (unsigned)(400.0 * (double)json_get_int(t, "solved", 0) / bugs) : 0;
		unsigned y = (unsigned)(row++ * 28 + 5);

		if (r >= 0)
			r = html_fmt(out, "<text x=\"0\" y=\"%u\" font-size=\"12\">%s</text>"
					  "<rect x=\"300\" y=\"%u\" width=\"400\" height=\"18\" fill=\"#eee\"/>"
					  "<rect class=\"plausible\" x=\"300\" y=\"%u\" width=\"%u\" height=\"18\" fill=\"#9cd\"/>"
					  "<rect class=\"solved\" x=\"300\" y=\"%u\" width=\"%u\" height=\"18\" fill=\"#369\"/>",
				     y + 14, name, y, y, pw, y, sw);
	}
	if (r >= 0)
		r = html_fmt(out, "</svg>");
	return r;
}

static int html_bugs(const json_t *s, struct buf *out)
{
	const json_t *b;
	size_t i;
	int r = html_fmt(out, "<table id=\"bugs\"><tr><th>bug</th><th>title</th><th>crash type</th><th>result</th>"
			      "<th>plausible</th><th>solved</th><th>equivalent</th><th>similarity</th>"
			      "<th>cost</th><th>turns</th><th>wall (s)</th></tr>");

	json_array_foreach(json_object_get(s, "results"), i, b) {
		char x[32], y[32], z[32], w[32];

		if (r >= 0)
			r = html_fmt(out, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"%s\">%s</td><td>%s</td>"
					  "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
				     json_get_str(b, "id"), json_get_str(b, "title"), json_get_str(b, "crash_type"),
				     json_get_bool(b, "validated", false) ? "ok" : "fail",
				     json_get_str(b, "result"), yes(b, "validated"), yes(b, "solved"),
				     yes(b, "equivalent"), num(x, json_object_get(b, "similarity"), 2),
				     num(y, json_object_get(b, "cost"), 4),
				     num(z, json_object_get(b, "turns"), 0),
				     num(w, json_object_get(b, "wall_seconds"), 1));
	}
	if (r >= 0)
		r = html_fmt(out, "</table>");
	return r;
}

int bench_render_html(const json_t *s, struct buf *out)
{
	const json_t *rates = json_object_get(s, "rates");
	char a[16], b[16], c[16], d[16], e[32], f[32];
	int r;

	r = html_fmt(out, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>kfix bench: %s</title>"
			  "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:left}"
			  ".ok{color:#060}.fail{color:#900}</style></head><body><h1>kfix bench: %s</h1>"
			  "<table id=\"figures\"><tr><th>bugs</th><th>reproduced</th><th>plausible</th>"
			  "<th>solved</th><th>equivalent</th><th>cost</th><th>cost per plausible</th></tr>"
			  "<tr><td>%D</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
			  "</table><h2>By crash type</h2>",
		     json_get_str(s, "dataset"), json_get_str(s, "dataset"),
		     (int64_t)json_get_int(s, "bugs", 0), pct(a, json_object_get(rates, "reproduced")),
		     pct(b, json_object_get(rates, "plausible")), pct(c, json_object_get(rates, "solved")),
		     pct(d, json_object_get(rates, "equivalent")), num(e, json_object_get(s, "cost"), 4),
		     num(f, json_object_get(s, "cost_per_plausible"), 4));
	if (r >= 0)
		r = html_chart(s, out);
	if (r >= 0)
		r = html_fmt(out, "<h2>Bugs</h2>");
	if (r >= 0)
		r = html_bugs(s, out);
	if (r >= 0)
		r = html_fmt(out, "</body></html>\n");
	return r;
}

static const char *const figures[] = { "bugs", "reproduced", "plausible", "solved", "equivalent",
				       "judge_equivalent",
				       "cost", "turns", "wall_seconds", "cost_per_plausible",
				       "wall_per_plausible", NULL };

static json_t *bug_map(const json_t *s)
{
	json_t *m = json_object(), *b;
	size_t i;

	json_array_foreach(json_object_get(s, "results"), i, b)
		if (m && json_get_str(b, "id"))
			json_object_set(m, json_get_str(b, "id"), b);
	return m;
}

int bench_compare(const json_t *a, const json_t *b, json_t **ret)
{
	_cleanup_json_ json_t *fig = json_array(), *bugs = json_array();
	_cleanup_json_ json_t *ma = bug_map(a), *mb = bug_map(b);
	const char *id;
	json_t *x;

	if (!fig || !bugs || !ma || !mb)
		return -ENOMEM;
	for (size_t i = 0; figures[i]; i++) {
		const json_t *va = json_object_get(a, figures[i]), *vb = json_object_get(b, figures[i]);
		json_t *d = json_is_number(va) && json_is_number(vb) ?
				    json_real(round_to((json_number_value(vb) - json_number_value(va)), 10000.0)) :
				    json_null();

		if (json_array_append_new(fig, json_pack("{s:s, s:O?, s:O?, s:o}", "name", figures[i],
							 "a", va, "b", vb, "change", d)) < 0)
			return -ENOMEM;
	}
	/* a bug in both runs whose outcome differs, or in one run only */
	json_object_foreach(ma, id, x) {
		const json_t *y = json_object_get(mb, id);
		const char *ra = json_get_str(x, "result"), *rb = y ? json_get_str(y, "result") : NULL;

		if (y && streq_ptr(ra, rb) && json_get_bool(x, "solved", false) == json_get_bool(y, "solved", false) &&
		    json_get_bool(x, "equivalent", false) == json_get_bool(y, "equivalent", false))
			continue;
		if (json_array_append_new(bugs, json_pack("{s:s, s:O?, s:O?}", "id", id, "a", x, "b", y)) < 0)
			return -ENOMEM;
	}
	json_object_foreach(mb, id, x)
		if (!json_object_get(ma, id) &&
		    json_array_append_new(bugs, json_pack("{s:s, s:n, s:O}", "id", id, "a", "b", x)) < 0)
			return -ENOMEM;
	*ret = json_pack("{s:O?, s:O?, s:O, s:O}", "a", json_object_get(a, "dataset"), "b",
			 json_object_get(b, "dataset"), "figures", fig, "bugs", bugs);
	return *ret ? 0 : -ENOMEM;
}

static const char *outcome(char buf[64], const json_t *b)
{
	if (!b || json_is_null(b))
		return "(not run)";
	snprintf(buf, 64, "%s%s%s", json_get_str(b, "result") ?: "?",
		 json_get_bool(b, "solved", false) ? ", solved" : "",
		 json_get_bool(b, "equivalent", false) ? ", equivalent" : "");
	return buf;
}

int bench_render_compare(const json_t *cmp, struct buf *out)
{
	const json_t *f, *b;
	size_t i;
	int r = buf_puts(out, "| figure | A | B | change |\n| --- | ---: | ---: | ---: |\n");

	json_array_foreach(json_object_get(cmp, "figures"), i, f) {
		char x[32], y[32], z[32];

		if (r >= 0)
			r = buf_printf(out, "| %s | %s | %s | %s |\n", json_get_str(f, "name"),
				       fig(x, json_object_get(f, "a"), false), fig(y, json_object_get(f, "b"), false),
				       fig(z, json_object_get(f, "change"), true));
	}
	if (r >= 0 && json_array_size(json_object_get(cmp, "bugs")))
		r = buf_puts(out, "\n| bug | A | B |\n| --- | --- | --- |\n");
	json_array_foreach(json_object_get(cmp, "bugs"), i, b) {
		char x[64], y[64];

		if (r >= 0)
			r = buf_puts(out, "| ");
		if (r >= 0)
			r = md_cell(out, json_get_str(b, "id"));
		if (r >= 0)
			r = buf_printf(out, " | %s | %s |\n", outcome(x, json_object_get(b, "a")),
				       outcome(y, json_object_get(b, "b")));
	}
	return r;
}
