/* The integrity gates; see gates.h.  Each gate is a function from the
 * parsed patch (and, when given, the base tree) to a verdict. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/proc.h"
#include "common/strutil.h"
#include "crashinfo-internal.h"
#include "gates.h"
#include "llm-internal.h"
#include "udiff-internal.h"

#define GATE_FILE_MAX (8u * 1024 * 1024)
#define MAX_VERDICTS 16

struct verdict {
	const char *name;
	enum gate_status status;
	char *reason;
};

struct gate_verdicts {
	struct verdict v[MAX_VERDICTS];
	size_t n;
	char *failure;
};

struct gate_ctx {
	const struct udiff *d;
	const struct crash_info *crash; /* NULL when the report was unreadable */
	const char *src;
	const struct gate_limits *lim;
	struct gate_verdicts *out;
};

const char *gate_status_name(enum gate_status s)
{
	return s == GATE_PASS ? "pass" : s == GATE_FAIL ? "reject" : "skip";
}

static int verdict(struct gate_ctx *g, const char *name, enum gate_status st,
		   const char *fmt, ...) _printf_(4, 5);
static int verdict(struct gate_ctx *g, const char *name, enum gate_status st,
		   const char *fmt, ...)
{
	struct verdict *v;
	va_list ap;

	if (g->out->n >= MAX_VERDICTS)
		return -E2BIG;
	v = &g->out->v[g->out->n];
	va_start(ap, fmt);
	if (vasprintf(&v->reason, fmt, ap) < 0)
		v->reason = NULL;
	va_end(ap);
	if (!v->reason)
		return -ENOMEM;
	v->name = name;
	v->status = st;
	g->out->n++;
	return 0;
}

void gate_verdicts_free(struct gate_verdicts *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i].reason);
	free(v->failure);
	free(v);
}

bool gate_verdicts_accepted(const struct gate_verdicts *v)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].status == GATE_FAIL)
			return false;
	return true;
}

size_t gate_verdicts_count(const struct gate_verdicts *v)
{
	return v->n;
}

void gate_verdicts_get(const struct gate_verdicts *v, size_t i, const char **ret_name,
		       enum gate_status *ret_status, const char **ret_reason)
{
	*ret_name = v->v[i].name;
	*ret_status = v->v[i].status;
	*ret_reason = v->v[i].reason;
}

const char *gate_verdicts_failure(const struct gate_verdicts *v)
{
	return v->failure;
}

json_t *gate_verdicts_to_json(const struct gate_verdicts *v)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "gate", v->v[i].name,
			"verdict", gate_status_name(v->v[i].status), "reason", v->v[i].reason));
	return json_pack("{s:b, s:o}", "accepted", gate_verdicts_accepted(v), "gates", arr);
}

int gate_limits_from_config(const struct config *c, struct gate_limits *ret)
{
	struct gate_limits l = GATE_LIMITS_DEFAULT;
	int64_t v;

	if (config_get_int(c, "agent", NULL, "max-hunks", &v) >= 0)
		l.max_hunks = (unsigned)v;
	if (config_get_int(c, "agent", NULL, "max-files", &v) >= 0)
		l.max_files = (unsigned)v;
	if (config_get_int(c, "agent", NULL, "max-lines", &v) >= 0)
		l.max_lines = (unsigned)v;
	(void)config_get_bool(c, "agent", NULL, "checkpatch", &l.checkpatch);
	*ret = l;
	return 0;
}

/* --- helpers over C text ------------------------------------------------ */

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Removes comments and string literals from one line (comment state is
 * carried across lines), so that a check "kept" in a comment does not
 * count as kept. */
static void strip_code(const char *in, char *out, size_t max, bool *in_comment)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 1 < max; p++) {
		if (*in_comment) {
			if (p[0] == '*' && p[1] == '/') {
				*in_comment = false;
				p++;
			}
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			*in_comment = true;
			p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '/')
			break;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
			out[o++] = '"';
			out[o++] = '"';
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

/* Occurrences of NAME( as a whole identifier. */
static unsigned count_calls(const char *code, const char *name)
{
	size_t n = strlen(name);
	unsigned k = 0;

	for (const char *p = strstr(code, name); p; p = strstr(p + 1, name)) {
		const char *q = p + n;

		if (p > code && ident_char(p[-1]))
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '(')
			k++;
	}
	return k;
}

