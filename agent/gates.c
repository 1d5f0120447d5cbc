/* The integrity gates; see gates.h.  Each gate is a function from the
 * parsed patch (and, when given, the base tree) to a gate_verdict. */
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
#include "gates-internal.h"
#include "gates.h"
#include "llm-internal.h"
#include "udiff-internal.h"

const char *gate_status_name(enum gate_status s)
{
	return s == GATE_PASS ? "pass" : s == GATE_FAIL ? "reject" : s == GATE_FLAG ? "flag" : "skip";
}

int gate_verdict(struct gate_ctx *g, const char *name, enum gate_status st,
		 const char *fmt, ...)
{
	struct gate_verdict *v;
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

size_t gate_verdicts_flags(const struct gate_verdicts *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += v->v[i].status == GATE_FLAG;
	return n;
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
	return json_pack("{s:b, s:I, s:o}", "accepted", gate_verdicts_accepted(v), "flagged",
			 (json_int_t)gate_verdicts_flags(v), "gates", arr);
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

bool gate_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Removes comments and string literals from one line (comment state is
 * carried across lines), so that a check "kept" in a comment does not
 * count as kept. */
void gate_strip_code(const char *in, char *out, size_t max, bool *in_comment)
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
unsigned gate_count_calls(const char *code, const char *name)
{
	size_t n = strlen(name);
	unsigned k = 0;

	for (const char *p = strstr(code, name); p; p = strstr(p + 1, name)) {
		const char *q = p + n;

		if (p > code && gate_ident_char(p[-1]))
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

		if (p > code && gate_ident_char(p[-1]))
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
	if (startswith(path, "scripts/") || startswith(path, "tools/"))
		return "belongs to the build or test tooling, which runs on the build host";
	if (startswith(path, "arch/") && strstr(path, "/tools/"))
		return "is a host program of the architecture's build (arch/*/tools/)";
	if (endswith(base, ".syz") || startswith(base, "repro"))
		return "is a reproducer";
	if (!endswith(base, ".c") && !endswith(base, ".h"))
		return "is not a C source or header";
	return NULL;
}

/* Is base (a .c file of dir) one of the host programs dir's Makefile
 * builds ("hostprogs += name" or "hostprogs-y := a b")?  They run on the
 * build host, outside any guest. */
static bool is_hostprog(const char *src, const char *path)
{
	_cleanup_free_ char *mk = NULL, *text = NULL;
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t stem = strlen(base) - 2;

	if (!src || !endswith(base, ".c") ||
	    asprintf(&mk, "%s/%.*sMakefile", src, (int)(base - path), path) < 0 ||
	    read_file_bounded(mk, GATE_FILE_MAX, &text, NULL) < 0)
		return false;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l + strspn(l, " \t"), *end = strchr(p, '\n') ?: p + strlen(p);

		if (!startswith(p, "hostprogs") && !startswith(p, "always-y") &&
		    !startswith(p, "userprogs"))
			continue;
		for (const char *w = p; (w = memmem(w, (size_t)(end - w), base, stem)); w++)
			if (w > p && !gate_ident_char(w[-1]) && w[-1] != '-' && w[-1] != '/' &&
			    !gate_ident_char(w[stem]) && w[stem] != '-' && w[stem] != '.')
				return true;
	}
	return false;
}

/* Ways a source line makes the compiler read a file outside the tree:
 * an absolute or climbing #include, or embedding a file's bytes (.incbin
 * in asm, C23's #embed).  Judged on the raw line: the path is a string. */
static const char *embed_reason(const char *line)
{
	const char *p = line + strspn(line, " \t");

	if (*p == '#') {
		p += 1 + strspn(p + 1, " \t");
		if (startswith(p, "embed"))
			return "embeds a file with #embed";
		if (startswith(p, "include")) {
			p += 7 + strspn(p + 7, " \t");
			if ((*p == '"' || *p == '<') && (p[1] == '/' || strstr(p, "..")))
				return "includes a file outside the tree";
			if (*p != '"' && *p != '<')
				return "includes a computed path";
		}
	}
	return NULL;
}

static int embed_line(struct gate_ctx *g, const struct udiff_file *f, const struct udiff_line *l,
		      const char *code, void *ud)
{
	const char *why;
	_cleanup_free_ char *esc = NULL;

	(void)ud;
	if (l->kind != '+' || !(why = embed_reason(code)))
		return 0;
	esc = str_escape(code, strlen(code), 120);
	return gate_verdict(g, "scope", GATE_FAIL, "%s: an added line %s (%s)",
			    udiff_file_path(f), why, esc ?: "") ?: 1;
}

/* The added lines of f joined, with adjacent string literals merged
 * ("\".inc\" \"bin\"" is ".incbin" to the assembler), searched for the
 * assembler's file-embedding directive. */
static bool embeds_incbin(const struct udiff_file *f)
{
	_cleanup_buf_ struct buf b = BUF_INIT(GATE_FILE_MAX);

	for (size_t j = 0; j < f->n_hunks; j++)
		for (size_t k = 0; k < f->hunks[j].n_lines; k++)
			if (f->hunks[j].lines[k].kind == '+')
				(void)buf_printf(&b, "%s\n", f->hunks[j].lines[k].text);
	if (!b.data)
		return false;
	for (char *p = b.data, *o = b.data;; p++) {
		if (*p == '"') {
			char *q = p + 1 + strspn(p + 1, " \t\n\\");

			if (*q == '"') {
				p = q;
				continue;
			}
		}
		*o++ = (char)tolower((unsigned char)*p);
		if (!*p)
			break;
	}
	return strstr(b.data, "incbin") != NULL;
}

static int gate_scope(struct gate_ctx *g)
{
	for (size_t i = 0; i < g->d->n_files; i++) {
		const struct udiff_file *f = &g->d->files[i];
		const char *path = udiff_file_path(f), *why;
		_cleanup_free_ char *esc = str_escape(path, strlen(path), 200);

		if (!f->old_path || !f->new_path)
			return gate_verdict(g, "scope", GATE_FAIL, "%s: creates or deletes a file; a fix edits existing sources", esc);
		if (!streq(f->old_path, f->new_path))
			return gate_verdict(g, "scope", GATE_FAIL, "%s: renames a file", esc);
		if (f->binary || f->mode_change || f->symlink)
			return gate_verdict(g, "scope", GATE_FAIL, "%s: binary, mode or symlink change", esc);
		if (!path_is_clean(path))
			return gate_verdict(g, "scope", GATE_FAIL, "%s: path leaves the tree or is not canonical", esc);
		if (g->lim->reproducer && streq(path, g->lim->reproducer))
			return gate_verdict(g, "scope", GATE_FAIL, "%s: touches the reproducer", esc);
		if ((why = build_file_reason(path)))
			return gate_verdict(g, "scope", GATE_FAIL, "%s %s", esc, why);
		if (embeds_incbin(f))
			return gate_verdict(g, "scope", GATE_FAIL, "%s: an added line embeds a file "
					    "with .incbin", esc);
		if (is_hostprog(g->src, path))
			return gate_verdict(g, "scope", GATE_FAIL,
					    "%s is a host program its Makefile builds and runs on the "
					    "build host", esc);
		if (g->src) {
			_cleanup_free_ char *full = NULL;
			struct stat st;

			if (asprintf(&full, "%s/%s", g->src, path) < 0)
				return -ENOMEM;
			if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode))
				return gate_verdict(g, "scope", GATE_FAIL, "%s is not a regular file of the tree", esc);
		}
	}
	{
		int r = gate_each_changed_line(g, embed_line, NULL, true);

		if (r != 0)
			return r < 0 ? r : 0;
	}
	return gate_verdict(g, "scope", GATE_PASS, "%zu file(s), all C sources inside the tree", g->d->n_files);
}

