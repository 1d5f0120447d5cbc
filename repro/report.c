/* Console log -> crash report, following syzkaller's Linux parser: find
 * the first oops line, gather the lines of the same printk context (task
 * or CPU) that follow it, title the report with the oops table, then judge
 * whether it is corrupted.
 *
 * Bounds: the log is scanned line by line without copying; the report text
 * is capped at REPORT_TEXT_MAX and each line in it at REPORT_LINE_MAX, and
 * all regexes run on that bounded text (or on a bounded window around a
 * header), so time is linear in the log and memory is O(REPORT_TEXT_MAX). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "report-internal.h"

#define PREFIX_MAX_CONSOLE 5   /* lines kept before the oops (no caller info) */
#define PREFIX_MAX_TASK 50     /* ... with CONFIG_PRINTK_CALLER: same task */
#define CONTEXT_MAX 32
#define HEADER_WINDOW 2048     /* bytes around a header seen by suppression regexes */
#define STRICT_WINDOW 4096     /* bytes after a strict header its title may span */

struct report {
	char *title;
	char **alt_titles;
	const char *type;
	char *frame;
	char **frames;
	char *guilty_file;
	char *text;
	const char *corrupted_reason;
	size_t start, end;
	size_t prefix_len;
	int exec_proc, exec_id;
	bool has_exec, corrupted, suppressed, panicked;
};

/* One console line: raw bytes, printk context and the text after it. */
struct line {
	const char *raw;
	size_t raw_len;
	char ctx[CONTEXT_MAX]; /* "" none, "console", or "[ T123]" / "[  C1]" */
	const char *text;
	size_t text_len;
	bool questionable; /* " ? func" frame guessed by the unwinder */
};

/* ---- console prefixes -------------------------------------------------- */