/* NAME( 0 ) / NAME(false): a check kept in form, neutralised in fact. */
static bool neutralised_call(const char *code, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(code, name); p; p = strstr(p + 1, name)) {
		const char *q = p + n;

		if (p > code && ident_char(p[-1]))
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '(')
			continue;
		while (*q == ' ')
			q++;
		if ((startswith(q, "0") || startswith(q, "false")) &&
		    (q[strspn(q, "0false ")] == ')' || q[strspn(q, "0false ")] == ','))
			return true;
	}
	return false;
}

/* --- the gates ---------------------------------------------------------- */

static bool path_is_clean(const char *p)
{
	if (!*p || p[0] == '/' || strstr(p, "//"))
		return false;
	for (const char *c = p; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-./+,", *c))
			return false;
	for (const char *c = p; c; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		if (startswith(c, "../") || streq(c, "..") || startswith(c, "./") || streq(c, "."))
			return false;
	}
	return true;
}

static const char *build_file_reason(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (startswith(base, "Makefile") || startswith(base, "Kbuild") || endswith(base, ".mk"))
		return "is a build file";
	if (startswith(base, "Kconfig") || endswith(base, ".config") || endswith(base, "defconfig") ||
	    streq(base, ".config"))
		return "is kernel configuration";
	if (startswith(path, "scripts/") || startswith(path, "tools/testing/"))
		return "belongs to the build or test tooling";
	if (endswith(base, ".syz") || startswith(base, "repro"))
		return "is a reproducer";
	if (!endswith(base, ".c") && !endswith(base, ".h"))
		return "is not a C source or header";
	return NULL;
}

static int gate_scope(struct gate_ctx *g)
{
	for (size_t i = 0; i < g->d->n_files; i++) {
		const struct udiff_file *f = &g->d->files[i];
		const char *path = udiff_file_path(f), *why;
		_cleanup_free_ char *esc = str_escape(path, strlen(path), 200);

		if (!f->old_path || !f->new_path)
			return verdict(g, "scope", GATE_FAIL, "%s: creates or deletes a file; a fix edits existing sources", esc);
		if (!streq(f->old_path, f->new_path))
			return verdict(g, "scope", GATE_FAIL, "%s: renames a file", esc);
		if (f->binary || f->mode_change || f->symlink)
			return verdict(g, "scope", GATE_FAIL, "%s: binary, mode or symlink change", esc);
		if (!path_is_clean(path))
			return verdict(g, "scope", GATE_FAIL, "%s: path leaves the tree or is not canonical", esc);
		if (g->lim->reproducer && streq(path, g->lim->reproducer))
			return verdict(g, "scope", GATE_FAIL, "%s: touches the reproducer", esc);
		if ((why = build_file_reason(path)))
			return verdict(g, "scope", GATE_FAIL, "%s %s", esc, why);
		if (g->src) {
			_cleanup_free_ char *full = NULL;
			struct stat st;

			if (asprintf(&full, "%s/%s", g->src, path) < 0)
				return -ENOMEM;
			if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode))
				return verdict(g, "scope", GATE_FAIL, "%s is not a regular file of the tree", esc);
		}
	}
	return verdict(g, "scope", GATE_PASS, "%zu file(s), all C sources inside the tree", g->d->n_files);
}

static int gate_size(struct gate_ctx *g)
{
	unsigned lines = 0;

	for (size_t i = 0; i < g->d->n_files; i++)
		for (size_t j = 0; j < g->d->files[i].n_hunks; j++)
			for (size_t k = 0; k < g->d->files[i].hunks[j].n_lines; k++)
				lines += g->d->files[i].hunks[j].lines[k].kind != ' ';
	if (g->d->n_files > g->lim->max_files)
		return verdict(g, "size", GATE_FAIL, "%zu files changed, at most %u allowed",
			       g->d->n_files, g->lim->max_files);
	if (g->d->n_hunks > g->lim->max_hunks)
		return verdict(g, "size", GATE_FAIL, "%zu hunks, at most %u allowed",
			       g->d->n_hunks, g->lim->max_hunks);
	if (lines > g->lim->max_lines)
		return verdict(g, "size", GATE_FAIL, "%u lines changed, at most %u allowed",
			       lines, g->lim->max_lines);
	if (lines == 0)
		return verdict(g, "size", GATE_FAIL, "the patch changes nothing");
	return verdict(g, "size", GATE_PASS, "%zu file(s), %zu hunk(s), %u line(s)",
		       g->d->n_files, g->d->n_hunks, lines);
}

