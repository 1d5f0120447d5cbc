/* Finding the guilty function in a report's stack traces and the guilty
 * source file of a symbolised report. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>
#undef ARRAY_SIZE /* libiberty.h has its own; common/macro.h's is used */

#include "common/strutil.h"
#include "report-internal.h"

#define FRAMES_MAX 256

struct line_iter {
	const char *text;
	size_t len, pos;
};

static bool next_line(struct line_iter *it, const char **ret, size_t *ret_len)
{
	const char *nl;
	size_t n;

	if (it->pos >= it->len)
		return false;
	nl = memchr(it->text + it->pos, '\n', it->len - it->pos);
	n = nl ? (size_t)(nl - (it->text + it->pos)) : it->len - it->pos;
	*ret = it->text + it->pos;
	*ret_len = n;
	while (*ret_len > 0 && (*ret)[*ret_len - 1] == '\r')
		(*ret_len)--;
	it->pos += n + 1;
	return true;
}


static bool skipped(const struct stack_fmt *sf, const char *fn, size_t n)
{
	return re_match_any(report_skip_frames, fn, n) || re_match_any(sf->skip, fn, n);
}

/* Rust (v0 "_R...", legacy "_ZN...17h<hash>E") and C++ symbols as their
 * source names without parameters or hash, the way syzkaller names them
 * ("<rust_binder::process::Process>::update_ref"): skip patterns and
 * titles see the demangled name.  Other names are copied as they are. */
static char *demangle(const char *fn, size_t fl)
{
	_cleanup_free_ char *raw = strndup(fn, fl);
	char *d;

	if (!raw)
		return NULL;
	if (fl < 3 || raw[0] != '_' || (raw[1] != 'R' && raw[1] != 'Z'))
		return TAKE_PTR(raw);
	d = cplus_demangle(raw, DMGL_AUTO);
	return d ? d : TAKE_PTR(raw);
}

/* report.go appendStackFrame: every non-skipped capture of a frame match
 * (arm's "(callee) from (caller)" gives both). */
