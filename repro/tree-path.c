/* Which tree-relative paths edits, patches and commits may name.  Kept
 * apart from edit.c because worktree and publish code check paths too,
 * and they should not reach into the edit code for it. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "repro/tree-internal.h"

#define EDIT_PATH_MAX 4096

int tree_path_check(const char *path, const char **ret_error)
{
	const char *why = NULL, *p = path;

	if (!path || !*path)
		why = "empty path";
	else if (strlen(path) > EDIT_PATH_MAX)
		why = "path too long";
	else if (path[0] == '/')
		why = "absolute path";
	while (!why && p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 0)
			why = "empty path component";
		else if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)))
			why = "'.' or '..' in path";
		else if (n == 4 && !strncasecmp(p, ".git", 4))
			why = "path inside .git";
		p = slash ? slash + 1 : NULL;
	}
	if (why) {
		if (ret_error)
			*ret_error = why;
		return -EPERM;
	}
	return 0;
}