typedef int (*line_fn)(struct gate_ctx *g, const struct udiff_file *f,
		       const struct udiff_line *l, const char *code, void *ud);

/* Calls fn for every added/removed line with its comment-stripped code. */
static int each_changed_line(struct gate_ctx *g, line_fn fn, void *ud, bool raw)
{
	char code[1024];

	for (size_t i = 0; i < g->d->n_files; i++) {
		const struct udiff_file *f = &g->d->files[i];
		bool c_add = false, c_del = false;

		for (size_t j = 0; j < f->n_hunks; j++)
			for (size_t k = 0; k < f->hunks[j].n_lines; k++) {
				const struct udiff_line *l = &f->hunks[j].lines[k];
				int r;

				if (l->kind == ' ')
					continue;
				if (raw)
					snprintf(code, sizeof(code), "%s", l->text);
				else
					strip_code(l->text, code, sizeof(code),
						   l->kind == '+' ? &c_add : &c_del);
				r = fn(g, f, l, code, ud);
				if (r != 0)
					return r;
			}
	}
	return 0;
}

static int probe_line(struct gate_ctx *g, const struct udiff_file *f,
		      const struct udiff_line *l, const char *code, void *ud)
{
	const char **hit = ud;

	if (l->kind != '+')
		return 0;
	if (strstr(code, KFIX_PROBE_MARKER))
		*hit = "carries the probe marker " KFIX_PROBE_MARKER;
	else if (count_calls(code, "trace_printk"))
		*hit = "calls trace_printk";
	else if (count_calls(code, "dump_stack"))
		*hit = "adds dump_stack()";
	else
		return 0;
	return verdict(g, "probes", GATE_FAIL, "%s: an added line %s (instrumentation left in the patch)",
		       udiff_file_path(f), *hit) ?: 1;
}

static int gate_probes(struct gate_ctx *g)
{
	const char *hit = NULL;
	int r = each_changed_line(g, probe_line, &hit, true);

	if (r < 0 || hit)
		return r < 0 ? r : 0;
	return verdict(g, "probes", GATE_PASS, "no instrumentation left");
}

/* Checks whose removal or weakening hides a crash instead of fixing it. */
static const char *const checks[] = {
	"WARN_ON", "WARN_ON_ONCE", "WARN", "WARN_ONCE", "WARN_RATELIMIT",
	"BUG_ON", "BUG", "VM_BUG_ON", "VM_BUG_ON_PAGE", "VM_BUG_ON_FOLIO",
	"VM_WARN_ON", "VM_WARN_ON_ONCE", "VM_WARN_ON_FOLIO", "BUILD_BUG_ON",
	"lockdep_assert_held", "lockdep_assert_held_once", "lockdep_assert_held_write",
	"lockdep_assert_held_read", "lockdep_assert_not_held", "lockdep_assert",
	"lockdep_assert_irqs_disabled", "lockdep_assert_irqs_enabled",
	"assert_spin_locked", "RCU_LOCKDEP_WARN", "rcu_lockdep_assert",
	"might_sleep", "might_sleep_if", "might_fault", "might_lock", "cant_sleep",
	"kasan_check_read", "kasan_check_write", "kcsan_check_access",
	"instrument_read", "instrument_write", "instrument_read_write",
	"instrument_atomic_read", "instrument_atomic_write", "instrument_atomic_read_write",
	"instrument_copy_from_user", "instrument_copy_to_user", "kasan_check_byte",
	"refcount_warn_saturate",
	"WARN_ON_SMP", "KUNIT_ASSERT",
};

struct check_count {
	const struct udiff_file *f;
	unsigned removed[ARRAY_SIZE(checks)];
	unsigned added[ARRAY_SIZE(checks)];
	const char *neutralised;
};

