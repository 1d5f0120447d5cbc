/* KUnit suites in validation.  A suite lives in the kernel image (a
 * built-in test runs once, at boot, before init), so kfix does not build
 * it: it finds the suites the kernel was built with beside the changed
 * files, boots a guest per suite with kunit.enable=1 and
 * kunit.filter_glob=SUITE (the kernel's own switches, lib/kunit), and
 * reads the suite's KTAP block off the console.  See selftest.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "maintainers.h"
#include "selftest-internal.h"

#define SOURCE_MAX (1024 * 1024)
#define DIR_FILES_MAX 4096
#define CONSOLE_MAX (4 * 1024 * 1024)
#define OUTPUT_MAX (4 * 1024)
#define BLOCK_MAX (256 * 1024)
#define SUITE_TOKEN "struct kunit_suite"

bool kunit_entry(const char *name)
{
	return startswith(name, KUNIT_PREFIX);
}

bool kunit_suite_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128)
		return false;
	for (const char *p = s; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

static bool ident_char(char c)
{
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
	       c == '_';
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The string after ".name =" in an initializer [p, end), or NULL. */
static char *initializer_name(const char *p, const char *end)
{
	const char *q, *close;

	while ((q = memmem(p, (size_t)(end - p), ".name", 5))) {
		p = q + 5;
		q = skip_space(p, end);
		if (q >= end || *q != '=')
			continue;
		q = skip_space(q + 1, end);
		if (q >= end || *q != '"')
			continue;
		close = memchr(q + 1, '"', (size_t)(end - q - 1));
		return close ? strndup(q + 1, (size_t)(close - q - 1)) : NULL;
	}
	return NULL;
}

/* The .name of each "struct kunit_suite IDENT = { ... };" in a file: the
 * name filter_glob matches and the KTAP block carries. */
