/* The knowledge base; see kb.h.  A JSON-lines file: appends are atomic
 * enough for one writer per line (O_APPEND, one write), and the file is
 * small enough to scan whole. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "kb.h"

int kb_add(const char *path, const json_t *entry)
{
	_cleanup_free_ char *line = json_dumps(entry, JSON_COMPACT | JSON_SORT_KEYS);
	_cleanup_close_ int fd = -1;
	size_t n;

	if (!line)
		return -ENOMEM;
	n = strlen(line);
	line[n] = '\n'; /* replaces the NUL: written with its length */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return negerrno();
	if (write(fd, line, n + 1) != (ssize_t)(n + 1))
		return -EIO;
	line[n] = '\0';
	return 0;
}

char *kb_subsystem_of(const char *file)
{
	const char *s1, *s2;

	if (!file || !*file)
		return strdup("");
	s1 = strchr(file, '/');
	if (!s1)
		return strdup("");
	s2 = strchr(s1 + 1, '/');
	return strndup(file, (size_t)((s2 ? s2 : s1) - file));
}

/* Shared words of at least four letters, lower-cased. */
static int shared_words(const char *a, const char *b)
{
	char wa[64];
	int n = 0;

	for (const char *p = a; *p;) {
		size_t k = 0;

		while (*p && !isalnum((unsigned char)*p) && *p != '_')
			p++;
		while ((isalnum((unsigned char)*p) || *p == '_') && k + 1 < sizeof(wa))
			wa[k++] = (char)tolower((unsigned char)*p++);
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		wa[k] = '\0';
		if (k >= 4 && strcasestr(b, wa))
			n++;
	}
	return n;
}

static int score(const json_t *e, const char *type, const char *subsystem, const char *title)
{
	const char *et = json_get_str(e, "type"), *es = json_get_str(e, "subsystem");
	int s = 0;

	if (type && et && streq(type, et))
		s += 10;
	else if (type && et && strncmp(type, et, strcspn(type, "-:")) == 0)
		s += 5;
	if (subsystem && es && *subsystem && streq(subsystem, es))
		s += 6;
	if (title && json_get_str(e, "title"))
		s += shared_words(title, json_get_str(e, "title"));
	return s;
}

int kb_query(const char *path, const char *type, const char *subsystem,
	     const char *title, size_t max, json_t **ret)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_json_ json_t *scored = json_array();
	json_t *out = json_array(), *e;
	char *line, *save = NULL;
	size_t i;
	int r;

	r = read_file_bounded(path, KB_FILE_MAX, &data, NULL);
	if (r == -ENOENT) {
		*ret = out;
		return 0;
	}
	if (r < 0) {
		json_decref(out);
		return r;
	}
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);
		int sc = json_is_object(j) ? score(j, type, subsystem, title) : 0;

		if (sc >= 5)
			json_array_append_new(scored, json_pack("{s:i, s:o}", "s", sc, "e", j));
		else
			json_decref(j);
	}
	/* selection of the best max: the file is small, quadratic is fine */
	while (json_array_size(out) < max && json_array_size(scored) > 0) {
		size_t best = 0;
		json_int_t bs = -1;

		json_array_foreach(scored, i, e)
			if (json_get_int(e, "s", 0) > bs) {
				bs = json_get_int(e, "s", 0);
				best = i;
			}
		json_array_append(out, json_object_get(json_array_get(scored, best), "e"));
		json_array_remove(scored, best);
	}
	*ret = out;
	return 0;
}