static int add_frame(char ***frames, size_t *n, const struct stack_fmt *sf, const char *line,
		     const size_t *ov, int groups)
{
	for (int g = 1; g < groups; g++) {
		char *copy;
		char **nv;

		if (ov[2 * g] == SIZE_MAX)
			continue;
		copy = demangle(line + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
		if (!copy)
			return -ENOMEM;
		if (skipped(sf, copy, strlen(copy)) || *n >= FRAMES_MAX) {
			free(copy);
			continue;
		}
		nv = realloc(*frames, (*n + 2) * sizeof(char *));
		if (!nv) {
			free(copy);
			return -ENOMEM;
		}
		nv[(*n)++] = copy;
		nv[*n] = NULL;
		*frames = nv;
	}
	return 0;
}

bool stack_start_line(const char *l, size_t n)
{
	return re_match_any(report_stack_starts, l, n);
}

int frame_line(const char *l, size_t n, size_t *ov)
{
	for (const char *const *re = report_frame_res; *re; re++) {
		int g = re_search(*re, l, n, 0, ov);

		if (g > 0)
			return g;
	}
	return 0;
}

/* report.go extractStackFrameImpl: the parts in order; a fault-injection
 * line interleaved with the report ends the part it is in, and the report
 * counts as cut (*flags STACK_CUT) though its frames still count. */
static int collect(const char *const *parts, const struct stack_fmt *sf, const char *text,
		   size_t len, char ***ret_frames, size_t *ret_n, unsigned *flags)
{
	struct line_iter it = { text, len, 0 };
	size_t ov[2 * RE_MAX_GROUPS];
	const char *l;
	size_t ln;
	int r;

	for (size_t p = 0; p < ARRAY_SIZE(sf->parts) && parts[p]; p++) {
		bool trace = streq(parts[p], STACK_TRACE);

		while (next_line(&it, &l, &ln)) {
			int g;

			if (re_match_any(report_corrupted_lines, l, ln)) {
				*flags |= STACK_CUT;
				break;
			}
			if (trace) {
				if (stack_start_line(l, ln))
					break;
				g = frame_line(l, ln, ov);
			} else {
				g = re_search(parts[p], l, ln, 0, ov);
				if (g <= 0)
					continue;
			}
			if (g > 0) {
				r = add_frame(ret_frames, ret_n, sf, l, ov, g);
				if (r < 0)
					return r;
			}
			if (!trace)
				break;
		}
	}
	return 0;
}

static bool matches_anchor(const char *f)
{
	return re_match_any(report_stall_anchors, f, strlen(f));
}

/* A frame under the name syzkaller titles it by: the shortest one left
 * by removing one of the syscall prefixes ("__x64_sys_read" -> "sys_read",
 * "ksys_msgctl" -> "msgctl"). */
size_t frame_strip_offset(const char *f, size_t n)
{
	size_t best = 0;

	for (const char *const *p = report_strip_prefixes; *p; p++) {
		size_t pl = strlen(*p);

		if (pl <= n && pl > best && strncmp(f, *p, pl) == 0)
			best = pl;
	}
	return best;
}

const char *frame_strip(const char *f)
{
	return f + frame_strip_offset(f, strlen(f));
}

/* The frame before the first dispatch anchor, both seen stripped. */
static const char *pick_stall(char **frames, size_t *ret_idx)
{
	const char *prev = frame_strip(frames[0]);
	size_t prev_idx = 0;

	for (size_t i = 0; frames[i]; i++) {
		const char *f = frame_strip(frames[i]);

		if (matches_anchor(f)) {
			if (strstr(f, "smp_call_function")) {
				prev = "smp_call_function";
				prev_idx = i;
			}
			*ret_idx = prev_idx;
			return prev;
		}
		prev = f;
		prev_idx = i;
	}
	return NULL;
}

static const char *pick_hung_task(char **frames, size_t *ret_idx)
{
	static const struct {
		const char *anchor, *bucket;
	} anchors[] = {
		{ "rtnl_lock", NULL }, { "synchronize_rcu", "synchronize_rcu" },
		{ "synchronize_srcu", "synchronize_rcu" }, { "synchronize_net", "synchronize_rcu" },
		{ "synchronize_sched", "synchronize_rcu" },
	};
	static const char *const waits[] = {
		"sched", "_lock", "_slowlock", "down", "rwsem", "completion", "kthread", "wait",
		"synchronize", "context_switch", "__switch_to", "cancel_delayed_work",
		"rcu_barrier",
	};

	for (size_t i = 0; frames[i]; i++) {
		const char *f = frame_strip(frames[i]);

		for (size_t a = 0; a < ARRAY_SIZE(anchors); a++)
			if (strstr(f, anchors[a].anchor)) {
				*ret_idx = i;
				return anchors[a].bucket ? anchors[a].bucket : f;
			}
	}
	for (size_t i = 0; frames[i]; i++) {
		const char *f = frame_strip(frames[i]);
		bool wait = false;

		for (size_t w = 0; w < ARRAY_SIZE(waits) && !wait; w++)
			wait = strstr(f, waits[w]) != NULL;
		if (!wait) {
			*ret_idx = i;
			return f;
		}
	}
	return NULL;
}

static const char *pick_frame(const struct stack_fmt *sf, char **frames, size_t n, size_t *ret_idx)
{
	*ret_idx = 0;
	if (n == 0)
		return NULL;
	switch (sf->picker) {
	case PICK_STALL:
		return pick_stall(frames, ret_idx);
	case PICK_HUNG_TASK:
		return pick_hung_task(frames, ret_idx);
	case PICK_FIRST:
		break;
	}
	return frame_strip(frames[0]);
}

int stack_extract_frame(const struct stack_fmt *sf, const char *text, size_t len,
			struct picked_frame *ret_pick, char ***ret_frames, unsigned *ret_flags)
{
	_cleanup_strv_ char **frames = NULL;
	const char *pick;
	size_t n = 0, idx;
	unsigned flags = 0;
	int r;

	r = collect(sf->parts, sf, text, len, &frames, &n, &flags);
	if (r < 0)
		return r;
	pick = pick_frame(sf, frames, n, &idx);
	/* report.go: the second shape when the first gave no frame or was
	 * cut, and then only its result counts */
	if ((!pick || (flags & STACK_CUT)) && sf->parts2[0]) {
		strv_free(frames);
		frames = NULL;
		n = 0;
		flags = 0;
		r = collect(sf->parts2, sf, text, len, &frames, &n, &flags);
		if (r < 0)
			return r;
		pick = pick_frame(sf, frames, n, &idx);
	}
	*ret_pick = (struct picked_frame){};
	if (pick) {
		ret_pick->canonical = strdup(pick);
		ret_pick->raw = strdup(frames[idx]);
		if (!ret_pick->canonical || !ret_pick->raw) {
			picked_frame_done(ret_pick);
			return -ENOMEM;
		}
	}
	if (ret_frames)
		*ret_frames = TAKE_PTR(frames);
	if (ret_flags)
		*ret_flags = flags;
	return 0;
}

void picked_frame_done(struct picked_frame *p)
{
	free(p->canonical);
	free(p->raw);
	*p = (struct picked_frame){};
}

/* ---- guilty file ------------------------------------------------------ */

/* Normalises "./a//b/../c.c" as Go's filepath.Clean does (syzkaller's
 * guilty file is cleaned so): "." and empty components go, ".." takes
 * the component before it, and a rooted path cannot climb above "/". */
static char *clean_path(const char *p, size_t n)
{
	char *out = malloc(n + 2);
	size_t o = 0;
	bool rooted = n > 0 && p[0] == '/';

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t e = i, last;

		while (e < n && p[e] != '/')
			e++;
		if (e - i == 0 || (e - i == 1 && p[i] == '.')) {
			i = e + 1;
			continue;
		}
		if (e - i == 2 && p[i] == '.' && p[i + 1] == '.') {
			last = o;
			while (last > 0 && out[last - 1] != '/')
				last--;
			if (o > 0 && !(o - last == 2 && out[last] == '.' && out[last + 1] == '.')) {
				o = last > 0 ? last - 1 : 0;
				i = e + 1;
				continue;
			}
			if (rooted) {
				i = e + 1;
				continue;
			}
		}
		if (o > 0)
			out[o++] = '/';
		memcpy(out + o, p + i, e - i);
		o += e - i;
		i = e + 1;
	}
	out[o] = 0;
	if (rooted) {
		memmove(out + 1, out, o + 1);
		out[0] = '/';
	} else if (o == 0) {
		out[0] = '.', out[1] = 0;
	}
	return out;
}

