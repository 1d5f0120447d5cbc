/* kfixctl bench: kfix run over a dataset of known bugs, each result held
 * against the fix the developers made.  The dataset format and the
 * figures are described in kfixctl(1). */
#ifndef KFIX_DAEMON_BENCH_H
#define KFIX_DAEMON_BENCH_H

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/macro.h"

#define BENCH_FORMAT "kfix-bench-1"
#define BENCH_SET_MAX (4u * 1024 * 1024) /* bytes of dataset.json */
#define BENCH_BUGS_MAX 10000
#define BENCH_ID_MAX 64
#define BENCH_HINTS_MAX 32

struct bench_bug {
	char *id, *title, *crash_type;
	/* absolute paths; NULL when not given */
	char *src, *kconfig, *repro_c, *repro_syz, *report, *fix_diff, *cassette, *agent_conf;
	char *commit, *fix_commit, *syzbot_id;
	char **hints; /* files where the fix is expected */
};

struct bench_set {
	char *name;
	char *path; /* the dataset.json read, absolute */
	struct bench_bug *bugs;
	size_t n;
};

/* Reads DATASET (a dataset.json, or a folder holding one).  Paths in it
 * are relative to its folder.  -EINVAL with *ret_error for a malformed
 * dataset. */
int bench_set_load(const char *path, struct bench_set **ret, char **ret_error);
void bench_set_free(struct bench_set *s);
DEFINE_CLEANUP(struct bench_set, bench_set_free);
const struct bench_bug *bench_set_find(const struct bench_set *s, const char *id);

/* "KASAN: slab-out-of-bounds Write in f" -> "KASAN: slab-out-of-bounds":
 * the title before " in ", without an access kind. */
char *bench_crash_type(const char *title);

/* The figures of a run from its bugs' result.json objects (an array). */
int bench_summary(const char *dataset, json_t *results, json_t **ret);
int bench_render_markdown(const json_t *summary, struct buf *out);
int bench_render_html(const json_t *summary, struct buf *out);
/* Two summaries side by side: the figures, their change, and each bug
 * whose result differs. */
int bench_compare(const json_t *a, const json_t *b, json_t **ret);
int bench_render_compare(const json_t *cmp, struct buf *out);

#endif
