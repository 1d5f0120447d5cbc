/* The local build backend: make runs on this machine, sandboxed, in the
 * source and O= folder given.  build.c drives it through
 * build_backend_local like any other backend. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build-internal.h"
#include "common/fileio.h"
#include "common/strutil.h"

static int make_argv(const struct build_opts *o, const char *objdir, char *const *targets,
		     char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	_cleanup_free_ char *c = NULL, *ob = NULL, *j = NULL;
	long jobs = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);

	if (asprintf(&c, "-C%s", o->src) < 0 || asprintf(&ob, "O=%s", objdir) < 0 ||
	    asprintf(&j, "-j%ld", jobs > 0 ? jobs : 1) < 0)
		return -ENOMEM;
	if (strv_push(&v, "make") < 0 || strv_push(&v, c) < 0 || strv_push(&v, ob) < 0 ||
	    strv_push(&v, j) < 0)
		return -ENOMEM;
	if (o->ccache && strv_push(&v, "CC=ccache gcc") < 0)
		return -ENOMEM;
	for (size_t i = 0; targets[i]; i++)
		if (strv_push(&v, targets[i]) < 0)
			return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

/* The local backend: make runs here, in the source and objdir given. */
static int local_open(const struct build_opts *o, const char *objdir,
		      struct build_result *res, struct build_host **ret)
{
	struct build_host *h = calloc(1, sizeof(*h));

	(void)res;
	if (!h)
		return -ENOMEM;
	h->o = o;
	h->objdir = objdir;
	*ret = h;
	return 0;
}

static const char *local_src(struct build_host *h)
{
	return h->o->src;
}

static const char *local_objdir(struct build_host *h)
{
	return h->objdir;
}

static int local_put_config(struct build_host *h, const char *data, size_t len)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/.config", h->objdir) < 0)
		return -ENOMEM;
	return write_file_atomic(p, data, len, 0644);
}

static int local_get_config(struct build_host *h, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/.config", h->objdir) < 0)
		return -ENOMEM;
	return read_file_bounded(p, max, ret, ret_len);
}

/* A make killed outright (kfix killed, the sandbox torn down) leaves
 * truncated objects that look up to date to the next make.  A marker
 * lives in the O= folder while make runs; when one is found, what was
 * written after it is removed so that make builds it again. */
#define BUILDING_MARK ".kfix-building"

static struct timespec mark_time;

static bool is_build_output(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	return endswith(base, ".o") || endswith(base, ".a") || endswith(base, ".ko") ||
	       startswith(base, "vmlinux") || streq(base, "bzImage");
}

static int drop_newer(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && is_build_output(path) &&
	    (st->st_mtim.tv_sec > mark_time.tv_sec ||
	     (st->st_mtim.tv_sec == mark_time.tv_sec && st->st_mtim.tv_nsec >= mark_time.tv_nsec)))
		(void)unlink(path);
	return 0;
}

static int interrupted_build_cleanup(const char *objdir)
{
	_cleanup_free_ char *mark = NULL;
	struct stat st;

	if (asprintf(&mark, "%s/" BUILDING_MARK, objdir) < 0)
		return -ENOMEM;
	if (stat(mark, &st) == 0) {
		/* one build at a time holds the objdir's lock: no race here */
		mark_time = st.st_mtim;
		(void)nftw(objdir, drop_newer, 32, FTW_PHYS | FTW_MOUNT);
	}
	return write_file_atomic(mark, "", 0, 0644);
}

static void building_done(const char *objdir)
{
	_cleanup_free_ char *mark = NULL;

	if (asprintf(&mark, "%s/" BUILDING_MARK, objdir) >= 0)
		(void)unlink(mark);
}

static int local_make(struct build_host *h, char *const *targets, int log_fd, struct follow *f)
{
	_cleanup_strv_ char **argv = NULL, **boxed = NULL;
	_cleanup_free_ char *ccache = NULL;
	struct sandbox sb = { .kind = h->o->sandbox, .ro = { h->o->src }, .n_ro = 1,
			      .rw = { h->objdir }, .n_rw = 1 };
	int r;

	r = make_argv(h->o, h->objdir, targets, &argv);
	if (r < 0)
		return r;
	/* ccache keeps its cache in the home the sandbox hides */
	if (h->o->ccache) {
		const char *dir = getenv("CCACHE_DIR");

		if (dir)
			ccache = strdup(dir);
		else if (getenv("HOME") && asprintf(&ccache, "%s/.cache/ccache", getenv("HOME")) < 0)
			ccache = NULL;
		/* inside, HOME is /tmp: CCACHE_DIR (allowed through) says where */
		if (ccache && ccache[0] == '/' && mkdir_p(ccache, 0700) >= 0) {
			sb.rw[sb.n_rw++] = ccache;
			if (!dir)
				(void)setenv("CCACHE_DIR", ccache, 0);
		}
	}
	r = sandbox_argv(&sb, argv, false, &boxed);
	if (r < 0)
		return r;
	r = interrupted_build_cleanup(h->objdir);
	if (r < 0)
		return r;
	r = run_tool(boxed, h->o->timeout_usec, log_fd, f, NULL);
	building_done(h->objdir);
	return r;
}

static int local_fetch(struct build_host *h, const char *rel)
{
	(void)h;
	(void)rel;
	return 0;
}

static void local_close(struct build_host *h)
{
	free(h);
}

const struct build_backend build_backend_local = {
	.name = "local",
	.open = local_open,
	.src = local_src,
	.objdir = local_objdir,
	.put_config = local_put_config,
	.get_config = local_get_config,
	.make = local_make,
	.fetch = local_fetch,
	.close = local_close,
};
