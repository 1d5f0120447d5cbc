/* Counters and histograms recorded by job processes. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

const double store_metric_bounds[STORE_METRIC_BUCKETS] = {
	0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200,
};

/* Names and label strings are written by kfix, but they end up verbatim
 * in the Prometheus text: keep them to what that format allows. */
static bool metric_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= STORE_METRIC_NAME_MAX && !(name[0] >= '0' && name[0] <= '9') &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") == n;
}

static bool metric_labels_ok(const char *labels)
{
	return strlen(labels) <= STORE_METRIC_LABELS_MAX && !strpbrk(labels, "\n{}");
}

/* Adds to a series, creating it (within the series limit) when new. */
static int metric_bump(struct store *s, const char *name, const char *labels,
		       const char *kind, double v, int64_t count)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int changes = 0, r, rc;

	/* the value is parameter 5, after the four bound by type */
	r = db_exec(s, &changes,
		    "UPDATE metrics SET count = count + ?1, updated = ?2"
		    ", value = value + ?5 WHERE name = ?3 AND labels = ?4 AND kind = ?6",
		    "iittdt", count, db_now_sec(), name, labels, v, kind);
	if (r < 0 || changes > 0)
		return r;
	r = db_prepare(s, &st, "SELECT count(*) FROM metrics", NULL);
	if (r < 0)
		return r;
	rc = db_step_row(s, st);
	if (rc < 0)
		return rc;
	if (db_col_int64(st, 0) >= STORE_METRIC_SERIES_MAX)
		return -E2BIG;
	return db_exec(s, NULL,
		       "INSERT INTO metrics (name, labels, kind, count, updated, value)"
		       " VALUES (?, ?, ?, ?, ?, ?)",
		       "tttiid", name, labels, kind, count, db_now_sec(), v);
}

int store_metric_add(struct store *s, const char *name, const char *labels,
		     double v)
{
	int r;

	if (!labels)
		labels = "";
	if (!metric_name_ok(name) || !metric_labels_ok(labels) || !(v >= 0))
		return -EINVAL;
	r = store_begin(s);
	if (r < 0)
		return r;
	return db_tx_end(s, metric_bump(s, name, labels, "counter", v, 0));
}

int store_metric_observe(struct store *s, const char *name, const char *labels,
			 double v)
{
	size_t b = 0;
	int r;

	if (!labels)
		labels = "";
	if (!metric_name_ok(name) || !metric_labels_ok(labels) || !(v >= 0))
		return -EINVAL;
	while (b < STORE_METRIC_BUCKETS && v > store_metric_bounds[b])
		b++;
	r = store_begin(s);
	if (r < 0)
		return r;
	r = metric_bump(s, name, labels, "histogram", v, 1);
	/* only the bucket hit is stored; renderers add them up */
	if (r >= 0 && b < STORE_METRIC_BUCKETS)
		r = db_exec(s, NULL,
			 "INSERT INTO metric_buckets (name, labels, bucket, count)"
			 " VALUES (?, ?, ?, 1) ON CONFLICT (name, labels, bucket)"
			 " DO UPDATE SET count = metric_buckets.count + 1",
			 "tti", name, labels, (int64_t)b);
	return db_tx_end(s, r);
}

void store_metric_free(struct store_metric *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->labels);
	free(m);
}

static struct store_metric *metric_from_row(struct db_stmt *st)
{
	struct store_metric *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->name = db_col_text(st, 0);
	m->labels = db_col_text(st, 1);
	m->histogram = streq_ptr(db_col_str(st, 2), "histogram");
	m->value = db_col_double(st, 3);
	m->count = db_col_int64(st, 4);
	if (!m->name || !m->labels) {
		store_metric_free(m);
		return NULL;
	}
	return m;
}

DEFINE_ROW_LIST(metric)

static int metric_buckets_fill(struct store *s, struct store_metric *m)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	int rc, r = db_prepare(s, &st,
			    "SELECT bucket, count FROM metric_buckets WHERE name = ? AND labels = ?",
			    "tt", m->name, m->labels);

	if (r < 0)
		return r;
	while ((rc = db_step(s, st)) == DB_ROW) {
		int64_t b = db_col_int64(st, 0);

		if (b >= 0 && b < STORE_METRIC_BUCKETS)
			m->bucket[b] = db_col_int64(st, 1);
	}
	return rc < 0 ? rc : 0;
}

int store_metric_list(struct store *s, struct store_metric ***ret, size_t *ret_n)
{
	_cleanup_stmt_ struct db_stmt *st = NULL;
	struct store_metric **items = NULL;
	size_t n = 0;
	int r = db_prepare(s, &st,
			"SELECT name, labels, kind, value, count FROM metrics"
			" ORDER BY name, labels", NULL);

	if (r < 0)
		return r;
	r = metric_list_query(s, st, &items, &n);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (items[i]->histogram)
			r = metric_buckets_fill(s, items[i]);
	if (r < 0) {
		store_metric_list_free(items, n);
		return r;
	}
	*ret = items;
	*ret_n = n;
	return 0;
}