static int count_line(struct gate_ctx *g, const struct udiff_file *f,
		      const struct udiff_line *l, const char *code, void *ud)
{
	struct check_count *cc = ud;

	if (cc->f != f)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		unsigned n = count_calls(code, checks[i]);

		if (l->kind == '+') {
			cc->added[i] += n;
			if (n && neutralised_call(code, checks[i]))
				cc->neutralised = checks[i];
		} else
			cc->removed[i] += n;
	}
	return 0;
}

static int gate_checks(struct gate_ctx *g)
{
	for (size_t i = 0; i < g->d->n_files; i++) {
		struct check_count cc = { .f = &g->d->files[i] };
		const char *path = udiff_file_path(cc.f);
		int r = each_changed_line(g, count_line, &cc, false);

		if (r < 0)
			return r;
		if (cc.neutralised)
			return verdict(g, "checks", GATE_FAIL,
				       "%s: %s() is given a constant false condition", path, cc.neutralised);
		for (size_t k = 0; k < ARRAY_SIZE(checks); k++)
			if (cc.removed[k] > cc.added[k])
				return verdict(g, "checks", GATE_FAIL,
					       "%s: removes %u %s() check(s) (kept or commented out: %u); "
					       "the check that fired must stay", path,
					       cc.removed[k] - cc.added[k], checks[k], cc.added[k]);
	}
	return verdict(g, "checks", GATE_PASS, "no assertion, lockdep or sanitizer check removed or weakened");
}

/* Ways to make a detector look away rather than fix what it saw. */
static const char *const silencers[] = {
	"data_race", "__no_sanitize_address", "__no_kasan", "__no_kcsan", "__no_kmsan",
	"__no_sanitize_thread", "__no_sanitize_memory", "__no_sanitize_undefined",
	"kasan_disable_current", "kmsan_disable_current", "lockdep_off",
	"lockdep_set_novalidate_class", "kmemleak_not_leak", "kmemleak_ignore",
	"kmsan_unpoison_memory", "__no_kmsan_checks", "kcsan_disable_current",
};

static int silence_line(struct gate_ctx *g, const struct udiff_file *f,
			const struct udiff_line *l, const char *code, void *ud)
{
	const char *p = code;

	if (l->kind != '+')
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (startswith(p, "#if 0") || startswith(p, "#ifdef NOTYET"))
		return verdict(g, "silence", GATE_FAIL, "%s: disables code with #if 0",
			       udiff_file_path(f)) ?: 1;
	for (size_t i = 0; i < ARRAY_SIZE(silencers); i++) {
		const char *s = strstr(code, silencers[i]);
		size_t n = strlen(silencers[i]);

		if (s && (s == code || !ident_char(s[-1])) && !ident_char(s[n]))
			return verdict(g, "silence", GATE_FAIL,
				       "%s: adds %s, which hides the report instead of fixing its cause",
				       udiff_file_path(f), silencers[i]) ?: 1;
	}
	return 0;
}

static int gate_silence(struct gate_ctx *g)
{
	size_t before = g->out->n;
	int r = each_changed_line(g, silence_line, NULL, false);

	if (r < 0)
		return r;
	if (g->out->n > before)
		return 0;
	return verdict(g, "silence", GATE_PASS, "no sanitizer or lockdep suppression added");
}

/* --- amputation ----------------------------------------------------------- */

struct body {
	char **lines; /* borrowed */
	size_t n;
};

static bool line_defines(const char *l, const char *fn)
{
	const char *p;
	size_t n = strlen(fn);

	if (!*l || isspace((unsigned char)*l) || *l == '#' || *l == '}' || *l == '/' || *l == '*')
		return false;
	for (p = strstr(l, fn); p; p = strstr(p + 1, fn))
		if ((p == l || !ident_char(p[-1])) && p[n] == '(')
			return !endswith(l, ";");
	return false;
}