static int gate_size(struct gate_ctx *g)
{
	unsigned lines = 0;

	for (size_t i = 0; i < g->d->n_files; i++)
		for (size_t j = 0; j < g->d->files[i].n_hunks; j++)
			for (size_t k = 0; k < g->d->files[i].hunks[j].n_lines; k++)
				lines += g->d->files[i].hunks[j].lines[k].kind != ' ';
	if (g->d->n_files > g->lim->max_files)
		return gate_verdict(g, "size", GATE_FAIL, "%zu files changed, at most %u allowed",
			       g->d->n_files, g->lim->max_files);
	if (g->d->n_hunks > g->lim->max_hunks)
		return gate_verdict(g, "size", GATE_FAIL, "%zu hunks, at most %u allowed",
			       g->d->n_hunks, g->lim->max_hunks);
	if (lines > g->lim->max_lines)
		return gate_verdict(g, "size", GATE_FAIL, "%u lines changed, at most %u allowed",
			       lines, g->lim->max_lines);
	if (lines == 0)
		return gate_verdict(g, "size", GATE_FAIL, "the patch changes nothing");
	return gate_verdict(g, "size", GATE_PASS, "%zu file(s), %zu hunk(s), %u line(s)",
		       g->d->n_files, g->d->n_hunks, lines);
}