static size_t digits(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* Parses "[ 12.345][ T123] " at s; returns the length or 0. */
static size_t parse_stamp(const char *s, size_t n, char ctx[CONTEXT_MAX])
{
	size_t i = 0, d;

	if (i < n && s[i] == '<') {
		d = digits(s + 1, n - 1);
		if (d == 0 || 1 + d >= n || s[1 + d] != '>')
			return 0;
		i = 2 + d;
	}
	if (i >= n || s[i] != '[')
		return 0;
	i++;
	while (i < n && s[i] == ' ')
		i++;
	d = digits(s + i, n - i);
	if (d == 0 || i + d >= n || s[i + d] != '.')
		return 0;
	i += d + 1;
	d = digits(s + i, n - i);
	if (d == 0 || i + d >= n || s[i + d] != ']')
		return 0;
	i += d + 1;
	strcpy(ctx, "console");
	if (i < n && s[i] == '[') {
		size_t j = i + 1;

		while (j < n && s[j] == ' ')
			j++;
		if (j < n && (s[j] == 'C' || s[j] == 'T')) {
			d = digits(s + j + 1, n - j - 1);
			if (d > 0 && j + 1 + d < n && s[j + 1 + d] == ']' && j + 2 + d - i < CONTEXT_MAX) {
				memcpy(ctx, s + i, j + 2 + d - i);
				ctx[j + 2 + d - i] = 0;
				i = j + 2 + d;
			}
		}
	}
	if (i >= n || s[i] != ' ') {
		ctx[0] = 0;
		return 0;
	}
	return i + 1;
}

static void parse_line(const char *s, size_t n, struct line *l)
{
	static const char dropped[] = "** ";
	const char *p;
	size_t off = 0, k;

	while (n > 0 && s[n - 1] == '\r')
		n--;
	*l = (struct line){ .raw = s, .raw_len = n, .text = s, .text_len = n };
	/* "** 12 printk messages dropped ** " */
	if (n > 3 && memcmp(s, dropped, 3) == 0) {
		p = memmem(s + 3, MIN(n - 3, (size_t)64), " **", 3);
		if (p && (size_t)(p - s) + 4 <= n && p[3] == ' ')
			off = (size_t)(p - s) + 4;
	}
	k = parse_stamp(s + off, n - off, l->ctx);
	if (k == 0) {
		/* "host login: [  1.2] ..." from the serial getty */
		size_t lim = MIN(n, (size_t)512);

		for (p = s; (p = memmem(p, lim - (size_t)(p - s), " login: ", 8)); p += 8) {
			size_t o = (size_t)(p - s) + 8;

			k = parse_stamp(s + o, n - o, l->ctx);
			if (k) {
				off = o;
				break;
			}
		}
	}
	if (k == 0)
		return;
	/* The text starts after the first "] " of the line. */
	p = memmem(s, n, "] ", 2);
	if (!p)
		return;
	l->text = p + 2;
	l->text_len = n - (size_t)(l->text - s);
	if (!memmem(l->text, l->text_len, "<EOI>", 5)) {
		p = memmem(l->text, l->text_len, " ? ", 3);
		if (p) {
			l->text = p + 2;
			l->text_len = n - (size_t)(l->text - s);
			l->questionable = true;
		} else if (l->text_len >= 13 && memcmp(l->text + l->text_len - 13, " (unreliable)", 13) == 0) {
			l->text_len -= 13;
			l->questionable = true;
		}
	}
}

/* ---- oops headers ------------------------------------------------------ */

static bool suppressed_on_line(const struct oops *o, const char *s, size_t n, size_t at)
{
	size_t from = at > HEADER_WINDOW / 4 ? at - HEADER_WINDOW / 4 : 0;
	size_t to = MIN(n, at + HEADER_WINDOW);

	return re_match_any(o->suppressions, s + from, to - from);
}

/* A strict family's title must match the line and what follows it (the
 * log goes on after the line: s + n is not its end). */
static bool strict_match(const struct oops *o, const char *s, size_t n, size_t avail)
{
	size_t win = MIN(n + STRICT_WINDOW, avail);

	for (const struct oops_format *f = o->formats; f->title; f++) {
		size_t ov[2 * RE_MAX_GROUPS];

		if (re_search(f->title, s, win, 0, ov) > 0)
			return true;
	}
	return false;
}

/* Header prefilter: every line of the log is checked against every oops
 * header, so instead of one memmem per header the line is scanned once
 * and each byte pair is looked up in a table of the headers' first two
 * bytes; only hits are compared in full. */
static uint32_t header_bigrams[1 << 16];
static size_t header_len[32];

static int headers_init(void)
{
	if (report_n_oopses > 32)
		return -EINVAL;
	for (size_t i = 0; i < report_n_oopses; i++) {
		const unsigned char *h = (const unsigned char *)report_oopses[i].header;

		header_len[i] = strlen(report_oopses[i].header);
		if (header_len[i] < 2)
			return -EINVAL;
		header_bigrams[h[0] << 8 | h[1]] |= UINT32_C(1) << i;
	}
	return 0;
}

/* The first oops family (in table order) whose header is on the line and
 * not vetoed, or NULL. */
static const struct oops *line_oops(const char *s, size_t n, size_t avail)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t at[32];
	uint32_t found = 0;

	for (size_t i = 0; i + 1 < n; i++) {
		uint32_t cand = header_bigrams[u[i] << 8 | u[i + 1]] & ~found;

		while (cand) {
			int j = __builtin_ctz(cand);

			cand &= cand - 1;
			if (n - i >= header_len[j] && memcmp(s + i, report_oopses[j].header, header_len[j]) == 0) {
				found |= UINT32_C(1) << j;
				at[j] = i;
			}
		}
	}
	while (found) {
		int j = __builtin_ctz(found);
		const struct oops *o = &report_oopses[j];

		found &= found - 1;
		if (suppressed_on_line(o, s, n, at[j]))
			continue;
		if (o->strict && !strict_match(o, s, n, avail))
			continue;
		return o;
	}
	return NULL;
}

static bool line_contains(const struct line *l, const char *what)
{
	return memmem(l->raw, l->raw_len, what, strlen(what)) != NULL;
}

/* ---- gathering the report ----------------------------------------------- */

struct gather {
	struct buf text;
	size_t prefix_len; /* context lines before the oops line */
	size_t end_pos;    /* end of the last oops line in the log */
	size_t report_end; /* text length before a second report began */
};

static bool is_cpu_ctx(const char *c)
{
	return c[0] == '[' && strchr(c, 'C');
}

static bool is_task_ctx(const char *c)
{
	return c[0] == '[' && strchr(c, 'T');
}

static int append_line(struct buf *b, const char *s, size_t n)
{
	int r = buf_append_trunc(b, s, MIN(n, (size_t)REPORT_LINE_MAX));
	if (r >= 0)
		r = buf_append_trunc(b, "\n", 1);
	return r;
}

