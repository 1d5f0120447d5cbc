/* Runs syzkaller's report corpus through report_parse and compares the
 * title (or an ALT title), TYPE, CORRUPTED and the guilty file with what
 * syzkaller assigns.  Prints per-field figures and every mismatch; fails
 * below the floors.  The corpus lives next to the source tree
 * ($top_srcdir/../shared/testdata/syzkaller) or in KFIX_SYZKALLER_CORPUS;
 * without it the test is skipped. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "repro/report.h"

#define FILE_MAX (64u << 20)

struct counter {
	const char *name;
	unsigned ok, total;
	double floor;
};

struct expect {
	char *title, *type;
	char **alts;
	bool corrupted;
};

static void expect_free(struct expect *e)
{
	free(e->title);
	free(e->type);
	strv_free(e->alts);
}

static char *line_value(const char *l, size_t n, const char *key)
{
	size_t k = strlen(key);

	if (n < k || memcmp(l, key, k) != 0)
		return NULL;
	l += k;
	n -= k;
	while (n > 0 && (*l == ' '))
		l++, n--;
	while (n > 0 && (l[n - 1] == '\r' || l[n - 1] == ' '))
		n--;
	return strndup(l, n);
}

/* Splits the header off; returns the offset of the log. */
static size_t parse_header(const char *data, size_t len, struct expect *e)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - data) - pos : len - pos;
		const char *l = data + pos;
		char *v;

		pos += n + 1;
		if (n == 0 || (n == 1 && l[0] == '\r'))
			break;
		if ((v = line_value(l, n, "TITLE:"))) {
			free(e->title);
			e->title = v;
			if (!*v) /* an empty TITLE means "no crash" too */
				e->title = NULL, free(v);
		}
		else if ((v = line_value(l, n, "ALT:")))
			strv_push(&e->alts, v), free(v);
		else if ((v = line_value(l, n, "TYPE:")))
			free(e->type), e->type = v;
		else if ((v = line_value(l, n, "CORRUPTED:")))
			e->corrupted = streq(v, "Y"), free(v);
	}
	return MIN(pos, len);
}

static void count(struct counter *c, bool ok, const char *file, const char *want, const char *got)
{
	c->total++;
	if (ok)
		c->ok++;
	else
		printf("MISMATCH %-10s %s: want '%s' got '%s'\n", c->name, file, want ? want : "(none)",
		       got ? got : "(none)");
}

static int check_report(const char *path, const char *name, struct counter *title, struct counter *type,
			struct counter *corrupted)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_(report_freep) struct report *rep = NULL;
	struct expect e = {};
	size_t len, off, log_len;
	const char *end;
	const char *got;
	bool ok;
	int r;

	r = read_file_bounded(path, FILE_MAX, &data, &len);
	if (r < 0)
		return r;
	off = parse_header(data, len, &e);
	end = memmem(data + off, len - off, "\nREPORT:\n", 9);
	log_len = end ? (size_t)(end - (data + off)) : len - off;
	r = report_parse(data + off, log_len, &rep);
	if (r < 0) {
		expect_free(&e);
		return r;
	}
	got = report_title(rep);
	ok = streq_ptr(got, e.title) || (got && strv_contains(e.alts, got));
	count(title, ok, name, e.title, got);
	if (e.type) {
		const char *t = report_type(rep);
		count(type, streq(e.type, t ? t : "UNKNOWN"), name, e.type, t);
	}
	if (e.title || got)
		count(corrupted, report_corrupted(rep) == e.corrupted, name, e.corrupted ? "corrupted" : "clean",
		      report_corrupted(rep) ? report_corrupted_reason(rep) : "clean");
	expect_free(&e);
	return 0;
}

static int check_guilty(const char *path, const char *name, struct counter *guilty)
{
	_cleanup_free_ char *data = NULL, *want = NULL, *got = NULL;
	_cleanup_(report_freep) struct report *rep = NULL;
	const char *nl, *text;
	size_t len;
	int r;

	r = read_file_bounded(path, FILE_MAX, &data, &len);
	if (r < 0)
		return r;
	nl = memchr(data, '\n', len);
	if (!nl)
		return -EINVAL;
	want = line_value(data, (size_t)(nl - data), "FILE:");
	if (!want)
		return -EINVAL;
	text = nl + 1;
	if (text < data + len && *text == '\n')
		text++;
	/* Like syzkaller: parse first, so that title-specific rules apply. */
	r = report_parse(text, len - (size_t)(text - data), &rep);
	if (r < 0)
		return r;
	if (report_title(rep))
		got = strdup_safe(report_guilty_file(rep));
	else {
		r = report_guilty_file_of(text, len - (size_t)(text - data), NULL, &got);
		if (r < 0)
			return r;
	}
	count(guilty, streq(want, got ? got : ""), name, want, got);
	return 0;
}

static int walk(const char *dir, int (*fn)(const char *, const char *, void *), void *ud)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && r >= 0) {
		_cleanup_free_ char *p = NULL;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		r = fn(p, de->d_name, ud);
	}
	closedir(d);
	return r;
}

static struct counter c_title = { "title", 0, 0, 0.99 }, c_type = { "type", 0, 0, 0.95 },
		      c_corrupted = { "corrupted", 0, 0, 0.99 }, c_guilty = { "guilty", 0, 0, 0.95 };

static int report_cb(const char *p, const char *name, void *ud)
{
	int r = check_report(p, name, &c_title, &c_type, &c_corrupted);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", p, strerror(-r));
	return r;
}

static int guilty_cb(const char *p, const char *name, void *ud)
{
	int r = check_guilty(p, name, &c_guilty);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", p, strerror(-r));
	return r;
}

int main(void)
{
	_cleanup_free_ char *root = NULL, *rdir = NULL, *gdir = NULL;
	const char *env = getenv("KFIX_SYZKALLER_CORPUS");
	const char *top = getenv("top_srcdir");
	struct counter *all[] = { &c_title, &c_type, &c_corrupted, &c_guilty };
	bool fail = false;

	if (env && *env)
		root = strdup(env);
	else if (asprintf(&root, "%s/../shared/testdata/syzkaller", top ? top : ".") < 0)
		root = NULL;
	if (!root || asprintf(&rdir, "%s/report", root) < 0 || asprintf(&gdir, "%s/guilty", root) < 0)
		return 1;
	if (access(rdir, R_OK) < 0 || access(gdir, R_OK) < 0) {
		printf("SKIP: syzkaller corpus not found at %s (set KFIX_SYZKALLER_CORPUS)\n", root);
		return 77;
	}
	if (walk(rdir, report_cb, NULL) < 0 || walk(gdir, guilty_cb, NULL) < 0)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		double pct = all[i]->total ? 100.0 * all[i]->ok / all[i]->total : 0;

		printf("%-10s %4u/%-4u %6.2f%% (floor %.0f%%)\n", all[i]->name, all[i]->ok, all[i]->total, pct,
		       all[i]->floor * 100);
		if (all[i]->total == 0 || pct < all[i]->floor * 100)
			fail = true;
	}
	return fail ? 1 : 0;
}