/* syzkaller's deeperPathRe: clean lies in a subdirectory of the folder of
 * best (Go's filepath.Dir). */
static bool deeper(const char *best, const char *clean)
{
	const char *slash = strrchr(best, '/');
	size_t d = !slash ? 0 : slash == best ? 1 : (size_t)(slash - best);
	const char *rest;

	if (!slash) {
		if (clean[0] != '.')
			return false;
		rest = clean + 1;
	} else if (strncmp(clean, best, d) != 0) {
		return false;
	} else
		rest = clean + d;
	return rest[0] == '/' && rest[1] && rest[1] != '/' && strchr(rest + 1, '/');
}

static bool ignored_file(const char *f)
{
	return re_match_any(report_guilty_ignores, f, strlen(f));
}

/* The file of a line's first "path.c:N" (linux.go filenameRe); the line
 * and the file may still be ones to ignore. */
static char *line_file(const char *l, size_t n)
{
	size_t ov[2 * RE_MAX_GROUPS];

	if (re_search("([a-zA-Z0-9_\\-./]*[a-zA-Z0-9_\\-]+\\.(c|h)):[0-9]+", l, n, 0, ov) < 2)
		return NULL;
	return strndup(l + ov[2], ov[3] - ov[2]);
}

static bool ignored_line(const char *l, size_t n)
{
	return re_match_any(report_guilty_line_ignores, l, n);
}

/* linux.go extractGuiltyFileImpl: the first file of the report that is
 * neither a generic helper nor on a line that only names a lock site,
 * then a file in a subdirectory of its folder further down, repeatedly.
 * With nothing but helpers, the first file named. */
static char *guilty_in(const char *text, size_t len)
{
	_cleanup_free_ char *first = NULL, *best = NULL;
	size_t pos = 0;

	while (pos < len) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		_cleanup_free_ char *f = NULL, *clean = NULL;

		pos += n + 1;
		if (n > REPORT_LINE_MAX)
			continue;
		f = line_file(l, n);
		if (!f)
			continue;
		if (!first && !best)
			first = strdup(f);
		if (ignored_file(f) || ignored_line(l, n))
			continue;
		clean = clean_path(f, strlen(f));
		if (!clean)
			return NULL;
		if (!best) {
			best = TAKE_PTR(clean);
			continue;
		}
		if (deeper(best, clean)) {
			free(best);
			best = TAKE_PTR(clean);
		}
	}
	return best ? TAKE_PTR(best) : TAKE_PTR(first);
}

char *guilty_file(const char *text, size_t len, const char *title)
{
	if (title && startswith(title, "INFO: rcu detected stall")) {
		/* Stalls loop in generic code; syzkaller looks from the
		 * interrupt's entry on first. */
		for (size_t i = 0; report_stall_irq_entries[i]; i++) {
			const char *e = report_stall_irq_entries[i];
			const char *p = memmem(text, len, e, strlen(e));
			char *f;

			if (!p)
				continue;
			f = guilty_in(p, len - (size_t)(p - text));
			if (f)
				return f;
		}
	}
	return guilty_in(text, len);
}

int report_guilty_file_of(const char *text, size_t len, const char *title, char **ret_file)
{
	*ret_file = guilty_file(text, len, title);
	return 0;
}