static int gather(const char *log, size_t len, size_t start, const char *ctx, struct gather *g)
{
	size_t max_prefix = is_task_ctx(ctx) ? PREFIX_MAX_TASK : PREFIX_MAX_CONSOLE;
	struct line prefix[PREFIX_MAX_TASK];
	size_t n_prefix = 0, first_prefix = 0, text_lines = 0, second = 0;
	bool skip_text = false, cpu_traceback = false;
	bool real_ctx = ctx[0] && !streq(ctx, "console");
	int r;

	g->text = BUF_INIT(REPORT_TEXT_MAX);
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(log + pos, '\n', len - pos);
		size_t next = nl ? (size_t)(nl - log) : len;
		bool oops_line = pos == start;
		struct line l;

		parse_line(log + pos, next - pos, &l);
		if (pos < start) {
			if (streq(l.ctx, ctx) && l.text_len > 0 && !l.questionable) {
				prefix[(first_prefix + n_prefix) % max_prefix] = l;
				if (n_prefix < max_prefix)
					n_prefix++;
				else
					first_prefix = (first_prefix + 1) % max_prefix;
			}
			pos = next + 1;
			continue;
		}
		if (oops_line)
			for (size_t i = 0; i < n_prefix; i++) {
				const struct line *p = &prefix[(first_prefix + i) % max_prefix];

				r = append_line(&g->text, p->text, p->text_len);
				if (r < 0)
					return r;
			}
		if (oops_line)
			g->prefix_len = g->text.len;
		if (line_oops(l.raw, l.raw_len, len - (size_t)(l.raw - log))) {
			g->end_pos = next;
			if (!oops_line && second == 0 && !re_match_any(report_start_ignores, l.raw, MIN(l.raw_len, (size_t)REPORT_LINE_MAX)))
				second = pos;
		} else if (!oops_line && second == 0) {
			for (const char *const *m = report_info_with_stack; *m; m++)
				if (line_contains(&l, *m))
					second = pos;
		}
		pos = next + 1;
		if (!oops_line && (l.questionable || (!streq(l.ctx, ctx) && (!cpu_traceback || !is_cpu_ctx(l.ctx)))))
			continue;
		text_lines++;
		bool skip_line = skip_text;
		if (line_contains(&l, "Disabling lock debugging due to kernel taint"))
			skip_line = true;
		else if (line_contains(&l, "Sending NMI from CPU"))
			/* An all-CPU backtrace: keep the other CPUs' stacks too. */
			cpu_traceback = true;
		else if (text_lines > 22 && (line_contains(&l, "Kernel panic - not syncing") ||
					     line_contains(&l, "WARNING: possible circular locking dependency detected"))) {
			/* panic_on_warn repeats the stack, and oops printing
			 * itself provokes lockdep reports: with enough of the
			 * real report, drop the rest. */
			skip_text = true;
			skip_line = true;
		}
		if (!oops_line && skip_line)
			continue;
		r = append_line(&g->text, l.text, l.text_len);
		if (r < 0)
			return r;
		if (second == 0 || real_ctx)
			g->report_end = g->text.len;
	}
	if (!g->text.data && buf_append(&g->text, "", 0) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- titles ---------------------------------------------------------------- */

/* What a title format is filled in from: the captures of the format's
 * regex in text, the guilty frame and, for KMSAN, the uninit value's
 * origin. */
struct title_args {
	const char *text;
	const size_t *ov;
	int groups;
	const char *frame;
	const char *origin;
};

/* Expands {1}..{9}, {frame} and {origin} of a title format. */
static char *format_title(const char *fmt, const struct title_args *a)
{
	struct buf b = BUF_INIT(4 * REPORT_LINE_MAX);

	for (const char *p = fmt; *p;) {
		if (p[0] == '{' && p[1] >= '1' && p[1] <= '9' && p[2] == '}') {
			int g = p[1] - '0';

			if (g < a->groups && a->ov[2 * g] != SIZE_MAX)
				buf_append_trunc(&b, a->text + a->ov[2 * g], a->ov[2 * g + 1] - a->ov[2 * g]);
			p += 3;
		} else if (startswith(p, "{frame}")) {
			buf_puts(&b, a->frame ? a->frame : "corrupted");
			p += 7;
		} else if (startswith(p, "{origin}")) {
			buf_puts(&b, a->origin ? a->origin : "corrupted");
			p += 8;
		} else {
			buf_append_trunc(&b, p, 1);
			p++;
		}
	}
	if (!b.data && buf_append(&b, "", 0) < 0)
		return NULL;
	return buf_steal(&b, NULL);
}

struct description {
	char *title;
	char **alts;
	char **frames;
	const struct oops_format *format;
	const char *corrupted;
};

static void description_done(struct description *d)
{
	free(d->title);
	strv_free(d->alts);
	strv_free(d->frames);
	*d = (struct description){};
}

static int push_title(char ***list, const char *fmt, const struct title_args *a, const char *title)
{
	_cleanup_free_ char *t = format_title(fmt, a);

	if (!t)
		return -ENOMEM;
	if ((title && streq(t, title)) || strv_contains(*list, t))
		return 0;
	return strv_push(list, t);
}

/* The format's alternative title, then the title and the alternative
 * with the frame as printed and with each single syscall prefix removed
 * (syzkaller's partiallyStrippedArgs): "ksys_msgctl" still matches a bug
 * titled before the prefixes were stripped. */
static int alt_titles(const struct oops_format *f, const struct title_args *a, const char *raw,
		      const char *title, char ***ret)
{
	int r = 0;

	if (f->alt)
		r = push_title(ret, f->alt, a, NULL);
	if (!raw)
		return r;
	for (size_t i = 0; r >= 0 && (i == 0 || report_strip_prefixes[i - 1]); i++) {
		struct title_args v = *a;

		v.frame = i == 0 ? raw : startswith(raw, report_strip_prefixes[i - 1]);
		if (!v.frame)
			continue;
		r = push_title(ret, f->fmt, &v, title);
		if (r >= 0 && f->alt)
			r = push_title(ret, f->alt, &v, NULL);
	}
	return r;
}

/* The first frame of the stack after f->origin's line (KMSAN's "Uninit
 * was created at:"), with the format's skip list. */
static int origin_frame(const struct oops_format *f, const char *text, size_t len, struct picked_frame *ret)
{
	struct stack_fmt sf = { .parts = { f->origin, STACK_TRACE } };

	if (f->stack)
		memcpy(sf.skip, f->stack->skip, sizeof(sf.skip));
	return stack_extract_frame(&sf, text, len, ret, NULL, NULL);
}

static int describe(const char *text, size_t len, const struct oops *o, struct description *d)
{
	size_t best = len;
	bool matched_title = false;
	int r;

	*d = (struct description){};
	for (const struct oops_format *f = o->formats; f->title; f++) {
		size_t ov[2 * RE_MAX_GROUPS];
		_cleanup_(picked_frame_done) struct picked_frame frame = {}, origin = {};
		_cleanup_strv_ char **frames = NULL;
		struct title_args args;
		const char *corrupted = NULL;
		unsigned flags = 0;
		int groups = re_search(f->title, text, len, 0, ov);

		if (groups <= 0 || ov[0] > best)
			continue;
		if (ov[0] == best && d->title)
			continue;
		if (ov[0] < best) {
			description_done(d);
			best = ov[0];
		}
		matched_title = true;
		if (f->report) {
			groups = re_search(f->report, text, len, 0, ov);
			if (groups <= 0)
				continue;
		}
		if (f->stack) {
			r = stack_extract_frame(f->stack, text + ov[0], len - ov[0], &frame, &frames, &flags);
			if (r < 0)
				return r;
			if (!frame.canonical)
				corrupted = frames && frames[0] ? "no frame picked" : "extracted no stack frame";
			else if (flags & STACK_CUT)
				corrupted = "extracted no stack frame";
		}
		description_done(d);
		if (f->origin) {
			r = origin_frame(f, text + ov[0], len - ov[0], &origin);
			if (r < 0)
				return r;
			/* the origin is a part of syzkaller's stack: a report
			 * that lacks its frames is corrupted as a whole */
			if (!origin.canonical && !corrupted)
				corrupted = "extracted no stack frame";
		}
		args = (struct title_args){ text, ov, groups, frame.canonical, origin.canonical };
		d->title = format_title(f->fmt, &args);
		if (!d->title)
			return -ENOMEM;
		r = alt_titles(f, &args, frame.raw, d->title, &d->alts);
		if (r < 0)
			return r;
		d->frames = TAKE_PTR(frames);
		d->format = f;
		d->corrupted = corrupted;
	}
	if (!d->title) {
		const char *h = memmem(text, len, o->header, strlen(o->header));
		const char *e;

		if (matched_title)
			d->corrupted = "matched title but not report regexp";
		if (!h)
			return 0;
		e = memchr(h, '\n', len - (size_t)(h - text));
		d->title = strndup(h, e ? (size_t)(e - h) : len - (size_t)(h - text));
		if (!d->title)
			return -ENOMEM;
	}
	if (!d->corrupted && d->format && d->format->corrupted)
		d->corrupted = "report format is marked as corrupted";
	return 0;
}

/* ---- corruption ---------------------------------------------------------- */

/* After a stack start at p: whether one of the next 15 lines, before the
 * next stack start, is a frame.  -1: fewer than three newlines from p on
 * (Go's split of the rest gives fewer than four pieces). */
static int frames_follow(const char *p, const char *end)
{
	const char *q = p;

	for (int nl = 0; nl < 3; nl++) {
		q = memchr(q, '\n', (size_t)(end - q));
		if (!q)
			return -1;
		q++;
	}
	p = memchr(p, '\n', (size_t)(end - p)) + 1;
	for (int i = 0; i < 15 && p <= end; i++) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t n = e ? (size_t)(e - p) : (size_t)(end - p);

		if (stack_start_line(p, n))
			return 0;
		if (memmem(p, n, "(stack is not available)", 24) ||
		    frame_line(p, n, (size_t[2 * RE_MAX_GROUPS]){}) > 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* linux.go isCorrupted: every kind of stack start that occurs must be
 * followed by frames (riscv's register dump may legitimately not be),
 * and a format that expects a stack must have one. */
static const char *judge_corrupted(const char *title, const char *text, size_t len,
				   const struct oops_format *f)
{
	bool has_stack = false;

	if (re_match("\\[ *[0-9]+\\.[0-9]+\\]", title, strlen(title)))
		return "title has a timestamp in it";
	if (!f || f->no_stack_trace)
		return NULL;
	for (const char *const *k = report_stack_starts; *k; k++) {
		size_t ov[2 * RE_MAX_GROUPS];
		int r;

		if (re_search(*k, text, len, 0, ov) <= 0)
			continue;
		r = frames_follow(text + ov[0], text + len);
		if (r < 0)
			return "call trace is missed";
		has_stack |= r > 0;
		if (r == 0 && *k != report_riscv_stack_start)
			return "no frames in a stack trace";
	}
	return has_stack ? NULL : "no stack trace in report";
}

/* ---- the report ------------------------------------------------------------ */

void report_free(struct report *r)
{
	if (!r)
		return;
	free(r->title);
	strv_free(r->alt_titles);
	free(r->frame);
	strv_free(r->frames);
	free(r->guilty_file);
	free(r->text);
	free(r);
}

static bool log_suppressed(const char *log, size_t len)
{
	for (const struct line_pattern *p = report_log_suppressions; p->literal; p++) {
		const char *h = memmem(log, len, p->literal, strlen(p->literal));

		if (!h)
			continue;
		if (!p->regex)
			return true;
		for (; h; h = memmem(h + 1, len - (size_t)(h + 1 - log), p->literal, strlen(p->literal))) {
			const char *e = memchr(h, '\n', len - (size_t)(h - log));
			size_t n = MIN(e ? (size_t)(e - h) : len - (size_t)(h - log), (size_t)REPORT_LINE_MAX);

			if (re_match(p->regex, h, n))
				return true;
		}
	}
	return false;
}

static void find_executor(struct report *r)
{
	const char *p = r->text;

	while ((p = strstr(p, "Comm: syz."))) {
		int proc, id, n = 0;

		p += 10;
		if (sscanf(p, "%d.%d%n", &proc, &id, &n) == 2 && n > 0) {
			r->exec_proc = proc;
			r->exec_id = id;
			r->has_exec = true;
			return;
		}
	}
}

/* "... in func" -> "func"; a demangled Rust method keeps its
 * "<crate::Type>" qualifier: "in <a::B>::f" -> "<a::B>::f". */
static char *frame_of_title(const char *t)
{
	const char *p = NULL;
	size_t n = 0;

	for (const char *q = t; (q = strstr(q, " in ")); q += 4)
		p = q + 4;
	if (!p)
		return NULL;
	if (p[0] == '<') {
		size_t k = 1;

		while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '_' || p[k] == ':' || p[k] == ' '))
			k++;
		if (k > 1 && p[k] == '>')
			n = k + 1;
	}
	while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == ':' || p[n] == '.'))
		n++;
	return n ? strndup(p, n) : NULL;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

static void init(void)
{
	init_result = headers_init();
	if (init_result >= 0)
		init_result = re_init();
}

static int fill(struct report *rep, const char *log, size_t len, size_t start, const struct oops *o,
		const char *ctx)
{
	_cleanup_(picked_frame_done) struct picked_frame frame = {};
	struct gather g = {};
	struct description d = {};
	char *text;
	size_t text_len;
	int r;

	r = gather(log, len, start, ctx, &g);
	if (r < 0) {
		buf_free(&g.text);
		return r;
	}
	text_len = g.text.len;
	text = buf_steal(&g.text, NULL);
	if (!text)
		return -ENOMEM;
	/* The text is a C string: NULs from the log must not cut it. */
	for (size_t i = 0; i < text_len; i++)
		if (text[i] == 0)
			text[i] = '?';
	rep->text = text;
	rep->prefix_len = g.prefix_len;
	rep->start = start;
	rep->end = g.end_pos;
	/* as syzkaller's extractDescription: the report from its oops line
	 * on, the context lines before it left out */
	r = describe(text + g.prefix_len, g.report_end - g.prefix_len, o, &d);
	if (r >= 0 && !d.title) {
		/* Context filtering lost the header: title the raw lines. */
		size_t n = MIN(g.end_pos - start, REPORT_TEXT_MAX);

		description_done(&d);
		r = describe(log + start, n, o, &d);
	}
	if (r < 0) {
		description_done(&d);
		return r;
	}
	rep->corrupted_reason = d.corrupted;
	if (!rep->corrupted_reason)
		rep->corrupted_reason = judge_corrupted(d.title ? d.title : "", text + g.prefix_len,
							text_len - g.prefix_len, d.format);
	rep->title = d.title ? title_normalize(d.title) : NULL;
	for (char **a = d.alts; a && *a; a++) {
		_cleanup_free_ char *alt = title_normalize(*a);

		if (!alt || (!streq_ptr(alt, rep->title) && !strv_contains(rep->alt_titles, alt) &&
			     strv_push(&rep->alt_titles, alt) < 0)) {
			description_done(&d);
			return -ENOMEM;
		}
	}
	description_done(&d);
	r = stack_extract_frame(&report_trace_fmt, text + g.prefix_len, text_len - g.prefix_len, &frame,
				&rep->frames, NULL);
	if (r < 0)
		return r;
	if (!rep->title)
		return -ENOMEM;
	return 0;
}

int report_parse(const char *log, size_t len, struct report **ret_report)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	const struct oops *o = NULL;
	size_t start = 0;
	struct line l = {};
	int r;

	if (len > REPORT_INPUT_MAX)
		return -E2BIG;
	pthread_once(&init_once, init);
	if (init_result < 0)
		return init_result;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	rep->alt_titles = calloc(1, sizeof(char *));
	if (!rep->alt_titles)
		return -ENOMEM;
	for (size_t pos = 0; pos < len && !o;) {
		const char *nl = memchr(log + pos, '\n', len - pos);
		size_t next = nl ? (size_t)(nl - log) : len;

		o = line_oops(log + pos, next - pos, len - pos);
		if (o) {
			start = pos;
			parse_line(log + pos, next - pos, &l);
		}
		pos = next + 1;
	}
	if (o) {
		r = fill(rep, log, len, start, o, l.ctx);
		if (r < 0)
			return r;
		rep->suppressed = log_suppressed(log, len);
		if (memmem(log, len, "serialport: VM disconnected.", 28) && !rep->corrupted_reason)
			rep->corrupted_reason = "console connection lost";
		rep->corrupted = rep->corrupted_reason != NULL;
		rep->panicked = memmem(log, len, "Kernel panic", 12) != NULL;
		rep->type = title_type(rep->title);
		rep->frame = frame_of_title(rep->title);
		rep->guilty_file = guilty_file(rep->text + rep->prefix_len, strlen(rep->text + rep->prefix_len),
					       rep->title);
		find_executor(rep);
	}
	*ret_report = TAKE_PTR(rep);
	return 0;
}

