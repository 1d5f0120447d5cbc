/* Rendering prompt files; see prompt.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "prompt.h"

const char *prompt_default_dir(void)
{
	const char *e = getenv("KFIX_PROMPTS_DIR");

	return e && *e ? e : PKGDATADIR "/prompts";
}

int prompt_render(const char *dir, const char *name, const json_t *vars, char **ret)
{
	_cleanup_free_ char *path = NULL, *tmpl = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(PROMPT_MAX);
	const char *p, *open;
	int r;

	if (strchr(name, '/'))
		return -EINVAL;
	if (asprintf(&path, "%s/%s.txt", dir ?: prompt_default_dir(), name) < 0)
		return -ENOMEM;
	r = read_file_bounded(path, PROMPT_FILE_MAX, &tmpl, NULL);
	if (r < 0)
		return r;
	for (p = tmpl; (open = strstr(p, "{{")); ) {
		const char *close = strstr(open, "}}"), *val;
		char key[64];

		if (!close || close - open - 2 >= (long)sizeof(key))
			return -EBADMSG;
		snprintf(key, sizeof(key), "%.*s", (int)(close - open - 2), open + 2);
		val = json_get_str(vars, key);
		if (!val)
			return -ENOKEY;
		if ((r = buf_append(&out, p, (size_t)(open - p))) < 0 || (r = buf_puts(&out, val)) < 0)
			return r;
		p = close + 2;
	}
	if ((r = buf_puts(&out, p)) < 0)
		return r;
	*ret = buf_steal(&out, NULL);
	return *ret ? 0 : -ENOMEM;
}
