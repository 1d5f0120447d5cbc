/* Which kselftests cover a patch: the selftests folders MAINTAINERS lists
 * beside the changed files, then folders named like their directories.
 * See selftest.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/strutil.h"
#include "maintainers.h"
#include "selftest-internal.h"

#define SELFTESTS "tools/testing/selftests/"

/* A target or test name from the tree or the config: a relative path of
 * plain words, nothing a shell or a path walk could take for more. */
static bool safe_name(const char *s, bool slash_ok)
{
	if (!*s || *s == '/' || *s == '.' || strlen(s) > 128 || strstr(s, "..") ||
	    strstr(s, "//") || endswith(s, "/"))
		return false;
	for (const char *p = s; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || strchr("_.+-", *p) || (slash_ok && *p == '/')))
			return false;
	return true;
}

/* A target is a selftests folder with a Makefile. */
static bool is_target(const char *src, const char *target)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (!safe_name(target, true) || asprintf(&p, "%s/" SELFTESTS "%s/Makefile", src, target) < 0)
		return false;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int add_unique(char ***v, const char *s)
{
	if (strv_contains(*v, s))
		return 0;
	if (strv_len(*v) >= SELFTEST_MAX_TARGETS)
		return 0;
	return strv_push(v, s);
}

/* The target of an F: entry under tools/testing/selftests/: the deepest
 * folder with a Makefile that holds it. */
static int target_of(const char *src, const char *entry, char ***v)
{
	_cleanup_free_ char *t = strdup(entry + strlen(SELFTESTS));
	char *slash;

	if (!t)
		return -ENOMEM;
	t[strcspn(t, "*?[")] = '\0';
	while (*t) {
		size_t n = strlen(t);

		if (t[n - 1] == '/')
			t[n - 1] = '\0';
		else if (is_target(src, t))
			return add_unique(v, t);
		else if ((slash = strrchr(t, '/')))
			*slash = '\0';
		else
			break;
	}
	return 0;
}

/* The selftests folders of the sections that cover a changed file. */
struct listed {
	const char *src;
	char ***v;
};

static int on_listed(const char *pattern, void *userdata)
{
	struct listed *l = userdata;

	return startswith(pattern, SELFTESTS) ? target_of(l->src, pattern, l->v) : 0;
}

static int by_maintainers(const char *src, char *const *files, char ***v)
{
	struct listed l = { src, v };

	return maintainers_each_file(src, files, on_listed, &l);
}

/* ipc/msg.c -> "ipc"; net/mptcp/x.c -> "net/mptcp"; fs/ext4/x.c ->
 * "fs/ext4", else "ext4", else "fs". */
static int by_directory(const char *src, char *const *files, char ***v)
{
	int r = 0;

	for (size_t i = 0; files && files[i] && r >= 0; i++) {
		_cleanup_free_ char *dir = strdup(files[i]);
		char *slash;

		if (!dir)
			return -ENOMEM;
		/* the deepest folder that has tests, only */
		while ((slash = strrchr(dir, '/'))) {
			const char *base;

			*slash = '\0';
			base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
			if (is_target(src, dir) || is_target(src, base)) {
				r = add_unique(v, is_target(src, dir) ? dir : base);
				break;
			}
		}
	}
	return r;
}

static int parse_list(const char *src, const char *spec, char ***v, char **ret_error)
{
	_cleanup_free_ char *copy = strdup(spec);
	char *w, *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (w = strtok_r(copy, " ,\t", &save); w; w = strtok_r(NULL, " ,\t", &save)) {
		char *colon = strchr(w, ':');

		if (kunit_entry(w)) {
			if (!kunit_suite_name_ok(w + strlen(KUNIT_PREFIX)))
				return error_set(ret_error, -EINVAL, "selftests: '%.80s' is not "
						 "kunit:SUITE", w);
			colon = NULL;
		} else if (colon)
			*colon = '\0';
		if (!kunit_entry(w) &&
		    (!safe_name(w, true) || (colon && !safe_name(colon + 1, false))))
			return error_set(ret_error, -EINVAL, "selftests: '%.80s' is not TARGET, "
					 "TARGET:TEST or kunit:SUITE", w);
		if (src && !kunit_entry(w) && !is_target(src, w))
			return error_set(ret_error, -EINVAL, "selftests: the tree has no %s%s",
					 SELFTESTS, w);
		if (colon)
			*colon = ':';
		if (strv_len(*v) >= SELFTEST_MAX_TESTS)
			return error_set(ret_error, -E2BIG, "selftests: more than %d entries",
					 SELFTEST_MAX_TESTS);
		if (!strv_contains(*v, w) && strv_push(v, w) < 0)
			return -ENOMEM;
	}
	return 0;
}

int selftest_select(const char *src, const char *objdir, const char *spec, char *const *files,
		    char ***ret, char **ret_error)
{
	_cleanup_strv_ char **v = NULL;
	int r = 0;

	if (!spec)
		spec = "auto";
	spec += strspn(spec, " \t");
	if (streq(spec, "auto")) {
		r = by_maintainers(src, files, &v);
		if (r >= 0)
			r = by_directory(src, files, &v);
		if (r >= 0)
			r = kunit_select(src, objdir, files, &v, SELFTEST_MAX_TARGETS);
	} else if (!streq(spec, "none") && *spec)
		r = parse_list(src, spec, &v, ret_error);
	if (r < 0)
		return r;
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

int selftest_patch_files(const char *patch, size_t len, char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	const char *p = patch, *end = patch + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > 6 &&
		    (strncmp(p, "+++ b/", 6) == 0 || strncmp(p, "--- a/", 6) == 0)) {
			const char *name = p + 6, *tab = memchr(name, '\t', (size_t)(eol - name));
			_cleanup_free_ char *f = strndup(name, (size_t)((tab ? tab : eol) - name));

			if (!f)
				return -ENOMEM;
			if (!strstr(f, "..") && !strv_contains(v, f) && strv_len(v) < 1000 &&
			    strv_push(&v, f) < 0)
				return -ENOMEM;
		}
		p = eol + 1;
	}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}