static int suites_in_source(const char *data, size_t len, char ***v, size_t max)
{
	const char *p = data, *end = data + len, *q;

	while ((q = memmem(p, (size_t)(end - p), SUITE_TOKEN, strlen(SUITE_TOKEN)))) {
		_cleanup_free_ char *name = NULL, *entry = NULL;
		const char *close;

		p = q + strlen(SUITE_TOKEN);
		q = skip_space(p, end);
		if (q == p || q >= end || !ident_char(*q))
			continue;
		while (q < end && ident_char(*q))
			q++;
		q = skip_space(q, end);
		if (q >= end || *q != '=')
			continue;
		q = skip_space(q + 1, end);
		if (q >= end || *q != '{' || !(close = memmem(q, (size_t)(end - q), "};", 2)))
			continue;
		name = initializer_name(q, close);
		p = close;
		if (!name || !kunit_suite_name_ok(name))
			continue;
		if (asprintf(&entry, KUNIT_PREFIX "%s", name) < 0)
			return -ENOMEM;
		if (!strv_contains(*v, entry) && strv_len(*v) < max && strv_push(v, entry) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular .c files of a folder, sorted (readdir's order is the
 * file system's). */
static int c_files(const char *path, char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	DIR *d = opendir(path);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d)) && strv_len(v) < DIR_FILES_MAX) {
		struct stat st;

		if (!endswith(de->d_name, ".c") || de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		r = strv_push(&v, de->d_name);
		if (r < 0)
			break;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (v)
		qsort(v, strv_len(v), sizeof(*v), cmp_str);
	*ret = TAKE_PTR(v);
	return 0;
}

/* A suite counts when kbuild compiled its file for this kernel: a suite
 * whose option is off has no object, and runs nowhere. */
static bool built(const char *objdir, const char *dir, const char *file)
{
	_cleanup_free_ char *o = NULL;
	struct stat st;

	if (asprintf(&o, "%s/%s/%.*s.o", objdir, dir, (int)(strlen(file) - 2), file) < 0)
		return false;
	return stat(o, &st) == 0 && S_ISREG(st.st_mode);
}


static int suites_in_file(const char *src, const char *objdir, const char *file, char ***v,
			  size_t max)
{
	_cleanup_free_ char *dir = strdup(file), *p = NULL, *data = NULL;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	size_t len;
	int r;

	if (!dir)
		return -ENOMEM;
	if (!slash || !endswith(file, ".c") || file[0] == '/' || strstr(file, "..") ||
	    strpbrk(file, "*?["))
		return 0;
	*slash = '\0';
	if (!built(objdir, dir, slash + 1))
		return 0;
	if (asprintf(&p, "%s/%s", src, file) < 0)
		return -ENOMEM;
	r = read_file_bounded(p, SOURCE_MAX, &data, &len);
	if (r == -EFBIG || r == -ENOENT)
		return 0;
	if (r < 0 || !strstr(data, "kunit_test_suite"))
		return r < 0 ? r : 0;
	return suites_in_source(data, len, v, max);
}

static int suites_in_dir(const char *src, const char *objdir, const char *dir, char ***v,
			 size_t max)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_strv_ char **files = NULL;
	int r;

	if (asprintf(&path, "%s/%s", src, dir) < 0)
		return -ENOMEM;
	r = c_files(path, &files);
	for (size_t i = 0; r >= 0 && files && files[i] && strv_len(*v) < max; i++) {
		_cleanup_free_ char *file = NULL;

		if (asprintf(&file, "%s/%s", dir, files[i]) < 0)
			return -ENOMEM;
		r = suites_in_file(src, objdir, file, v, max);
	}
	return r;
}

/* The unit tests a subsystem lists as its own: the .c files named (no
 * glob) by F: in the MAINTAINERS sections that cover a changed file, as
 * PROC SYSCTL lists kernel/sysctl-test.c beside kernel/sysctl.c. */
struct listed {
	const char *src, *objdir;
	char ***v;
	size_t max;
};

static int on_listed(const char *pattern, void *userdata)
{
	struct listed *l = userdata;
	int r;

	if (strv_len(*l->v) >= l->max)
		return 1;
	r = suites_in_file(l->src, l->objdir, pattern, l->v, l->max);
	return r < 0 ? r : 0;
}

static int suites_of_maintainers(const char *src, const char *objdir, char *const *files,
				 char ***v, size_t max)
{
	struct listed l = { src, objdir, v, max };
	int r = maintainers_each_file(src, files, on_listed, &l);

	return r < 0 ? r : 0;
}

int kunit_select(const char *src, const char *objdir, char *const *files, char ***v, size_t max)
{
	_cleanup_strv_ char **dirs = NULL;
	int r = 0;

	if (!objdir)
		return 0;
	for (size_t i = 0; files && files[i]; i++) {
		_cleanup_free_ char *dir = strdup(files[i]), *tests = NULL;
		char *slash;

		if (!dir)
			return -ENOMEM;
		slash = strrchr(dir, '/');
		if (!slash || strstr(dir, "..") || dir[0] == '/')
			continue;
		*slash = '\0';
		if (asprintf(&tests, "%s/tests", dir) < 0)
			return -ENOMEM;
		if ((!strv_contains(dirs, dir) && strv_push(&dirs, dir) < 0) ||
		    (!strv_contains(dirs, tests) && strv_push(&dirs, tests) < 0))
			return -ENOMEM;
	}
	r = suites_of_maintainers(src, objdir, files, v, max);
	for (size_t i = 0; dirs && dirs[i] && r >= 0; i++)
		r = suites_in_dir(src, objdir, dirs[i], v, max);
	return r;
}

/* --- the KTAP block --------------------------------------------------------- */

struct ktap_result {
	bool ok, skip;
	const char *name;
	size_t name_len;
};

/* "ok N NAME", "not ok N - NAME # SKIP why" (KTAP, and TAP's "- "). */
static bool ktap_result_line(const char *s, const char *end, struct ktap_result *ret)
{
	struct ktap_result k = { .ok = true };
	const char *hash;

	if ((size_t)(end - s) > 7 && memcmp(s, "not ok ", 7) == 0) {
		k.ok = false;
		s += 7;
	} else if ((size_t)(end - s) > 3 && memcmp(s, "ok ", 3) == 0) {
		s += 3;
	} else {
		return false;
	}
	if (s >= end || *s < '0' || *s > '9')
		return false;
	while (s < end && '0' <= *s && *s <= '9')
		s++;
	if (s >= end || *s != ' ')
		return false;
	s++;
	if ((size_t)(end - s) >= 2 && s[0] == '-' && s[1] == ' ')
		s += 2;
	hash = memchr(s, '#', (size_t)(end - s));
	k.name = s;
	k.name_len = (size_t)((hash ? hash : end) - s);
	while (k.name_len && k.name[k.name_len - 1] == ' ')
		k.name_len--;
	k.skip = hash && (size_t)(end - hash) >= 6 && strncasecmp(hash, "# SKIP", 6) == 0;
	*ret = k;
	return true;
}

/* A console line without printk's "[    1.234567] " stamp or a CR. */
static void console_line(const char **s, const char **end)
{
	const char *close;

	if (*end > *s && (*end)[-1] == '\r')
		(*end)--;
	if (*s < *end && **s == '[' && (close = memchr(*s, ']', (size_t)(*end - *s))) &&
	    close - *s < 24) {
		*s = close + 1;
		if (*s < *end && **s == ' ')
			(*s)++;
	}
}

struct ktap_walk {
	const char *suite;
	bool found, done;
	size_t indent;	/* the "# Subtest:" line's: its cases are there too */
	unsigned passed, failed, skipped;
	struct ktap_result result;
	struct buf block;
};

static void ktap_line(struct ktap_walk *w, const char *s, const char *end)
{
	const char *body = s;
	struct ktap_result k;
	size_t indent;

	while (body < end && *body == ' ')
		body++;
	indent = (size_t)(body - s);
	if (!w->found) {
		size_t n = strlen(w->suite);

		if ((size_t)(end - body) == 11 + n && memcmp(body, "# Subtest: ", 11) == 0 &&
		    memcmp(body + 11, w->suite, n) == 0) {
			w->found = true;
			w->indent = indent;
			(void)buf_append_trunc(&w->block, s, (size_t)(end - s));
			(void)buf_append_trunc(&w->block, "\n", 1);
		}
		return;
	}
	(void)buf_append_trunc(&w->block, s, (size_t)(end - s));
	(void)buf_append_trunc(&w->block, "\n", 1);
	if (!ktap_result_line(body, end, &k))
		return;
	if (indent < w->indent && k.name_len == strlen(w->suite) &&
	    memcmp(k.name, w->suite, k.name_len) == 0) {
		w->result = k;
		w->done = true;
	} else if (indent == w->indent) {
		if (k.skip)
			w->skipped++;
		else if (k.ok)
			w->passed++;
		else
			w->failed++;
	}
}

int kunit_parse(const char *console, size_t len, const char *suite,
		struct selftest_result *res)
{
	struct ktap_walk w = { .suite = suite, .block = BUF_INIT(BLOCK_MAX) };
	const char *p = console, *end = console + len;
	int r = 0;

	while (p < end && !w.done) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *s = p, *e;

		e = eol ? eol : end;
		console_line(&s, &e);
		ktap_line(&w, s, e);
		p = eol ? eol + 1 : end;
	}
	res->exit_status = -1;
	if (!w.found) {
		res->status = SELFTEST_NOT_RUN;
		res->output = strdup("the kernel ran no KUnit suite of this name: it was built "
				     "without it (or without CONFIG_KUNIT)");
	} else {
		res->status = !w.done ? SELFTEST_FAIL : w.result.skip ? SELFTEST_SKIP :
			      w.result.ok ? SELFTEST_PASS : SELFTEST_FAIL;
		res->exit_status = (int)w.failed;
		if (!w.done)
			(void)buf_puts(&w.block,
				       "(the suite printed no result: it did not finish)\n");
		(void)buf_printf(&w.block, "(%u case(s) passed, %u failed, %u skipped)\n", w.passed,
				 w.failed, w.skipped);
		res->output = str_printable_tail(w.block.data ? w.block.data : "", w.block.len,
						 OUTPUT_MAX);
	}
	if (!res->output)
		r = -ENOMEM;
	buf_free(&w.block);
	return r;
}

/* --- a guest per suite ------------------------------------------------------ */

int kunit_run(const struct vm_opts *vmo, const struct vm_backend *b, const char *kernel,
	      const char *suite, struct selftest_result *res, char **ret_error)
{
	_cleanup_free_ char *cmdline = NULL, *msg = NULL, *console = NULL;
	struct vm_opts o = *vmo;
	enum vm_failure failure = VM_OK;
	struct vm *vm = NULL;
	size_t len = 0;
	int r;

	if (!kunit_suite_name_ok(suite))
		return -EINVAL;
	if (asprintf(&cmdline, "%s%skunit.enable=1 kunit.filter_glob=%s",
		     vmo->cmdline ? vmo->cmdline : "", vmo->cmdline ? " " : "", suite) < 0)
		return -ENOMEM;
	o.cmdline = cmdline;
	r = b->start(&o, kernel, &vm, &failure, &msg);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && failure == VM_NO_BOOT) {
		/* the suite runs before init: a kernel it crashes never
		 * answers, and the console story says how; one that never
		 * crashed was still in the suite at the boot time-out */
		bool crash = msg && strstr(msg, VM_BOOT_CRASH_STORY);

		res->status = crash ? SELFTEST_CRASH : SELFTEST_TIMEOUT;
		res->exit_status = -1;
		if (crash) {
			const char *t = strstr(msg, VM_BOOT_CRASH_STORY) +
					strlen(VM_BOOT_CRASH_STORY);

			res->title = strndup(t, strcspn(t, ";"));
			res->output = strdup(msg);
		} else
			res->output = strdup(msg ? msg : "the guest did not come up");
		return res->output && (!crash || res->title) ? 0 : -ENOMEM;
	}
	if (r < 0)
		return error_set(ret_error, 0, "the guest did not start: %s",
				 msg ? msg : strerror(-r));
	r = b->console(vm, CONSOLE_MAX, &console, &len);
	b->stop(vm);
	if (r < 0)
		return r;
	return kunit_parse(console, len, suite, res);
}