/* Calls fn for every added/removed line with its comment-stripped code. */
int gate_each_changed_line(struct gate_ctx *g, line_fn fn, void *ud, bool raw)
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
					gate_strip_code(l->text, code, sizeof(code),
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
	else if (gate_count_calls(code, "trace_printk"))
		*hit = "calls trace_printk";
	else if (gate_count_calls(code, "dump_stack"))
		*hit = "adds dump_stack()";
	else
		return 0;
	return gate_verdict(g, "probes", GATE_FAIL, "%s: an added line %s (instrumentation left in the patch)",
		       udiff_file_path(f), *hit) ?: 1;
}

static int gate_probes(struct gate_ctx *g)
{
	const char *hit = NULL;
	int r = gate_each_changed_line(g, probe_line, &hit, true);

	if (r < 0 || hit)
		return r < 0 ? r : 0;
	return gate_verdict(g, "probes", GATE_PASS, "no instrumentation left");
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
		unsigned n = gate_count_calls(code, checks[i]);

		if (l->kind == '+') {
			cc->added[i] += n;
			if (n && neutralised_call(code, checks[i]))
				cc->neutralised = checks[i];
		} else
			cc->removed[i] += n;
	}
	return 0;
}

/* The WARN family: a warning a user can trigger is a bug of its own
 * (panic_on_warn makes it a crash), and the commonest fix keeps the
 * condition as an error exit: WARN_ON(C) becomes "if (C) return -EINVAL;". */
static bool is_warn(const char *name)
{
	return startswith(name, "WARN") || startswith(name, "VM_WARN");
}

/* The text inside the parentheses opened at p, spaces dropped; for
 * WARN(C, fmt...) and WARN_ONCE(C, ...) only C. */
static bool call_cond(const char *p, bool first_only, char *out, size_t max)
{
	size_t o = 0;
	int depth = 0;

	for (p++; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth-- == 0)
			break;
		else if (*p == ',' && depth == 0 && first_only)
			break;
		if (*p == ' ' || *p == '\t')
			continue;
		if (o + 1 >= max)
			return false;
		out[o++] = *p;
	}
	out[o] = '\0';
	return (*p == ')' || *p == ',') && o > 0;
}

/* The condition of a WARN call on this line, or false. */
static bool warn_cond(const char *code, const char *name, char *out, size_t max)
{
	size_t n = strlen(name);

	for (const char *p = strstr(code, name); p; p = strstr(p + 1, name)) {
		const char *q = p + n;

		if ((p > code && gate_ident_char(p[-1])) || gate_ident_char(*q))
			continue;
		while (*q == ' ')
			q++;
		if (*q == '(')
			return call_cond(q, streq(name, "WARN") || streq(name, "WARN_ONCE") ||
					 streq(name, "WARN_RATELIMIT"), out, max);
	}
	return false;
}

