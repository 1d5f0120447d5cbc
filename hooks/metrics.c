#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "metrics.h"

#define METRICS_MAX_FAMILIES 96
#define METRICS_MAX_SERIES 64

enum metric_type { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

static const double buckets[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
				  0.25,	 0.5,	1,    2.5,   5,	   10, 60 };
#define N_BUCKETS ARRAY_SIZE(buckets)

struct series {
	char *labels;
	double value; /* counter, gauge; sum for histograms */
	uint64_t count;
	uint64_t bucket[N_BUCKETS];
};

struct family {
	char *name, *help;
	enum metric_type type;
	struct series series[METRICS_MAX_SERIES];
	size_t n;
};

struct metrics {
	struct family fam[METRICS_MAX_FAMILIES];
	size_t n;
	uint64_t dropped;
};

int metrics_new(struct metrics **ret)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*ret = m;
	return 0;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		for (size_t j = 0; j < m->fam[i].n; j++)
			free(m->fam[i].series[j].labels);
		free(m->fam[i].name);
		free(m->fam[i].help);
	}
	free(m);
}

static struct family *family_get(struct metrics *m, const char *name,
				 const char *help, enum metric_type type)
{
	struct family *f;

	for (size_t i = 0; i < m->n; i++)
		if (streq(m->fam[i].name, name))
			return m->fam[i].type == type ? &m->fam[i] : NULL;
	if (m->n >= METRICS_MAX_FAMILIES)
		return NULL;
	f = &m->fam[m->n];
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		f->name = f->help = NULL;
		return NULL;
	}
	f->type = type;
	m->n++;
	return f;
}

static struct series *series_get(struct metrics *m, const char *name,
				 const char *help, enum metric_type type,
				 const char *labels)
{
	struct family *f = family_get(m, name, help, type);
	struct series *s;

	if (!labels)
		labels = "";
	if (!f) {
		m->dropped++;
		return NULL;
	}
	for (size_t i = 0; i < f->n; i++)
		if (streq(f->series[i].labels, labels))
			return &f->series[i];
	if (f->n >= METRICS_MAX_SERIES) {
		m->dropped++;
		return NULL;
	}
	s = &f->series[f->n];
	s->labels = strdup(labels);
	if (!s->labels) {
		m->dropped++;
		return NULL;
	}
	f->n++;
	return s;
}

void metrics_counter_add(struct metrics *m, const char *family,
			 const char *help, const char *labels, double v)
{
	struct series *s = series_get(m, family, help, METRIC_COUNTER, labels);

	if (s)
		s->value += v;
}

void metrics_gauge_set(struct metrics *m, const char *family,
		       const char *help, const char *labels, double v)
{
	struct series *s = series_get(m, family, help, METRIC_GAUGE, labels);

	if (s)
		s->value = v;
}

void metrics_observe(struct metrics *m, const char *family, const char *help,
		     const char *labels, double seconds)
{
	struct series *s = series_get(m, family, help, METRIC_HISTOGRAM, labels);

	if (!s)
		return;
	s->value += seconds;
	s->count++;
	for (size_t i = 0; i < N_BUCKETS; i++)
		if (seconds <= buckets[i])
			s->bucket[i]++;
}

/* `name{labels,extra}` with the braces left out when both are empty. */
static int series_name(struct buf *out, const char *name, const char *suffix,
		       const char *labels, const char *extra)
{
	bool l = labels && *labels, e = extra && *extra;

	if (!l && !e)
		return buf_printf(out, "%s%s", name, suffix);
	return buf_printf(out, "%s%s{%s%s%s}", name, suffix, l ? labels : "",
			  l && e ? "," : "", e ? extra : "");
}

static int render_histogram(struct buf *out, const struct family *f,
			    const struct series *s)
{
	int r = 0;

	for (size_t i = 0; i < N_BUCKETS && r >= 0; i++) {
		char le[32];

		snprintf(le, sizeof(le), "le=\"%g\"", buckets[i]);
		r = series_name(out, f->name, "_bucket", s->labels, le);
		if (r >= 0)
			r = buf_printf(out, " %llu\n", (unsigned long long)s->bucket[i]);
	}
	if (r >= 0)
		r = series_name(out, f->name, "_bucket", s->labels, "le=\"+Inf\"");
	if (r >= 0)
		r = buf_printf(out, " %llu\n", (unsigned long long)s->count);
	if (r >= 0)
		r = series_name(out, f->name, "_sum", s->labels, NULL);
	if (r >= 0)
		r = buf_printf(out, " %.6f\n", s->value);
	if (r >= 0)
		r = series_name(out, f->name, "_count", s->labels, NULL);
	if (r >= 0)
		r = buf_printf(out, " %llu\n", (unsigned long long)s->count);
	return r;
}

int metrics_render(struct metrics *m, struct buf *out)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	int r = 0;

	for (size_t i = 0; i < m->n && r >= 0; i++) {
		const struct family *f = &m->fam[i];

		r = buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name,
			       f->help, f->name, types[f->type]);
		for (size_t j = 0; j < f->n && r >= 0; j++) {
			const struct series *s = &f->series[j];

			if (f->type == METRIC_HISTOGRAM) {
				r = render_histogram(out, f, s);
				continue;
			}
			r = series_name(out, f->name, "", s->labels, NULL);
			if (r >= 0)
				r = buf_printf(out, " %.17g\n", s->value);
		}
	}
	if (r >= 0)
		r = buf_printf(out,
			       "# HELP kfix_metrics_dropped_total Series not recorded because the registry was full.\n"
			       "# TYPE kfix_metrics_dropped_total counter\n"
			       "kfix_metrics_dropped_total %llu\n",
			       (unsigned long long)m->dropped);
	return r;
}