int report_from_title(const char *title, const char *log, size_t len, struct report **ret_report)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	size_t keep = MIN(len, REPORT_TEXT_MAX);

	if (len > REPORT_INPUT_MAX)
		return -E2BIG;
	if (!title || !*title)
		return -EINVAL;
	pthread_once(&init_once, init);
	if (init_result < 0)
		return init_result;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	rep->alt_titles = calloc(1, sizeof(char *));
	rep->title = title_normalize(title);
	rep->text = malloc(keep + 1);
	if (!rep->alt_titles || !rep->title || !rep->text)
		return -ENOMEM;
	/* the end of the log says most about a machine that went away */
	memcpy(rep->text, log + len - keep, keep);
	rep->text[keep] = 0;
	for (size_t i = 0; i < keep; i++)
		if (rep->text[i] == 0)
			rep->text[i] = '?';
	rep->start = len - keep;
	rep->end = len;
	rep->type = title_type(rep->title);
	rep->frame = frame_of_title(rep->title);
	rep->suppressed = log_suppressed(log, len);
	rep->panicked = memmem(log, len, "Kernel panic", 12) != NULL;
	*ret_report = TAKE_PTR(rep);
	return 0;
}

const char *report_title(const struct report *r) { return r->title; }
char *const *report_alt_titles(const struct report *r) { return r->alt_titles; }
const char *report_type(const struct report *r) { return r->type; }
const char *report_frame(const struct report *r) { return r->frame; }
char *const *report_frames(const struct report *r)
{
	static char *const empty[] = { NULL };
	return r->frames ? r->frames : empty;
}
const char *report_guilty_file(const struct report *r) { return r->guilty_file; }
bool report_corrupted(const struct report *r) { return r->corrupted; }
const char *report_corrupted_reason(const struct report *r) { return r->corrupted_reason; }
bool report_suppressed(const struct report *r) { return r->suppressed; }
bool report_panicked(const struct report *r) { return r->panicked; }
const char *report_text(const struct report *r) { return r->title ? r->text : NULL; }
const char *report_oops_text(const struct report *r)
{
	return r->title ? r->text + r->prefix_len : NULL;
}
size_t report_start(const struct report *r) { return r->start; }
size_t report_end(const struct report *r) { return r->end; }