/* "if (C)" or "if (unlikely(C))" on an added line whose body leaves with
 * an error on the same line or the next: the condition, else false. */
static bool error_exit_cond(const struct udiff_hunk *h, size_t k, char *out, size_t max)
{
	char code[1024], next[1024];
	bool in_comment = false;
	const char *p, *rest;

	gate_strip_code(h->lines[k].text, code, sizeof(code), &in_comment);
	p = code + strspn(code, " \t}");
	if (startswith(p, "else"))
		p += strspn(p + 4, " ") + 4;
	if (!startswith(p, "if") || gate_ident_char(p[2]))
		return false;
	p += 2;
	p += strspn(p, " ");
	if (*p != '(' || !call_cond(p, false, out, max))
		return false;
	if (startswith(out, "unlikely(") && endswith(out, ")")) {
		memmove(out, out + 9, strlen(out + 9) + 1);
		out[strlen(out) - 1] = '\0';
	}
	/* past the condition: the rest of the line, else the next line */
	rest = p;
	{
		int depth = 0;

		for (; *rest; rest++) {
			depth += (*rest == '(') - (*rest == ')');
			if (depth == 0) {
				rest++;
				break;
			}
		}
	}
	rest += strspn(rest, " \t{");
	if (!*rest && k + 1 < h->n_lines && h->lines[k + 1].kind != '-') {
		in_comment = false;
		gate_strip_code(h->lines[k + 1].text, next, sizeof(next), &in_comment);
		rest = next + strspn(next, " \t{");
	}
	return (startswith(rest, "return") && !gate_ident_char(rest[6])) ||
	       (startswith(rest, "goto") && !gate_ident_char(rest[4]));
}

/* Removed calls of the WARN name whose exact condition an added error
 * exit keeps. */
static unsigned warn_conversions(const struct udiff_file *f, const char *name)
{
	char conds[8][256], c[256];
	bool used[8] = { false };
	unsigned n_conds = 0, kept = 0;

	for (size_t j = 0; j < f->n_hunks; j++)
		for (size_t k = 0; k < f->hunks[j].n_lines && n_conds < ARRAY_SIZE(conds); k++)
			if (f->hunks[j].lines[k].kind == '+' &&
			    error_exit_cond(&f->hunks[j], k, conds[n_conds], sizeof(conds[0])))
				n_conds++;
	for (size_t j = 0; j < f->n_hunks; j++)
		for (size_t k = 0; k < f->hunks[j].n_lines; k++) {
			char code[1024];
			bool in_comment = false;

			if (f->hunks[j].lines[k].kind != '-')
				continue;
			gate_strip_code(f->hunks[j].lines[k].text, code, sizeof(code), &in_comment);
			if (!warn_cond(code, name, c, sizeof(c)))
				continue;
			for (unsigned i = 0; i < n_conds; i++)
				if (!used[i] && streq(conds[i], c)) {
					used[i] = true;
					kept++;
					break;
				}
		}
	return kept;
}

