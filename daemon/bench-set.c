/* Reading a benchmark dataset (kfixctl(1)): every member checked, every
 * path made absolute against the dataset's folder, nothing trusted. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"

static void bug_clear(struct bench_bug *b)
{
	free(b->id);
	free(b->title);
	free(b->crash_type);
	free(b->src);
	free(b->kconfig);
	free(b->repro_c);
	free(b->repro_syz);
	free(b->report);
	free(b->fix_diff);
	free(b->cassette);
	free(b->agent_conf);
	free(b->commit);
	free(b->fix_commit);
	free(b->syzbot_id);
	strv_free(b->hints);
}

void bench_set_free(struct bench_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		bug_clear(&s->bugs[i]);
	free(s->bugs);
	free(s->name);
	free(s->path);
	free(s);
}

const struct bench_bug *bench_set_find(const struct bench_set *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (streq(s->bugs[i].id, id))
			return &s->bugs[i];
	return NULL;
}

/* An id names a folder of the run: letters, digits, '.', '_', '-'. */
static bool id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > BENCH_ID_MAX || id[0] == '.' || id[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
			return false;
	return true;
}

/* A revision is handed to libgit2: hex, names and ^~ only. */
static bool rev_valid(const char *rev)
{
	size_t n = strlen(rev);

	if (n == 0 || n > 256 || rev[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)rev[i]) && !strchr("._-/^~", rev[i]))
			return false;
	return true;
}

struct loader {
	const char *dir;
	char **error;
	const char *bug; /* for messages */
};

static int bad(struct loader *l, const char *what, const char *key)
{
	return error_set(l->error, -EINVAL, "bug %s: %s %s", l->bug ? l->bug : "?", key, what);
}

/* A path member: relative to the dataset's folder. */
static int get_path(struct loader *l, const json_t *o, const char *key, char **ret)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);

	if (!v || json_is_null(v))
		return 0;
	if (!s || !*s || strlen(s) > PATH_MAX || memchr(s, '\n', strlen(s)))
		return bad(l, "is not a path", key);
	if (s[0] == '/')
		*ret = strdup(s);
	else if (asprintf(ret, "%s/%s", l->dir, s) < 0)
		*ret = NULL;
	return *ret ? 0 : -ENOMEM;
}