/* Finds fn's body in lines (kernel style: "{" and "}" in column 0). */
static bool find_body(char **lines, size_t n, const char *fn, struct body *ret)
{
	for (size_t i = 0; i < n; i++) {
		size_t b, e;

		if (!line_defines(lines[i], fn))
			continue;
		for (b = i; b < n && b < i + 8 && lines[b][0] != '{' && !endswith(lines[b], ";"); b++)
			;
		if (b >= n || lines[b][0] != '{')
			continue;
		for (e = b + 1; e < n && !(lines[e][0] == '}'); e++)
			;
		if (e >= n)
			return false;
		ret->lines = lines + b + 1;
		ret->n = e - b - 1;
		return true;
	}
	return false;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static bool is_label(const char *code)
{
	const char *p = skip_ws(code);
	const char *q = p;

	while (ident_char(*q))
		q++;
	return q > p && *skip_ws(q) == ':' && skip_ws(q)[1] != ':' &&
	       !startswith(p, "default") && !startswith(p, "case");
}

static bool opens_conditional(const char *code)
{
	const char *p = skip_ws(code);
	size_t n = strlen(p);

	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	return (startswith(p, "if") || startswith(p, "else") || startswith(p, "for") ||
		startswith(p, "while") || startswith(p, "} else")) &&
	       n > 0 && p[n - 1] != ';' && p[n - 1] != '{';
}

/* Counts statements at the function's top level that end it
 * unconditionally (return/goto) while more code follows before any
 * label: the code after them can no longer run.  Also counts the
 * function's top-level statements. */
static void analyse_body(const struct body *b, unsigned *ret_dead, unsigned *ret_stmts)
{
	bool in_comment = false, pending_exit = false;
	char code[1024], prev[1024] = "";
	unsigned dead = 0, stmts = 0;
	int depth = 1;

	for (size_t i = 0; i < b->n; i++) {
		int start_depth = depth;
		const char *p;

		strip_code(b->lines[i], code, sizeof(code), &in_comment);
		p = skip_ws(code);
		for (const char *c = code; *c; c++)
			depth += (*c == '{') - (*c == '}');
		if (!*p)
			continue;
		if (start_depth != 1) {
			strcpy(prev, code);
			continue;
		}
		if (is_label(p)) {
			pending_exit = false;
			strcpy(prev, code);
			continue;
		}
		if (pending_exit) {
			dead++;
			pending_exit = false;
		}
		if (*p != '}' && *p != '{')
			stmts++;
		if ((startswith(p, "return") && !ident_char(p[6])) ||
		    (startswith(p, "goto") && !ident_char(p[4])))
			pending_exit = !opens_conditional(prev);
		if (startswith(p, "if (1)") || startswith(p, "if (true)"))
			pending_exit = strstr(p, "return") != NULL;
		strcpy(prev, code);
	}
	*ret_dead = dead;
	*ret_stmts = stmts;
}

static int split_copy(const char *text, char **ret_copy, char ***ret_lines, size_t *ret_n)
{
	char *copy = strdup(text), **v = NULL;
	size_t n = 0, cap = 0;

	if (!copy)
		return -ENOMEM;
	for (char *s = copy; s && *s;) {
		char *nl = strchr(s, '\n');

		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*v));

			if (!nv) {
				free(v);
				free(copy);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = s;
		if (nl)
			*nl++ = '\0';
		s = nl;
	}
	*ret_copy = copy;
	*ret_lines = v;
	*ret_n = n;
	return 0;
}

static int amputation_in_file(struct gate_ctx *g, const struct udiff_file *f,
			      const char **suspects, size_t n_suspects, bool *ret_checked)
{
	_cleanup_free_ char *full = NULL, *old = NULL, *new = NULL, *oc = NULL, *nc = NULL;
	_cleanup_free_ char **ol = NULL, **nl = NULL;
	size_t on = 0, nn = 0;
	int r;

	if (asprintf(&full, "%s/%s", g->src, udiff_file_path(f)) < 0)
		return -ENOMEM;
	if (read_file_bounded(full, GATE_FILE_MAX, &old, NULL) < 0)
		return 0;
	r = udiff_apply_file(f, old, &new);
	if (r == -ESRCH)
		return verdict(g, "amputation", GATE_FAIL, "%s: the patch does not apply to the base tree",
			       udiff_file_path(f)) ?: 1;
	if (r < 0)
		return r;
	if ((r = split_copy(old, &oc, &ol, &on)) < 0 || (r = split_copy(new, &nc, &nl, &nn)) < 0)
		return r;
	for (size_t i = 0; i < n_suspects; i++) {
		struct body ob, nb;
		unsigned od, os, nd, ns;

		if (!find_body(ol, on, suspects[i], &ob) || !find_body(nl, nn, suspects[i], &nb))
			continue;
		*ret_checked = true;
		analyse_body(&ob, &od, &os);
		analyse_body(&nb, &nd, &ns);
		if (nd > od)
			return verdict(g, "amputation", GATE_FAIL,
				       "%s: %s() now returns before the rest of its body on every path; "
				       "the crashing code is skipped, not fixed", udiff_file_path(f),
				       suspects[i]) ?: 1;
		if (os >= 6 && ns * 3 < os)
			return verdict(g, "amputation", GATE_FAIL,
				       "%s: %s() is cut from %u to %u statements", udiff_file_path(f),
				       suspects[i], os, ns) ?: 1;
	}
	return 0;
}

