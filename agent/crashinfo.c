/* Finding the crash site in a report; see crashinfo-internal.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "crashinfo-internal.h"
#include "repro/report.h"

static const char *const infra_prefixes[] = {
	"dump_stack", "__dump_stack", "print_report", "print_address_description", "kasan_",
	"__kasan_", "__asan_", "check_memory_region", "__warn", "warn_slowpath",
	"report_bug", "handle_bug", "exc_invalid_op", "asm_exc_", "panic",
	"__might_sleep", "___might_sleep", "__might_resched", "__might_fault",
	"lock_acquire", "__lock_acquire", "lock_release", "print_usage_bug",
	"mark_lock", "validate_chain", "check_noncircular", "check_prev_add",
	"print_circular_bug", "refcount_warn_saturate", "ubsan_", "__ubsan_",
	"kmsan_", "__msan_", "kfence_", "__kfence_", "show_stack", "do_error_trap",
	"do_trap", "lockdep_", "debug_check_no_locks", "kcsan_", "__tsan_",
	"fortify_", "__fortify", "__stack_chk_fail", "entry_SYSCALL", "do_syscall",
	"x64_sys_call", "ret_from_fork", "kthread", "__pfx_",
};

bool crash_function_is_infra(const char *fn)
{
	for (size_t i = 0; i < ARRAY_SIZE(infra_prefixes); i++)
		if (startswith(fn, infra_prefixes[i]))
			return true;
	return false;
}

void crash_info_free(struct crash_info *c)
{
	if (!c)
		return;
	free(c->title);
	free(c->type);
	free(c->site);
	for (size_t i = 0; i < c->n_frames; i++) {
		free(c->frames[i].function);
		free(c->frames[i].file);
	}
	free(c);
}

static bool is_ident(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.';
}

/* "func+0x1f/0x30" somewhere in s: the function name, or NULL. */
static char *find_symbol(const char *s, const char **ret_end)
{
	for (const char *p = strstr(s, "+0x"); p; p = strstr(p + 1, "+0x")) {
		const char *b = p;
		const char *q = p + 3;

		while (b > s && is_ident(b[-1]))
			b--;
		while (isxdigit((unsigned char)*q))
			q++;
		if (b == p || *q != '/' || strncmp(q, "/0x", 3) != 0)
			continue;
		q += 3;
		while (isxdigit((unsigned char)*q))
			q++;
		if (ret_end)
			*ret_end = q;
		{
			char *name = strndup(b, (size_t)(p - b));
			char *dot = name ? strchr(name, '.') : NULL;

			if (dot) /* foo.constprop.0, foo.cold */
				*dot = '\0';
			return name;
		}
	}
	return NULL;
}

/* "func path/file.c:123 [inline]": a function the compiler inlined into
 * the next frame, named by a symbolised report (syzbot's, or ours).  The
 * crash is often in it rather than in its host, so it is a frame too. */
static char *find_inline(const char *l, const char **ret_end)
{
	const char *e, *sp;

	while (*l == ' ' || *l == '\t')
		l++;
	e = l;
	while (is_ident(*e))
		e++;
	if (e == l || *e != ' ')
		return NULL;
	sp = e;
	if (!strstr(sp, ".c:") || !endswith(sp, " [inline]"))
		return NULL;
	*ret_end = sp;
	return strndup(l, (size_t)(e - l));
}

static void add_frame(struct crash_info *c, char *fn, const char *rest)
{
	struct crash_frame *f;
	const char *p;

	if (c->n_frames >= CRASH_MAX_FRAMES) {
		free(fn);
		return;
	}
	f = &c->frames[c->n_frames++];
	f->function = fn;
	while (*rest == ' ')
		rest++;
	p = strchr(rest, ':');
	if (p && p > rest && strncmp(p - 2, ".c", 2) == 0) {
		f->file = strndup(rest, (size_t)(p - rest));
		f->line = (unsigned)strtoul(p + 1, NULL, 10);
	}
}

static char *site_from_title(const char *title)
{
	const char *in = strstr(title, " in ");
	const char *e;

	if (!in)
		return NULL;
	in += 4;
	for (e = in; is_ident(*e); e++)
		;
	return e > in ? strndup(in, (size_t)(e - in)) : NULL;
}

static char *guess_type(const char *title)
{
	static const char *const kinds[] = { "KASAN", "KMSAN", "KCSAN", "KFENCE", "UBSAN",
		"WARNING", "possible deadlock", "inconsistent lock state", "BUG: sleeping",
		"general protection fault", "kernel BUG", "BUG: unable to handle",
		"memory leak", "INFO: task hung", "refcount_t", "BUG" };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strstr(title, kinds[i]))
			return strdup(kinds[i]);
	return strdup("UNKNOWN");
}

static bool is_title_line(const char *l)
{
	return startswith(l, "BUG: ") || startswith(l, "WARNING: ") ||
	       startswith(l, "general protection fault") || startswith(l, "kernel BUG at") ||
	       startswith(l, "UBSAN: ") || startswith(l, "INFO: ") ||
	       startswith(l, "refcount_t: ") || startswith(l, "Oops: ");
}

/* Strips "[   12.34] " and "[  T123] " prefixes. */
static const char *strip_stamp(const char *l)
{
	while (*l == '[') {
		const char *e = strchr(l, ']');

		if (!e)
			break;
		l = e + 1;
		while (*l == ' ')
			l++;
	}
	return l;
}