static int get_text(struct loader *l, const json_t *o, const char *key, size_t max, char **ret)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);

	if (!v || json_is_null(v))
		return 0;
	if (!s || strlen(s) > max || !utf8_valid(s, strlen(s)))
		return bad(l, "is not a short UTF-8 string", key);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int get_hints(struct loader *l, const json_t *o, char ***ret)
{
	const json_t *v = json_object_get(o, "hints"), *h;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > BENCH_HINTS_MAX)
		return bad(l, "is not a list of at most 32 paths", "hints");
	json_array_foreach(v, i, h) {
		const char *s = json_string_value(h);

		if (!s || !*s || strlen(s) > 512 || s[0] == '/' || strstr(s, "..") || strchr(s, '\n'))
			return bad(l, "holds a path that is not relative to the tree", "hints");
		if (strv_push(ret, s) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int bug_load(struct loader *l, const json_t *o, const json_t *dflt, struct bench_bug *b)
{
	static const char *const known[] = {
		"id", "title", "crash_type", "src", "commit", "config", "repro_c", "repro_syz",
		"report", "fix_commit", "fix_diff", "hints", "cassette", "agent_conf", "syzbot_id", NULL
	};
	const char *key;
	json_t *v;
	int r;

	if (!json_is_object(o))
		return error_set(l->error, -EINVAL, "a bug is not an object");
	r = get_text(l, o, "id", BENCH_ID_MAX, &b->id);
	if (r < 0)
		return r;
	if (!b->id || !id_valid(b->id))
		return error_set(l->error, -EINVAL, "a bug's id is missing or not [A-Za-z0-9._-]{1,64}");
	l->bug = b->id;
	json_object_foreach((json_t *)o, key, v) {
		bool ok = false;

		for (size_t i = 0; known[i] && !ok; i++)
			ok = streq(known[i], key);
		if (!ok)
			return bad(l, "is not a member of a bug", key);
	}
	/* a member the bug lacks comes from "defaults" */
#define FROM(key) (json_object_get(o, key) ? o : dflt)
	r = get_text(l, o, "title", 512, &b->title);
	if (r >= 0)
		r = get_text(l, o, "crash_type", 128, &b->crash_type);
	if (r >= 0)
		r = get_path(l, FROM("src"), "src", &b->src);
	if (r >= 0)
		r = get_text(l, FROM("commit"), "commit", 256, &b->commit);
	if (r >= 0)
		r = get_path(l, FROM("config"), "config", &b->kconfig);
	if (r >= 0)
		r = get_path(l, o, "repro_c", &b->repro_c);
	if (r >= 0)
		r = get_path(l, o, "repro_syz", &b->repro_syz);
	if (r >= 0)
		r = get_path(l, o, "report", &b->report);
	if (r >= 0)
		r = get_text(l, o, "fix_commit", 256, &b->fix_commit);
	if (r >= 0)
		r = get_path(l, o, "fix_diff", &b->fix_diff);
	if (r >= 0)
		r = get_path(l, o, "cassette", &b->cassette);
	if (r >= 0)
		r = get_path(l, FROM("agent_conf"), "agent_conf", &b->agent_conf);
	if (r >= 0)
		r = get_text(l, o, "syzbot_id", 64, &b->syzbot_id);
	if (r >= 0)
		r = get_hints(l, o, &b->hints);
#undef FROM
	if (r < 0)
		return r;
	if (!b->title || !b->report)
		return bad(l, "is missing", b->title ? "report" : "title");
	if (!b->fix_diff == !b->fix_commit)
		return bad(l, "or fix_diff: exactly one is needed", "fix_commit");
	if ((b->commit && !rev_valid(b->commit)) || (b->fix_commit && !rev_valid(b->fix_commit)))
		return bad(l, "is not a revision", b->commit && !rev_valid(b->commit) ? "commit" : "fix_commit");
	if (b->syzbot_id && !id_valid(b->syzbot_id))
		return bad(l, "is not a syzbot id", "syzbot_id");
	if (!b->crash_type && !(b->crash_type = bench_crash_type(b->title)))
		return -ENOMEM;
	return 0;
}

static int set_parse(struct bench_set *s, const json_t *j, struct loader *l)
{
	const json_t *bugs = json_object_get(j, "bugs"), *dflt = json_object_get(j, "defaults");
	const char *format = json_get_str(j, "format");
	_cleanup_json_ json_t *none = json_object();
	int r;

	if (!format || !streq(format, BENCH_FORMAT))
		return error_set(l->error, -EINVAL, "format is not \"%s\"", BENCH_FORMAT);
	if (dflt && !json_is_object(dflt))
		return error_set(l->error, -EINVAL, "defaults is not an object");
	if (!json_is_array(bugs) || json_array_size(bugs) == 0 ||
	    json_array_size(bugs) > BENCH_BUGS_MAX)
		return error_set(l->error, -EINVAL, "bugs is not a list of 1 to %u bugs", BENCH_BUGS_MAX);
	r = get_text(l, j, "name", 128, &s->name);
	if (r < 0)
		return r;
	if (!s->name && !(s->name = strdup("dataset")))
		return -ENOMEM;
	s->bugs = calloc(json_array_size(bugs), sizeof(*s->bugs));
	if (!s->bugs || !none)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(bugs); i++) {
		l->bug = NULL;
		r = bug_load(l, json_array_get(bugs, i), dflt ? dflt : none, &s->bugs[s->n++]);
		if (r < 0)
			return r;
		if (bench_set_find(s, s->bugs[s->n - 1].id) != &s->bugs[s->n - 1])
			return error_set(l->error, -EINVAL, "bug %s: the id is given twice", s->bugs[s->n - 1].id);
	}
	return 0;
}

int bench_set_load(const char *path, struct bench_set **ret, char **ret_error)
{
	_cleanup_(bench_set_freep) struct bench_set *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *file = NULL, *dir = NULL, *text = NULL, *real = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct stat st;
	json_error_t je;
	size_t len = 0;
	int r;

	if (!s)
		return -ENOMEM;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		r = asprintf(&file, "%s/dataset.json", path) < 0 ? -ENOMEM : 0;
	else
		r = (file = strdup(path)) ? 0 : -ENOMEM;
	if (r < 0)
		return r;
	real = realpath(file, NULL);
	if (!real)
		return error_set(ret_error, -errno, "%s: %s", file, strerror(errno));
	r = read_file_bounded(real, BENCH_SET_MAX, &text, &len);
	if (r < 0)
		return error_set(ret_error, r, "%s: %s", real, r == -E2BIG ? "larger than 4 MiB" : strerror(-r));
	r = json_parse_bounded(text, len, BENCH_SET_MAX, &j, &je);
	if (r < 0 || !json_is_object(j))
		return error_set(ret_error, -EINVAL, "%s: not a JSON object%s%s", real, r < 0 ? ": " : "",
				 r < 0 ? je.text : "");
	dir = strdup(real);
	if (!dir)
		return -ENOMEM;
	*strrchr(dir, '/') = '\0';
	r = set_parse(s, j, &(struct loader){ .dir = *dir ? dir : "/", .error = ret_error });
	if (r < 0)
		return r;
	s->path = TAKE_PTR(real);
	*ret = TAKE_PTR(s);
	return 0;
}

char *bench_crash_type(const char *title)
{
	static const char *const access[] = { " Read", " Write", NULL };
	const char *in = strstr(title, " in ");
	size_t n = in ? (size_t)(in - title) : strlen(title);

	/* "... Read" / "... Write": the access, not the kind of bug */
	for (size_t i = 0; access[i]; i++) {
		size_t a = strlen(access[i]);

		if (n > a && strncmp(title + n - a, access[i], a) == 0) {
			n -= a;
			break;
		}
	}
	while (n > 0 && isspace((unsigned char)title[n - 1]))
		n--;
	return strndup(title, n);
}