/* Without the base tree: an added one-tab-indented return in a hunk
 * whose context names a crashing function, followed by more code. */
static int amputation_in_hunks(struct gate_ctx *g, const struct udiff_file *f,
			       const char **suspects, size_t n_suspects)
{
	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		const char *fn = NULL;

		for (size_t i = 0; i < n_suspects && !fn; i++) {
			const char *p = strstr(h->section, suspects[i]);

			if (p && p[strlen(suspects[i])] == '(')
				fn = suspects[i];
		}
		if (!fn)
			continue;
		for (size_t k = 0; k + 1 < h->n_lines; k++) {
			const char *t = h->lines[k].text, *next = h->lines[k + 1].text;

			if (h->lines[k].kind != '+' || t[0] != '\t' || t[1] == '\t' ||
			    !(startswith(t + 1, "return") || startswith(t + 1, "goto ")))
				continue;
			if (k > 0 && opens_conditional(h->lines[k - 1].text))
				continue;
			if (next[0] == '\t' && next[1] != '\t' && !is_label(next) && next[1] != '}')
				return verdict(g, "amputation", GATE_FAIL,
					       "%s: %s() gains an unconditional early return",
					       udiff_file_path(f), fn) ?: 1;
		}
	}
	return 0;
}

struct call_count {
	const char *fn;
	unsigned removed, added;
};

static int count_suspect_calls(struct gate_ctx *g, const struct udiff_file *f,
			       const struct udiff_line *l, const char *code, void *ud)
{
	struct call_count *cc = ud;
	unsigned n = count_calls(code, cc->fn);

	if (l->kind == '+')
		cc->added += n;
	else
		cc->removed += n;
	return 0;
}

/* Dropping the call into the crash site avoids the crash the same way
 * deleting the code would. */
static int removed_site_call(struct gate_ctx *g, const char *site)
{
	struct call_count cc = { .fn = site };
	int r = each_changed_line(g, count_suspect_calls, &cc, false);

	if (r < 0)
		return r;
	if (cc.removed > cc.added)
		return verdict(g, "amputation", GATE_FAIL,
			       "removes %u call(s) to the crashing function %s(); the crash is "
			       "avoided, not fixed", cc.removed - cc.added, site) ?: 1;
	return 0;
}

static int gate_amputation(struct gate_ctx *g)
{
	const char *suspects[6];
	size_t n;
	bool checked = false;

	if (!g->crash)
		return verdict(g, "amputation", GATE_SKIP, "no crash site known");
	n = crash_info_suspects(g->crash, suspects, ARRAY_SIZE(suspects));
	if (n == 0)
		return verdict(g, "amputation", GATE_SKIP, "no crashing function in the report");
	if (g->crash->site) {
		int r = removed_site_call(g, g->crash->site);

		if (r != 0)
			return r < 0 ? r : 0;
	}
	for (size_t i = 0; i < g->d->n_files; i++) {
		const struct udiff_file *f = &g->d->files[i];
		int r = g->src ? amputation_in_file(g, f, suspects, n, &checked)
			       : amputation_in_hunks(g, f, suspects, n);

		if (r != 0)
			return r < 0 ? r : 0;
	}
	return verdict(g, "amputation", GATE_PASS, "%s: the crashing path still runs (%s)",
		       suspects[0], checked ? "function bodies compared" : "judged from the hunks");
}

/* --- checkpatch ------------------------------------------------------------ */

