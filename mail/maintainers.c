/* Recipients of a patch: the tree's own scripts/get_maintainer.pl, run
 * with an argv vector (no shell) and the diff on its stdin. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strutil.h"
#include "common/proc.h"
#include "compose.h"
#include "header-internal.h"

#define MAINTAINERS_TIMEOUT_USEC (120ULL * 1000000)
#define MAINTAINERS_OUTPUT_MAX (256 * 1024)
#define MAINTAINERS_MAX 64


int mail_maintainers(const char *tree_dir, const char *diff, char ***ret,
		     char **ret_error)
{
	char *argv[] = { "perl", "scripts/get_maintainer.pl", "--no-rolestats", "--no-git",
			 "--no-git-fallback", "--no-tree", NULL };
	_cleanup_(proc_result_free) struct proc_result res = { 0 };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	_cleanup_free_ char *script = NULL, *out = NULL;
	_cleanup_strv_ char **v = NULL;
	const char *pos, *l;
	struct stat st;
	size_t n;
	int r;

	if (asprintf(&script, "%s/scripts/get_maintainer.pl", tree_dir) < 0)
		return -ENOMEM;
	if (stat(script, &st) < 0)
		return error_set(ret_error, -ENOENT, "%s: not found", script);
	o.cwd = tree_dir;
	o.stdin_data = diff;
	o.stdin_len = strlen(diff);
	o.timeout_usec = MAINTAINERS_TIMEOUT_USEC;
	o.output_max = MAINTAINERS_OUTPUT_MAX;
	o.discard_stderr = true;
	r = proc_run(argv, &o, &res);
	if (r < 0)
		return error_set(ret_error, r, "cannot run get_maintainer.pl: %s", strerror(-r));
	if (res.timed_out || res.exit_code != 0)
		return error_set(ret_error, -EIO, "get_maintainer.pl %s %d",
			    res.timed_out ? "timed out after" : "exited with",
			    res.timed_out ? (int)(MAINTAINERS_TIMEOUT_USEC / 1000000)
					   : res.exit_code);
	out = strndup(res.output_len ? res.output : "", res.output_len);
	if (!out)
		return -ENOMEM;
	pos = out;
	while (text_next_line(&pos, &l, &n) && strv_len(v) < MAINTAINERS_MAX) {
		_cleanup_free_ char *a = strndup(l, n);

		if (!a)
			return -ENOMEM;
		/* whatever the tree's MAINTAINERS says, only clean addresses pass */
		if (!*a || header_check_address(a) < 0 || strv_contains(v, a))
			continue;
		if (strv_push(&v, a) < 0)
			return -ENOMEM;
	}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}
