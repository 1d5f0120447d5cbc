/* See tags.h.  Universal Ctags rather than cscope or clang's index: it
 * is one Debian package, needs no compilation database (the kernel's
 * configuration decides what clang would see), indexes the whole tree in
 * about twenty seconds on two cores, takes a regex for the
 * SYSCALL_DEFINEn macros, and writes a sorted text file a binary search
 * can use in place. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/strutil.h"
#include "sandbox.h"
#include "tags.h"

#define CTAGS_TIMEOUT_USEC (30 * 60 * 1000000ull)

struct tags {
	const char *data;
	size_t len;
};

int tags_build(const char *src_dir, const char *path_in, char **ret_error)
{
	_cleanup_free_ char *tmp = NULL, *out = NULL, *abs_path = NULL, *abs_src = NULL;
	const char *path = path_in;
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = {};
	int r;

	/* the sandbox binds folders by absolute path */
	abs_src = realpath(src_dir, NULL);
	if (!abs_src)
		return -errno;
	if (path[0] != '/') {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd || asprintf(&abs_path, "%s/%s", cwd, path) < 0)
			return -ENOMEM;
		path = abs_path;
	}
	src_dir = abs_src;
	if (asprintf(&tmp, "%s.tmp", path) < 0 || asprintf(&out, "-f%s", tmp) < 0)
		return -ENOMEM;
	{
		/* Generated register maps (asic_reg: millions of macros) and
		 * user-space tools are left out; grep still finds them. */
		char *const argv[] = {
			"ctags", "-R", "--languages=C", "--langmap=C:.c.h", "--kinds-C=defgmstuv",
			"--excmd=number", "--fields=K", "--sort=yes",
			"--regex-C=/^(COMPAT_)?SYSCALL_DEFINE[0-6]\\(([a-zA-Z0-9_]+)/\\2/f/",
			"--exclude=.git", "--exclude=.kfix*", "--exclude=tools", "--exclude=Documentation",
			"--exclude=asic_reg", out, ".", NULL,
		};

		_cleanup_free_ char *dir = strdup(path);
		_cleanup_strv_ char **cmd = NULL;
		struct sandbox sb = { .kind = SANDBOX_BWRAP, .n_ro = 1, .n_rw = 1,
				      .ro = { src_dir }, .chdir = src_dir };

		if (!dir || !strrchr(dir, '/'))
			return -EINVAL;
		*strrchr(dir, '/') = '\0';
		sb.rw[0] = dir;
		/* the tree is text from the internet: its parser sees nothing else */
		if (sandbox_available(SANDBOX_BWRAP) < 0)
			sb.kind = SANDBOX_NONE;
		r = sandbox_argv(&sb, argv, false, &cmd);
		if (r < 0)
			return r;
		po.cwd = src_dir;
		po.timeout_usec = CTAGS_TIMEOUT_USEC;
		po.output_max = 16 * 1024;
		r = proc_run(cmd, &po, &pr);
	}
	if (r < 0) {
		*ret_error = strdup(r == -ENOENT ? "ctags is not installed (universal-ctags)" :
				    strerror(-r));
		(void)unlink(tmp);
		return r;
	}
	if (pr.exit_code != 0 || pr.timed_out) {
		if (asprintf(ret_error, "ctags failed (%s): %.300s", pr.timed_out ? "timed out" : "exit",
			     pr.output ?: "") < 0)
			*ret_error = NULL;
		proc_result_free(&pr);
		(void)unlink(tmp);
		return -EIO;
	}
	proc_result_free(&pr);
	if (rename(tmp, path) < 0) {
		r = -errno;
		(void)unlink(tmp);
		*ret_error = strdup(strerror(-r));
		return r;
	}
	return 0;
}

int tags_open(const char *path, struct tags **ret)
{
	struct tags *t;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	t = malloc(sizeof(*t));
	if (!t) {
		munmap(m, (size_t)st.st_size);
		return -ENOMEM;
	}
	*t = (struct tags){ m, (size_t)st.st_size };
	*ret = t;
	return 0;
}

void tags_free(struct tags *t)
{
	if (!t)
		return;
	munmap((void *)t->data, t->len);
	free(t);
}

static const char *line_start(const struct tags *t, size_t at)
{
	while (at > 0 && t->data[at - 1] != '\n')
		at--;
	return t->data + at;
}

static const char *line_next(const struct tags *t, const char *l)
{
	const char *e = memchr(l, '\n', t->len - (size_t)(l - t->data));

	return e ? e + 1 : t->data + t->len;
}

/* Compares the name field of line l with name. */
static int cmp_name(const struct tags *t, const char *l, const char *name)
{
	size_t n = strlen(name), left = t->len - (size_t)(l - t->data);
	const char *tab = memchr(l, '\t', left);
	size_t ln = tab ? (size_t)(tab - l) : left;
	int c = memcmp(l, name, ln < n ? ln : n);

	return c ? c : ln < n ? -1 : ln > n ? 1 : 0;
}

/* One entry: name\tfile\tline;"\tkind */
static int report(const char *l, const char *end, tags_fn fn, void *ud)
{
	char file[4096], kind[32];
	const char *f = memchr(l, '\t', (size_t)(end - l)), *g, *k;
	unsigned line;

	if (!f || !(g = memchr(f + 1, '\t', (size_t)(end - f - 1))) || (size_t)(g - f - 1) >= sizeof(file))
		return 0;
	memcpy(file, f + 1, (size_t)(g - f - 1));
	file[g - f - 1] = '\0';
	line = (unsigned)strtoul(g + 1, NULL, 10);
	k = memchr(g + 1, '\t', (size_t)(end - g - 1));
	snprintf(kind, sizeof(kind), "%.*s", k ? (int)strcspn(k + 1, "\n") : 0, k ? k + 1 : "");
	return line ? fn(file, line, kind, ud) : 0;
}

int tags_find(const struct tags *t, const char *name, tags_fn fn, void *ud)
{
	size_t lo = 0, hi = t->len;
	const char *l;

	/* the first line whose name is not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = line_start(t, mid);

		if (m[0] == '!' || cmp_name(t, m, name) < 0)
			lo = (size_t)(line_next(t, m) - t->data);
		else
			hi = (size_t)(m - t->data);
	}
	for (l = line_start(t, lo); l < t->data + t->len; l = line_next(t, l)) {
		int r;

		if (l[0] == '!')
			continue;
		if (cmp_name(t, l, name) != 0)
			break;
		r = report(l, line_next(t, l), fn, ud);
		if (r)
			return r < 0 ? r : 0;
	}
	return 0;
}