static int gate_checkpatch(struct gate_ctx *g, const char *diff, size_t len)
{
	_cleanup_free_ char *script = NULL, *maint = NULL, *errors = NULL;
	_cleanup_(proc_result_free) struct proc_result res = {};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	_cleanup_buf_ struct buf b = BUF_INIT(2048);
	unsigned n_err = 0, n_warn = 0;
	struct stat st;
	int r;

	if (!g->lim->checkpatch)
		return verdict(g, "checkpatch", GATE_SKIP, "disabled by configuration");
	if (!g->src)
		return verdict(g, "checkpatch", GATE_SKIP, "no base tree given");
	if (asprintf(&script, "%s/scripts/checkpatch.pl", g->src) < 0 ||
	    asprintf(&maint, "%s/MAINTAINERS", g->src) < 0)
		return -ENOMEM;
	if (stat(script, &st) < 0)
		return verdict(g, "checkpatch", GATE_SKIP, "the tree has no scripts/checkpatch.pl");
	{
		char *argv[] = { "perl", "scripts/checkpatch.pl", "--no-signoff", "--terse",
				 "--show-types", "--no-summary", "--patch", "-",
				 stat(maint, &st) < 0 ? "--no-tree" : NULL, NULL };

		o.cwd = g->src;
		o.stdin_data = diff;
		o.stdin_len = len;
		o.timeout_usec = 120ull * 1000000;
		o.output_max = 256 * 1024;
		r = proc_run(argv, &o, &res);
	}
	if (r < 0)
		return verdict(g, "checkpatch", GATE_SKIP, "could not run perl: %s", strerror(-r));
	if (res.timed_out || res.signal)
		return verdict(g, "checkpatch", GATE_SKIP, "checkpatch.pl did not finish");
	/* bounded by output_len: the captured output is not trusted to be
	 * NUL-terminated where a line ends */
	for (size_t off = 0; res.output && off < res.output_len;) {
		size_t n = strnlen(res.output + off, res.output_len - off);
		char *l, *e = memchr(res.output + off, '\n', n);

		if (e)
			n = (size_t)(e - (res.output + off));
		l = strndup(res.output + off, n);
		off += n + 1;
		if (!l)
			return -ENOMEM;
		if (strstr(l, ": ERROR:")) {
			if (n_err++ < 3) {
				_cleanup_free_ char *esc = str_escape(l, strlen(l), 200);

				(void)buf_printf(&b, "%s%s", b.len ? "; " : "", esc ?: "");
			}
		} else if (strstr(l, ": WARNING:"))
			n_warn++;
		free(l);
	}
	if (n_err)
		return verdict(g, "checkpatch", GATE_FAIL, "%u error(s): %s", n_err, b.data ?: "");
	return verdict(g, "checkpatch", GATE_PASS, "no errors (%u warning(s))", n_warn);
}

int gates_run(const char *diff, size_t diff_len, const char *report,
	      size_t report_len, const char *src_dir,
	      const struct gate_limits *lim, struct gate_verdicts **ret)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = calloc(1, sizeof(*v));
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_(crash_info_freep) struct crash_info *crash = NULL;
	_cleanup_free_ char *err = NULL;
	struct gate_limits dflt = GATE_LIMITS_DEFAULT;
	struct gate_ctx g = { .src = src_dir, .lim = lim ?: &dflt, .out = v };
	int (*const gates[])(struct gate_ctx *) = {
		gate_scope, gate_size, gate_probes, gate_checks, gate_silence, gate_amputation,
	};
	int r;

	if (!v)
		return -ENOMEM;
	if (report)
		(void)crash_info_parse(report, report_len, &crash);
	g.crash = crash;
	r = udiff_parse(diff, diff_len, &d, &err);
	if (r < 0 && r != -EBADMSG && r != -E2BIG)
		return r;
	if (r < 0) {
		r = verdict(&g, "parse", GATE_FAIL, "%s", err ?: "unreadable patch");
	} else {
		g.d = d;
		r = verdict(&g, "parse", GATE_PASS, "%zu file(s), %zu hunk(s)", d->n_files, d->n_hunks);
		for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(gates); i++)
			r = gates[i](&g);
		/* checkpatch is slow: only for patches that passed the rest */
		if (r >= 0 && gate_verdicts_accepted(v))
			r = gate_checkpatch(&g, diff, diff_len);
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].status == GATE_FAIL) {
			if (asprintf(&v->failure, "%s: %s", v->v[i].name, v->v[i].reason) < 0)
				return -ENOMEM;
			break;
		}
	*ret = TAKE_PTR(v);
	return 0;
}