static void scan_line(struct crash_info *c, const char *raw, bool *in_trace, bool *trace_done)
{
	const char *l = strip_stamp(raw), *v, *end = NULL;
	char *fn;

	if ((v = startswith(l, "TITLE: ")) && !c->title)
		c->title = strdup(v);
	else if ((v = startswith(l, "TYPE: ")) && !c->type)
		c->type = strdup(v);
	else if (!c->title && is_title_line(l))
		c->title = strdup(l);
	if ((v = startswith(l, "RIP: ")) && !c->site) {
		c->site = find_symbol(v, NULL);
		return;
	}
	if (startswith(l, "Call Trace:")) {
		*in_trace = !*trace_done;
		return;
	}
	if (!*in_trace)
		return;
	if (startswith(l, "<") || startswith(l, "</"))
		return;
	if (startswith(l, "? "))
		return;
	fn = find_symbol(l, &end);
	if (!fn)
		fn = find_inline(l, &end);
	if (!fn) {
		if (c->n_frames > 0) {
			*in_trace = false;
			*trace_done = true;
		}
		return;
	}
	add_frame(c, fn, end);
}

int crash_info_parse(const char *text, size_t len, struct crash_info **ret)
{
	_cleanup_(crash_info_freep) struct crash_info *c = calloc(1, sizeof(*c));
	_cleanup_free_ char *copy = strndup(text, len);
	bool in_trace = false, trace_done = false;
	char *line, *save = NULL;

	if (!c || !copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		scan_line(c, line, &in_trace, &trace_done);
	if (!c->title)
		return -ENOMSG;
	if (!c->type)
		c->type = guess_type(c->title);
	{
		char *t = site_from_title(c->title);

		if (t && !crash_function_is_infra(t)) {
			free(c->site);
			c->site = t;
		} else
			free(t);
	}
	if (c->site && crash_function_is_infra(c->site)) {
		free(c->site);
		c->site = NULL;
	}
	*ret = TAKE_PTR(c);
	return 0;
}

size_t crash_info_suspects(const struct crash_info *c, const char **ret, size_t max)
{
	size_t n = 0;

	if (c->site && n < max)
		ret[n++] = c->site;
	for (size_t i = 0; i < c->n_frames && n < max; i++) {
		const char *fn = c->frames[i].function;
		bool dup = false;

		if (crash_function_is_infra(fn))
			continue;
		for (size_t j = 0; j < n; j++)
			dup |= streq(ret[j], fn);
		if (!dup)
			ret[n++] = fn;
	}
	return n;
}

/* "[   12.345678]" and a caller id such as "[  T43]" or "[ C0]" */
static size_t console_prefix(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && l[i] == '[') {
		size_t k = i + 1;

		while (k < n && l[k] == ' ')
			k++;
		if (k < n && (l[k] == 'T' || l[k] == 'C'))
			k++;
		else if (!(k < n && isdigit((unsigned char)l[k])))
			break;
		while (k < n && (isdigit((unsigned char)l[k]) || l[k] == '.'))
			k++;
		if (k >= n || l[k] != ']')
			break;
		i = k + 1;
	}
	return i > 0 && i < n && l[i] == ' ' ? i + 1 : i;
}

/* Where KASAN dumps the page and the shadow memory around the object:
 * where the object lived, which differs from run to run and says nothing
 * a fix needs. */
static const char *const dump_starts[] = {
	"The buggy address belongs to the physical page:",
	"Memory state around the buggy address:",
};

/* Appends the lines of [p, p + n) without console prefixes and CRs, up to
 * a memory dump. */
static void append_lines(struct buf *b, const char *p, size_t n)
{
	for (size_t i = 0; i < n && !b->truncated;) {
		const char *e = memchr(p + i, '\n', n - i);
		size_t len = (e ? (size_t)(e - p) : n) - i, skip = console_prefix(p + i, len);

		while (len > skip && p[i + len - 1] == '\r')
			len--;
		for (size_t k = 0; k < ARRAY_SIZE(dump_starts); k++)
			if (len - skip >= strlen(dump_starts[k]) &&
			    memcmp(p + i + skip, dump_starts[k], strlen(dump_starts[k])) == 0)
				return;
		(void)buf_append_trunc(b, p + i + skip, len - skip);
		(void)buf_append_trunc(b, "\n", 1);
		i = e ? (size_t)(e - p) + 1 : n;
	}
}

int crash_excerpt(const char *log, size_t len, size_t max, char **ret)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	_cleanup_buf_ struct buf b = BUF_INIT(max + 1);
	const char *text = NULL;
	char *out;

	if (report_parse(log, len, &rep) >= 0 && report_title(rep) && report_start(rep) < len)
		text = report_text(rep);
	if (text) {
		/* the parser's report (which ends where a second one begins)
		 * from its oops line on, without the context lines before it */
		const char *l = log + report_start(rep), *e = memchr(l, '\n', len - report_start(rep));
		size_t n = e ? (size_t)(e - l) : len - report_start(rep), skip = console_prefix(l, n);
		_cleanup_free_ char *first = NULL;
		const char *at;

		while (n > skip && l[n - 1] == '\r')
			n--;
		first = strndup(l + skip, n - skip);
		if (!first)
			return -ENOMEM;
		at = *first ? strstr(text, first) : NULL;
		if (at && (at == text || at[-1] == '\n'))
			text = at;
		append_lines(&b, text, strlen(text));
	} else {
		size_t from = len > max ? len - max : 0;
		/* whole lines, not the middle of one */
		const char *nl = from ? memchr(log + from, '\n', len - from) : NULL;

		if (nl)
			from = (size_t)(nl - log) + 1;
		append_lines(&b, log + from, len - from);
	}
	out = b.len ? buf_steal(&b, NULL) : strdup("");
	if (!out)
		return -ENOMEM;
	if (strlen(out) > max)
		out[max] = '\0';
	*ret = out;
	return 0;
}