static int gate_checks(struct gate_ctx *g)
{
	for (size_t i = 0; i < g->d->n_files; i++) {
		struct check_count cc = { .f = &g->d->files[i] };
		const char *path = udiff_file_path(cc.f);
		int r = gate_each_changed_line(g, count_line, &cc, false);

		if (r < 0)
			return r;
		if (cc.neutralised)
			return gate_verdict(g, "checks", GATE_FAIL,
				       "%s: %s() is given a constant false condition", path, cc.neutralised);
		for (size_t k = 0; k < ARRAY_SIZE(checks); k++)
			if (cc.removed[k] > cc.added[k] &&
			    !(is_warn(checks[k]) &&
			      cc.removed[k] - cc.added[k] <= warn_conversions(cc.f, checks[k])))
				return gate_verdict(g, "checks", GATE_FAIL,
					       "%s: removes %u %s() check(s) (kept or commented out: %u); "
					       "the check that fired must stay (a WARN may become an error exit on "
					       "the same condition)", path,
					       cc.removed[k] - cc.added[k], checks[k], cc.added[k]);
	}
	return gate_verdict(g, "checks", GATE_PASS, "no assertion, lockdep or sanitizer check removed or weakened");
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
		return gate_verdict(g, "silence", GATE_FAIL, "%s: disables code with #if 0",
			       udiff_file_path(f)) ?: 1;
	for (size_t i = 0; i < ARRAY_SIZE(silencers); i++) {
		const char *s = strstr(code, silencers[i]);
		size_t n = strlen(silencers[i]);

		if (s && (s == code || !gate_ident_char(s[-1])) && !gate_ident_char(s[n]))
			return gate_verdict(g, "silence", GATE_FAIL,
				       "%s: adds %s, which hides the report instead of fixing its cause",
				       udiff_file_path(f), silencers[i]) ?: 1;
	}
	return 0;
}

static int gate_silence(struct gate_ctx *g)
{
	size_t before = g->out->n;
	int r = gate_each_changed_line(g, silence_line, NULL, false);

	if (r < 0)
		return r;
	if (g->out->n > before)
		return 0;
	return gate_verdict(g, "silence", GATE_PASS, "no sanitizer or lockdep suppression added");
}

/* --- checkpatch ------------------------------------------------------------ */

void checkpatch_result_free(struct checkpatch_result *r)
{
	free(r->report);
	*r = (struct checkpatch_result){ 0 };
}

/* Counts the ERROR and WARNING lines and keeps them, escaped, up to max
 * bytes: the captured output is bounded by its length, not by a NUL. */
static int checkpatch_lines(const char *out, size_t len, size_t max,
			    struct checkpatch_result *res)
{
	_cleanup_buf_ struct buf b = BUF_INIT(max);

	for (size_t off = 0; out && off < len;) {
		size_t n = strnlen(out + off, len - off);
		const char *l = out + off, *e = memchr(l, '\n', n);
		bool err, warn;

		if (e)
			n = (size_t)(e - l);
		off += n + 1;
		err = memmem(l, n, ": ERROR:", 8) != NULL;
		warn = !err && memmem(l, n, ": WARNING:", 10) != NULL;
		res->n_errors += err;
		res->n_warnings += warn;
		if (err || warn) {
			_cleanup_free_ char *esc = str_escape(l, n, 300);

			(void)buf_append_trunc(&b, esc ?: "", esc ? strlen(esc) : 0);
			(void)buf_append_trunc(&b, "\n", 1);
		}
	}
	res->report = b.len ? buf_steal(&b, NULL) : strdup("");
	return res->report ? 0 : -ENOMEM;
}

int checkpatch_run(const char *src, const char *diff, size_t len, size_t max,
		   struct checkpatch_result *ret)
{
	_cleanup_free_ char *script = NULL, *maint = NULL;
	_cleanup_(proc_result_free) struct proc_result res = {};
	struct checkpatch_result out = { 0 };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct stat st;
	int r;

	if (asprintf(&script, "%s/scripts/checkpatch.pl", src) < 0 ||
	    asprintf(&maint, "%s/MAINTAINERS", src) < 0)
		return -ENOMEM;
	if (stat(script, &st) < 0)
		return -ENOENT;
	{
		char *argv[] = { "perl", "scripts/checkpatch.pl", "--no-signoff", "--terse",
				 "--show-types", "--no-summary", "--patch", "-",
				 stat(maint, &st) < 0 ? "--no-tree" : NULL, NULL };

		o.cwd = src;
		o.stdin_data = diff;
		o.stdin_len = len;
		o.timeout_usec = 120ull * 1000000;
		o.output_max = 256 * 1024;
		r = proc_run(argv, &o, &res);
	}
	if (r < 0)
		return r;
	if (res.timed_out || res.signal)
		return -ETIMEDOUT;
	r = checkpatch_lines(res.output, res.output_len, max, &out);
	if (r < 0)
		return r;
	*ret = out;
	return 0;
}

