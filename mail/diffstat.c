/* The diffstat of a patch mail, laid out as git format-patch does.
 *
 * libgit2 reads the diff (git_diff_from_buffer: hunk line counts, so a
 * removed line reading "-- x" is not taken for a file header); the layout
 * follows git's show_stats() and print_stat_summary() in diff.c (git
 * v2.39): a 72-column stat (MAIL_DEFAULT_WRAP), long names cut to
 * ".../tail" at a slash, the graph scaled by scale_linear().  libgit2's
 * own git_diff_stats_to_buf() lays it out differently (no name cut; one
 * deletion beside many insertions drawn as "+-"), so it is not used. */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>

#include "diffstat-internal.h"

#define DIFFSTAT_WIDTH 72
#define DIFFSTAT_FILES_MAX 512

struct fstat {
	const char *name; /* points into the git_diff */
	size_t add, del;
};

DEFINE_CLEANUP(git_diff, git_diff_free)
DEFINE_CLEANUP(git_patch, git_patch_free)

static int decimal_width(size_t v)
{
	int w = 1;

	while (v >= 10)
		v /= 10, w++;
	return w;
}

/* git: at least one mark for a non-zero count */
static size_t scale_linear(size_t it, size_t width, size_t max_change)
{
	return it ? 1 + it * (width - 1) / max_change : 0;
}

static int read_stats(git_diff *d, struct fstat *f, size_t *ret_n)
{
	size_t n = MIN(git_diff_num_deltas(d), (size_t)DIFFSTAT_FILES_MAX);

	for (size_t i = 0; i < n; i++) {
		_cleanup_(git_patch_freep) git_patch *p = NULL;
		const git_diff_delta *dd = git_diff_get_delta(d, i);

		if (git_patch_from_diff(&p, d, i) < 0 ||
		    git_patch_line_stats(NULL, &f[i].add, &f[i].del, p) < 0)
			return -EINVAL;
		f[i].name = dd->status == GIT_DELTA_DELETED ? dd->old_file.path : dd->new_file.path;
	}
	*ret_n = n;
	return 0;
}

/* One line " name | N +++--" of git's layout. */
static int put_line(struct buf *out, const struct fstat *f, int name_width, int number_width,
		    size_t graph_width, size_t max_change)
{
	const char *name = f->name, *prefix = "";
	int len = name_width, name_len = (int)strlen(name);
	size_t add = f->add, del = f->del;

	if (name_width < name_len) {
		const char *slash;

		prefix = "...";
		len = MAX(len - 3, 0);
		name += name_len - len;
		slash = strchr(name, '/');
		if (slash)
			name = slash;
	}
	if (graph_width <= max_change) {
		size_t total = scale_linear(add + del, graph_width, max_change);

		if (total < 2 && add && del)
			total = 2;
		if (add < del) {
			add = scale_linear(add, graph_width, max_change);
			del = total - add;
		} else {
			del = scale_linear(del, graph_width, max_change);
			add = total - del;
		}
	}
	if (buf_printf(out, " %s%s%*s | %*zu%s", prefix, name, MAX(len - (int)strlen(name), 0), "",
		       number_width, f->add + f->del, f->add + f->del ? " " : "") < 0)
		return -E2BIG;
	for (size_t k = 0; k < add + del; k++)
		if (buf_puts(out, k < add ? "+" : "-") < 0)
			return -E2BIG;
	return buf_puts(out, "\n") < 0 ? -E2BIG : 0;
}

static int layout(const struct fstat *f, size_t n, struct buf *out)
{
	size_t max_change = 0, graph_width, ins = 0, del = 0;
	int max_len = 0, number_width, name_width, width = DIFFSTAT_WIDTH;

	for (size_t i = 0; i < n; i++) {
		max_len = MAX(max_len, (int)strlen(f[i].name));
		max_change = MAX(max_change, f[i].add + f[i].del);
		ins += f[i].add;
		del += f[i].del;
	}
	number_width = decimal_width(max_change);
	graph_width = max_change;
	name_width = max_len;
	if (name_width + number_width + 6 + (int)graph_width > width) {
		int g = width * 3 / 8 - number_width - 6;

		if ((int)graph_width > g)
			graph_width = (size_t)MAX(g, 6);
		if (name_width > width - number_width - 6 - (int)graph_width)
			name_width = width - number_width - 6 - (int)graph_width;
		else
			graph_width = (size_t)(width - number_width - 6 - name_width);
	}
	for (size_t i = 0; i < n; i++)
		if (put_line(out, &f[i], name_width, number_width, graph_width, max_change) < 0)
			return -E2BIG;
	if (buf_printf(out, " %zu file%s changed", n, n == 1 ? "" : "s") < 0 ||
	    ((ins || !del) && buf_printf(out, ", %zu insertion%s(+)", ins, ins == 1 ? "" : "s") < 0) ||
	    ((del || !ins) && buf_printf(out, ", %zu deletion%s(-)", del, del == 1 ? "" : "s") < 0) ||
	    buf_puts(out, "\n") < 0)
		return -E2BIG;
	return 0;
}

/* git's --summary lines for created and deleted files. */
static int summary(git_diff *d, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);

		if (dd->status == GIT_DELTA_ADDED &&
		    buf_printf(out, " create mode %06o %s\n", dd->new_file.mode, dd->new_file.path) < 0)
			return -E2BIG;
		if (dd->status == GIT_DELTA_DELETED &&
		    buf_printf(out, " delete mode %06o %s\n", dd->old_file.mode, dd->old_file.path) < 0)
			return -E2BIG;
	}
	return 0;
}

static int format(const char *diff, struct buf *out)
{
	_cleanup_(git_diff_freep) git_diff *d = NULL;
	_cleanup_free_ struct fstat *f = NULL;
	size_t n = 0;
	int r;

	/* a diff libgit2 cannot read gets no stat: the mail goes without */
	if (git_diff_from_buffer(&d, diff, strlen(diff)) < 0 || git_diff_num_deltas(d) == 0)
		return 0;
	f = calloc(DIFFSTAT_FILES_MAX, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (read_stats(d, f, &n) < 0)
		return 0;
	r = layout(f, n, out);
	return r < 0 ? r : summary(d, n, out);
}

int diffstat_format(const char *diff, struct buf *out)
{
	int r;

	if (!diff || !*diff)
		return 0;
	r = git_libgit2_init();
	if (r < 0)
		return -ENOMEM;
	r = format(diff, out);
	git_libgit2_shutdown();
	return r;
}
