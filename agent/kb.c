/* The knowledge base; see kb.h.  A JSON-lines file: appends are atomic
 * enough for one writer per line (O_APPEND, one write), and the file is
 * small enough to scan whole. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "kb.h"

/* The file, open and locked, as it is at path now: an amendment renames
 * a new file into place, and a writer that opened the old one before
 * must not append to it. */
static int kb_open_locked(const char *path, int flags)
{
	for (int tries = 0; tries < 8; tries++) {
		_cleanup_close_ int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0640);
		struct stat a, b;

		if (fd < 0)
			return negerrno();
		if (flock(fd, LOCK_EX) < 0)
			return negerrno();
		if (fstat(fd, &a) < 0)
			return negerrno();
		if (stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return TAKE_FD(fd);
	}
	return -EBUSY;
}

int kb_add(const char *path, const json_t *entry)
{
	_cleanup_free_ char *line = json_dumps(entry, JSON_COMPACT | JSON_SORT_KEYS);
	_cleanup_close_ int fd = -1;
	size_t n;

	if (!line)
		return -ENOMEM;
	n = strlen(line);
	line[n] = '\n'; /* replaces the NUL: written with its length */
	fd = kb_open_locked(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return fd;
	if (write(fd, line, n + 1) != (ssize_t)(n + 1))
		return -EIO;
	line[n] = '\0';
	return 0;
}

/* One entry of the amended file: the bug's entries get the lesson first
 * and the upstream fix; *amended counts them. */
static int amend_line(struct buf *out, const char *line, const char *title,
		      const json_t *upstream, const char *lesson, size_t *amended)
{
	_cleanup_json_ json_t *e = json_loads(line, 0, NULL);
	_cleanup_free_ char *text = NULL;
	json_t *lessons;

	if (!json_is_object(e) || !json_get_str(e, "title") || !streq(json_get_str(e, "title"), title))
		return buf_printf(out, "%s\n", line);
	(*amended)++;
	lessons = json_object_get(e, "lessons");
	if (!json_is_array(lessons)) {
		lessons = json_array();
		if (!lessons || json_object_set_new(e, "lessons", lessons) < 0)
			return -ENOMEM;
	}
	/* again for the same fix: the lesson is there already */
	if (!json_equal(json_object_get(e, "upstream"), (json_t *)upstream) &&
	    json_array_insert_new(lessons, 0, json_string(lesson)) < 0)
		return -ENOMEM;
	if (json_object_set(e, "upstream", (json_t *)upstream) < 0)
		return -ENOMEM;
	text = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
	return text ? buf_printf(out, "%s\n", text) : -ENOMEM;
}

int kb_amend(const char *path, const char *title, const json_t *upstream, const char *lesson,
	     const json_t *fallback)
{
	_cleanup_free_ char *data = NULL, *tmp = NULL;
	_cleanup_buf_ struct buf out = BUF_INIT(KB_FILE_MAX);
	_cleanup_close_ int fd = -1;
	size_t amended = 0, len = 0;
	char *line, *save = NULL;
	int r;

	fd = kb_open_locked(path, O_RDWR);
	if (fd < 0)
		return fd;
	r = read_fd_bounded(fd, KB_FILE_MAX, &data, &len);
	if (r < 0)
		return r;
	for (line = strtok_r(data, "\n", &save); line && r >= 0; line = strtok_r(NULL, "\n", &save))
		r = amend_line(&out, line, title, upstream, lesson, &amended);
	if (r < 0)
		return r;
	if (amended == 0) {
		/* no repair of this bug was recorded here: the fix alone teaches */
		_cleanup_json_ json_t *e = json_deep_copy(fallback);
		_cleanup_free_ char *text = NULL;

		if (!e || json_object_set_new(e, "title", json_string(title)) < 0 ||
		    json_object_set(e, "upstream", (json_t *)upstream) < 0 ||
		    json_object_set_new(e, "lessons", json_pack("[s]", lesson)) < 0 ||
		    !(text = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS)))
			return -ENOMEM;
		r = buf_printf(&out, "%s\n", text);
		if (r < 0)
			return r;
	}
	/* renamed over the file while its lock is held: kb_add re-opens */
	return write_file_atomic(path, out.data ? out.data : "", out.len, 0640);
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
	/* the fix the developers landed teaches more than kfix's own */
	if (s >= 5 && json_is_object(json_object_get(e, "upstream")))
		s += 3;
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