static int gate_checkpatch(struct gate_ctx *g, const char *diff, size_t len)
{
	_cleanup_(checkpatch_result_free) struct checkpatch_result res = { 0 };
	_cleanup_buf_ struct buf b = BUF_INIT(2048);
	unsigned shown = 0;
	int r;

	if (!g->lim->checkpatch)
		return gate_verdict(g, "checkpatch", GATE_SKIP, "disabled by configuration");
	if (!g->src)
		return gate_verdict(g, "checkpatch", GATE_SKIP, "no base tree given");
	r = checkpatch_run(g->src, diff, len, 64 * 1024, &res);
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT)
		return gate_verdict(g, "checkpatch", GATE_SKIP, "the tree has no scripts/checkpatch.pl");
	if (r == -ETIMEDOUT)
		return gate_verdict(g, "checkpatch", GATE_SKIP, "checkpatch.pl did not finish");
	if (r < 0)
		return gate_verdict(g, "checkpatch", GATE_SKIP, "could not run perl: %s", strerror(-r));
	if (!res.n_errors)
		return gate_verdict(g, "checkpatch", GATE_PASS, "no errors (%u warning(s))",
				    res.n_warnings);
	/* the first three errors, on one line */
	for (const char *l = res.report, *e; shown < 3 && (e = strchr(l, '\n')); l = e + 1)
		if (memmem(l, (size_t)(e - l), ": ERROR:", 8)) {
			(void)buf_printf(&b, "%s%.*s", b.len ? "; " : "", (int)MIN(e - l, 200), l);
			shown++;
		}
	return gate_verdict(g, "checkpatch", GATE_FAIL, "%u error(s): %s", res.n_errors,
			    b.data ?: "");
}

static int run_gates(const char *diff, size_t diff_len, const char *report, size_t report_len,
		     const char *src_dir, const struct gate_limits *lim, bool probe,
		     struct gate_verdicts **ret);

int gates_run_probe(const char *diff, size_t diff_len, const char *src_dir,
		    struct gate_verdicts **ret)
{
	return run_gates(diff, diff_len, NULL, 0, src_dir, NULL, true, ret);
}

int gates_run(const char *diff, size_t diff_len, const char *report, size_t report_len,
	      const char *src_dir, const struct gate_limits *lim, struct gate_verdicts **ret)
{
	return run_gates(diff, diff_len, report, report_len, src_dir, lim, false, ret);
}

static int run_gates(const char *diff, size_t diff_len, const char *report, size_t report_len,
		     const char *src_dir, const struct gate_limits *lim, bool probe,
		     struct gate_verdicts **ret)
{
	_cleanup_(gate_verdicts_freep) struct gate_verdicts *v = calloc(1, sizeof(*v));
	_cleanup_(udiff_freep) struct udiff *d = NULL;
	_cleanup_(crash_info_freep) struct crash_info *crash = NULL;
	_cleanup_free_ char *err = NULL;
	struct gate_limits dflt = GATE_LIMITS_DEFAULT;
	struct gate_ctx g = { .src = src_dir, .lim = lim ?: &dflt, .out = v };
	int (*const gates[])(struct gate_ctx *) = {
		gate_scope, gate_size, gate_probes, gate_checks, gate_silence, gate_amputation,
		gate_resources,
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
		r = gate_verdict(&g, "parse", GATE_FAIL, "%s", err ?: "unreadable patch");
	} else {
		g.d = d;
		r = gate_verdict(&g, "parse", GATE_PASS, "%zu file(s), %zu hunk(s)", d->n_files, d->n_hunks);
		for (size_t i = 0; r >= 0 && i < (probe ? 1 : ARRAY_SIZE(gates)); i++)
			r = gates[i](&g);
		/* checkpatch is slow: only for patches that passed the rest */
		if (r >= 0 && !probe && gate_verdicts_accepted(v))
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
