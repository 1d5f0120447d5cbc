#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "run.h"

/* Interim: the first crash line of the console and a syzbot-style title;
 * replaced by the crash parser (report.h) once it lands. */
static const char *const starts[] = {
	"BUG: KASAN: ", "WARNING: CPU: ", "general protection fault",
	"BUG: kernel NULL pointer dereference", "BUG: unable to handle page fault",
	"Kernel panic - not syncing: ", "kernel BUG at ",
};

static char *func_after(const char *p, const char *end)
{
	size_t n = 0;

	while (p + n < end && (p[n] == '_' || p[n] == '.' ||
			       (p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'z') ||
			       (p[n] >= 'A' && p[n] <= 'Z')))
		n++;
	return strndup(p, n);
}

int run_classify_console(const char *console, size_t len, char **ret_title, char **ret_report)
{
	const char *end = console + len, *hit = NULL, *rip;
	_cleanup_free_ char *func = NULL, *title = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(starts); i++) {
		const char *p = memmem(console, len, starts[i], strlen(starts[i]));

		if (p && (!hit || p < hit))
			hit = p;
	}
	if (!hit)
		return -ENOENT;
	rip = memmem(hit, (size_t)(end - hit), "RIP: 0010:", 10);
	if (startswith(hit, "BUG: KASAN: ")) {
		const char *kind = hit + 12, *in = memmem(kind, (size_t)(end - kind), " in ", 4);
		const char *acc = memmem(hit, (size_t)(end - hit), "\n", 1);
		const char *what = "Read";

		if (!in)
			return -ENOENT;
		func = func_after(in + 4, end);
		if (acc && startswith(acc + 1, "Write"))
			what = "Write";
		if (acc && memmem(acc, (size_t)MIN(200, end - acc), "Write of size", 13))
			what = "Write";
		if (asprintf(&title, "KASAN: %.*s %s in %s", (int)(in - kind), kind, what, func) < 0)
			return -ENOMEM;
	} else if (startswith(hit, "WARNING: CPU: ")) {
		const char *at = memmem(hit, (size_t)(end - hit), "] ", 2);
		const char *eol = memchr(hit, '\n', (size_t)(end - hit));
		const char *sp;

		/* "WARNING: CPU: 0 PID: 1 at file:line func+0x.../0x..." */
		at = memmem(hit, (size_t)((eol ? eol : end) - hit), " at ", 4);
		sp = at ? memchr(at + 4, ' ', (size_t)((eol ? eol : end) - at - 4)) : NULL;
		func = sp ? func_after(sp + 1, end) : strdup("?");
		if (asprintf(&title, "WARNING in %s", func) < 0)
			return -ENOMEM;
	} else {
		const char *eol = memchr(hit, '\n', (size_t)(end - hit));
		const char *head = startswith(hit, "general protection fault")
					   ? "general protection fault"
				   : startswith(hit, "BUG: kernel NULL")
					   ? "BUG: kernel NULL pointer dereference"
				   : startswith(hit, "BUG: unable")
					   ? "BUG: unable to handle page fault"
					   : NULL;

		func = rip ? func_after(rip + 10, end) : NULL;
		if (head && func) {
			if (asprintf(&title, "%s in %s", head, func) < 0)
				return -ENOMEM;
		} else
			title = strndup(hit, (size_t)((eol ? eol : end) - hit));
	}
	if (!title)
		return -ENOMEM;
	*ret_report = strndup(hit, (size_t)MIN(end - hit, 64 * 1024));
	if (!*ret_report)
		return -ENOMEM;
	*ret_title = TAKE_PTR(title);
	return 0;
}