bool report_executor(const struct report *r, int *ret_proc, int *ret_id)
{
	if (!r->has_exec)
		return false;
	*ret_proc = r->exec_proc;
	*ret_id = r->exec_id;
	return true;
}

bool report_matches_title(const struct report *r, const char *t)
{
	if (!r->title || !t)
		return false;
	if (streq(r->title, t))
		return true;
	return strv_contains(r->alt_titles, t);
}

/* The length of t without syzbot's " (N)" duplicate counter. */
static size_t without_counter(const char *t)
{
	size_t n = strlen(t), i = n;

	if (n < 4 || t[n - 1] != ')')
		return n;
	for (i = n - 1; i > 0 && t[i - 1] >= '0' && t[i - 1] <= '9'; i--)
		;
	if (i == n - 1 || i < 3 || t[i - 1] != '(' || t[i - 2] != ' ')
		return n;
	return i - 2;
}

/* Splits t (n bytes) at its last " in ": the head keeps " in ", the
 * frame is what follows, stripped of every syscall prefix. */
static void title_split(const char *t, size_t n, size_t *ret_head, const char **ret_frame, size_t *ret_frame_len)
{
	const char *in = NULL;
	size_t off;

	for (const char *p = t; (p = memmem(p, n - (size_t)(p - t), " in ", 4)); p++)
		in = p;
	if (!in) {
		*ret_head = n;
		*ret_frame = t + n;
		*ret_frame_len = 0;
		return;
	}
	*ret_head = (size_t)(in - t) + 4;
	*ret_frame = in + 4;
	*ret_frame_len = n - *ret_head;
	/* to a fixed point: the title of "__x64_sys_foo" is "sys_foo" */
	while ((off = frame_strip_offset(*ret_frame, *ret_frame_len)) > 0) {
		*ret_frame += off;
		*ret_frame_len -= off;
	}
}

bool report_titles_same(const char *a, const char *b)
{
	size_t an, bn, ah, bh, af, bf;
	const char *afr, *bfr;

	if (!a || !b)
		return false;
	an = without_counter(a);
	bn = without_counter(b);
	title_split(a, an, &ah, &afr, &af);
	title_split(b, bn, &bh, &bfr, &bf);
	return ah == bh && af == bf && memcmp(a, b, ah) == 0 && memcmp(afr, bfr, af) == 0;
}
