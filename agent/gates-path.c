/* The amputation gate: does the crashing path still run after the patch?
 *
 * Functions are found as the kernel defines them: by the crash frame's
 * file:line when the report is symbolised (so macro-defined functions and
 * inlined frames are found by position), else by name, where syscall
 * wrappers (__x64_sys_NAME, __se_sys_, __do_sys_, ...) find
 * SYSCALL_DEFINEn(NAME, ...) and compiler suffixes (.isra.N, .cold) are
 * already gone.  On each crash function the patch touches, the base and
 * the patched body are compared:
 *   - an exit (return, goto, break, continue) added before the faulting
 *     line on every path to it — unconditional, or under a condition
 *     that is constant true — is an amputation;
 *   - a condition made constant false makes the code after it
 *     unreachable;
 *   - deleting the faulting line itself is sometimes the fix (a stray
 *     write, a use after the free) and sometimes a cheat: it is flagged
 *     for the behaviour checks and the review, not rejected here.
 * Input validation that refuses the reproducer's arguments with an error
 * is conditional and passes. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/strutil.h"
#include "crashinfo-internal.h"
#include "gates-internal.h"
#include "repro/tree.h"
#include "udiff-internal.h"

#define BODY_MAX_LINES 20000u
#define BLOCK_DEPTH_MAX 64

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* --- constant conditions ---------------------------------------------------- */

struct cond {
	const char *s;
	size_t n, pos;
};

static void cond_ws(struct cond *c)
{
	while (c->pos < c->n && isspace((unsigned char)c->s[c->pos]))
		c->pos++;
}

static bool cond_eat(struct cond *c, const char *tok)
{
	size_t k = strlen(tok);

	cond_ws(c);
	if (c->pos + k <= c->n && memcmp(c->s + c->pos, tok, k) == 0) {
		c->pos += k;
		return true;
	}
	return false;
}

static int cond_or(struct cond *c, int depth);

/* An operand: a literal, a parenthesised expression, likely()/unlikely()
 * of one, or anything else up to the next && || or ')' (not constant). */
static int cond_atom(struct cond *c, int depth)
{
	size_t start;
	int v, paren = 0;

	cond_ws(c);
	if (depth > 32)
		return -1;
	if (cond_eat(c, "!")) {
		if (c->pos < c->n && c->s[c->pos] == '=')
			return -1;
		v = cond_atom(c, depth + 1);
		return v < 0 ? v : !v;
	}
	if (cond_eat(c, "likely(") || cond_eat(c, "unlikely(") || cond_eat(c, "(")) {
		v = cond_or(c, depth + 1);
		if (!cond_eat(c, ")"))
			v = -1;
		/* "(x) == y": the parenthesised part is only an operand */
		cond_ws(c);
		if (c->pos < c->n && !strchr("&|)", c->s[c->pos]))
			v = -1;
		goto rest;
	}
	start = c->pos;
	while (c->pos < c->n && (gate_ident_char(c->s[c->pos]) || c->s[c->pos] == 'x'))
		c->pos++;
	{
		size_t k = c->pos - start;
		const char *w = c->s + start;

		if ((k == 4 && !memcmp(w, "true", 4)))
			v = 1;
		else if (k == 5 && !memcmp(w, "false", 5))
			v = 0;
		else if (k > 0 && isdigit((unsigned char)w[0])) {
			bool zero = true;

			for (size_t i = 0; i < k; i++)
				if (!strchr("0xXuUlL", w[i]))
					zero = false;
			v = zero ? 0 : 1;
		} else
			v = -1;
	}
rest:
	/* anything else before the next operator: not a constant */
	cond_ws(c);
	while (c->pos < c->n) {
		char ch = c->s[c->pos];

		if (paren == 0 && (ch == ')' ||
		    (c->pos + 1 < c->n && ((ch == '&' && c->s[c->pos + 1] == '&') ||
					   (ch == '|' && c->s[c->pos + 1] == '|')))))
			break;
		if (ch == '(')
			paren++;
		else if (ch == ')')
			paren--;
		v = -1;
		c->pos++;
	}
	return v;
}

static int cond_and(struct cond *c, int depth)
{
	int v = cond_atom(c, depth);

	while (cond_eat(c, "&&")) {
		int w = cond_atom(c, depth);

		v = (v == 0 || w == 0) ? 0 : (v == 1 && w == 1) ? 1 : -1;
	}
	return v;
}

static int cond_or(struct cond *c, int depth)
{
	int v = cond_and(c, depth);

	while (cond_eat(c, "||")) {
		int w = cond_and(c, depth);

		v = (v == 1 || w == 1) ? 1 : (v == 0 && w == 0) ? 0 : -1;
	}
	return v;
}

int gate_cond_value(const char *cond, size_t len)
{
	struct cond c = { .s = cond, .n = len };
	int v = cond_or(&c, 0);

	cond_ws(&c);
	return c.pos == c.n ? v : -1;
}

/* The condition of "if (...)" / "while (...)" starting at p (after the
 * keyword): its value, and *ret_end past the closing parenthesis.
 * -2 when the parentheses do not close on this text. */
static int keyword_cond(const char *p, const char **ret_end)
{
	const char *q;
	int depth = 0;

	p = skip_spaces(p);
	if (*p != '(')
		return -2;
	for (q = p; *q; q++) {
		depth += (*q == '(') - (*q == ')');
		if (depth == 0)
			break;
	}
	if (!*q)
		return -2;
	*ret_end = q + 1;
	return gate_cond_value(p + 1, (size_t)(q - p - 1));
}

static const char *word(const char *p, const char *w)
{
	size_t n = strlen(w);

	p = skip_spaces(p);
	return strncmp(p, w, n) == 0 && !gate_ident_char(p[n]) ? p + n : NULL;
}

/* "if (COND)" at the start of code with COND constant: its value, else -1;
 * *ret_rest is what follows the condition. */
static int leading_if(const char *code, const char **ret_rest)
{
	const char *p = word(code, "if") ?: word(code, "} else if") ?: word(code, "else if");
	const char *end;
	int v;

	if (!p)
		return -1;
	v = keyword_cond(p, &end);
	if (v < -1)
		return -1;
	*ret_rest = end;
	return v;
}

static bool is_exit(const char *code)
{
	return word(code, "return") || word(code, "goto") || word(code, "break") ||
	       word(code, "continue");
}

/* --- files, lines and bodies ------------------------------------------------ */

int gate_file_texts(const struct gate_ctx *g, const struct udiff_file *f, char **ret_old,
		    char **ret_new)
{
	_cleanup_free_ char *full = NULL, *old = NULL, *new = NULL;
	int r;

	*ret_old = *ret_new = NULL;
	if (!g->src)
		return 0;
	if (asprintf(&full, "%s/%s", g->src, udiff_file_path(f)) < 0)
		return -ENOMEM;
	if (read_file_bounded(full, GATE_FILE_MAX, &old, NULL) < 0)
		return 0;
	r = udiff_apply_file(f, old, &new);
	if (r < 0)
		return r;
	*ret_old = TAKE_PTR(old);
	*ret_new = TAKE_PTR(new);
	return 0;
}

int gate_map_line(const struct udiff_file *f, unsigned old_line, unsigned *ret_new_line)
{
	long delta = 0;

	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		unsigned o = h->old_len ? h->old_start : h->old_start + 1;
		unsigned n = h->new_len ? h->new_start : h->new_start + 1;

		if (old_line < o)
			break;
		for (size_t k = 0; k < h->n_lines; k++) {
			char kind = h->lines[k].kind;

			if (kind != '+' && o == old_line) {
				if (kind == '-')
					return -ENOENT;
				*ret_new_line = n;
				return 0;
			}
			o += kind != '+';
			n += kind != '-';
		}
		delta = (long)n - (long)o;
	}
	*ret_new_line = (unsigned)((long)old_line + delta);
	return 0;
}

static bool line_added(const struct udiff_file *f, unsigned new_line)
{
	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		unsigned n = h->new_len ? h->new_start : h->new_start + 1;

		for (size_t k = 0; k < h->n_lines; k++) {
			if (h->lines[k].kind == '-')
				continue;
			if (n == new_line)
				return h->lines[k].kind == '+';
			n++;
		}
	}
	return false;
}

/* A function's lines, comment-stripped, with the block each line starts
 * in.  Blocks that always run (a bare "{", "do {", "if (1) {") take their
 * parent's id: an exit inside them is still on every path. */
struct body {
	unsigned first;		/* file line of lines[0] */
	size_t n;
	char **code;		/* stripped lines */
	unsigned (*blocks)[BLOCK_DEPTH_MAX];
	unsigned *depth;
};

static void body_free(struct body *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->code[i]);
	free(b->code);
	free(b->blocks);
	free(b->depth);
}

static bool opener_always_runs(const char *before_brace, const char *prev)
{
	const char *p = skip_spaces(before_brace), *rest;

	if (!*p)
		p = skip_spaces(prev);
	if (!*p || word(p, "do") || (*p == '{'))
		return true;
	/* "if (1)" or "if (1) {" */
	return leading_if(p, &rest) == 1 && (!*skip_spaces(rest) || *skip_spaces(rest) == '{');
}

static int body_build(const char *text, size_t start, size_t end, unsigned first,
		      struct body *b)
{
	unsigned stack[BLOCK_DEPTH_MAX] = { 0 }, ids[BLOCK_DEPTH_MAX] = { 0 }, next = 1;
	unsigned depth = 0;
	bool in_comment = false;
	const char *prev = "";
	size_t cap = 0;

	*b = (struct body){ .first = first };
	for (size_t pos = start; pos < end;) {
		const char *nl = memchr(text + pos, '\n', end - pos);
		size_t len = nl ? (size_t)(nl - text - pos) : end - pos;
		char raw[1024], code[1024];

		if (b->n >= BODY_MAX_LINES)
			return -E2BIG;
		if (b->n == cap) {
			cap = cap ? 2 * cap : 256;
			if (!(b->code = reallocarray(b->code, cap, sizeof(*b->code))) ||
			    !(b->blocks = reallocarray(b->blocks, cap, sizeof(*b->blocks))) ||
			    !(b->depth = reallocarray(b->depth, cap, sizeof(*b->depth))))
				return -ENOMEM;
		}
		snprintf(raw, sizeof(raw), "%.*s", (int)MIN(len, sizeof(raw) - 1), text + pos);
		gate_strip_code(raw, code, sizeof(code), &in_comment);
		if (!(b->code[b->n] = strdup(code)))
			return -ENOMEM;
		memcpy(b->blocks[b->n], stack, sizeof(stack));
		b->depth[b->n] = depth;
		for (const char *c = b->code[b->n]; *c; c++) {
			if (*c == '{' && depth + 1 < BLOCK_DEPTH_MAX) {
				char before[1024];

				snprintf(before, sizeof(before), "%.*s", (int)(c - b->code[b->n]),
					 b->code[b->n]);
				ids[depth + 1] = opener_always_runs(before, prev) ? ids[depth] : next++;
				stack[depth + 1] = ids[depth + 1];
				depth++;
			} else if (*c == '}' && depth > 0) {
				stack[depth] = 0;
				depth--;
			}
		}
		if (*skip_spaces(b->code[b->n]))
			prev = b->code[b->n];
		b->n++;
		pos += len + 1;
	}
	return 0;
}

/* Is block path a (of line i) a prefix of block path b (of line j)? */
static bool encloses(const struct body *bd, size_t i, size_t j)
{
	if (bd->depth[i] > bd->depth[j])
		return false;
	for (unsigned d = 1; d <= bd->depth[i]; d++)
		if (bd->blocks[i][d] != bd->blocks[j][d])
			return false;
	return true;
}

static bool is_label_line(const char *code)
{
	const char *p = skip_spaces(code), *q = p;

	if (word(p, "case") || word(p, "default"))
		return true;
	while (gate_ident_char(*q))
		q++;
	return q > p && *skip_spaces(q) == ':' && skip_spaces(q)[1] != ':';
}

static bool guarded_by_prev(const struct body *bd, size_t i)
{
	for (size_t k = i; k-- > 0;) {
		const char *p = skip_spaces(bd->code[k]), *rest;
		size_t n = strlen(p);

		if (!*p)
			continue;
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (p[n - 1] == ';' || p[n - 1] == '{' || p[n - 1] == '}' || p[n - 1] == ':')
			return false;
		if (leading_if(p, &rest) == 1)
			return false;
		return word(p, "if") || word(p, "else") || word(p, "} else") || word(p, "for") ||
		       word(p, "while") || word(p, "else if");
	}
	return false;
}

/* An added line at body index i that leaves on every path through it. */
static bool unconditional_exit(const struct body *bd, size_t i, bool *ret_const)
{
	const char *p = skip_spaces(bd->code[i]), *rest;
	int v = leading_if(p, &rest);

	*ret_const = false;
	if (v == 1 && is_exit(rest)) {
		*ret_const = true;
		return true;
	}
	if (!is_exit(p))
		return false;
	return !guarded_by_prev(bd, i);
}

/* --- the gate ----------------------------------------------------------------- */

struct target {
	const char *name;  /* for messages */
	unsigned fault;	   /* base file line of the frame, 0: unknown */
	char *def_name;	   /* the defining identifier, owned */
};

static bool frame_in_file(const struct crash_frame *fr, const char *path)
{
	size_t a, b;

	if (!fr->file)
		return false;
	a = strlen(fr->file);
	b = strlen(path);
	return streq(fr->file, path) || (a > b && fr->file[a - b - 1] == '/' && streq(fr->file + a - b, path));
}

static int judge_body(struct gate_ctx *g, const struct udiff_file *f, const struct target *t,
		      const struct body *ob, const struct body *nb, bool *ret_done);

/* The base and patched definitions of the crash function t in f. */
static int spans(const char *old, const char *new, const struct udiff_file *f,
		 struct target *t, size_t span[4], unsigned first[2])
{
	size_t nm;
	unsigned nl;

	if (t->fault && c_function_at_line(old, strlen(old), t->fault, &nm, &span[0], &span[1],
					   &first[0]) >= 0) {
		size_t k = 0;

		while (gate_ident_char(old[nm + k]))
			k++;
		t->def_name = strndup(old + nm, k);
		if (!t->def_name)
			return -ENOMEM;
		/* the definition's first line may be what the patch rewrote */
		if (gate_map_line(f, first[0], &nl) < 0 ||
		    c_function_at_line(new, strlen(new), nl, &nm, &span[2], &span[3], &first[1]) < 0)
			if (c_find_function(new, strlen(new), t->def_name, &span[2], &span[3],
					    &first[1]) < 0)
				return -ENOENT;
		return 0;
	}
	if (c_find_function(old, strlen(old), t->name, &span[0], &span[1], &first[0]) < 0 ||
	    c_find_function(new, strlen(new), t->name, &span[2], &span[3], &first[1]) < 0)
		return -ENOENT;
	t->fault = 0;
	return 0;
}

/* The first frame of each crash function: its name and, when the
 * report is symbolised and names this file, its line. */
static size_t targets_for(struct gate_ctx *g, const struct udiff_file *f, struct target *t,
			  size_t max)
{
	const char *suspects[8];
	size_t n = crash_info_suspects(g->crash, suspects, ARRAY_SIZE(suspects)), k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		t[k] = (struct target){ .name = suspects[i] };
		for (size_t j = 0; j < g->crash->n_frames; j++) {
			const struct crash_frame *fr = &g->crash->frames[j];

			if (streq(fr->function, suspects[i]) && frame_in_file(fr, udiff_file_path(f))) {
				t[k].fault = fr->line;
				break;
			}
		}
		k++;
	}
	return k;
}

static int amputation_in_file(struct gate_ctx *g, const struct udiff_file *f, bool *ret_checked)
{
	_cleanup_free_ char *old = NULL, *new = NULL;
	struct target t[8];
	size_t n;
	int r;

	r = gate_file_texts(g, f, &old, &new);
	if (r == -ESRCH)
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "%s: the patch does not apply to the base tree",
				    udiff_file_path(f)) ?: 1;
	if (r < 0 || !old)
		return r;
	n = targets_for(g, f, t, ARRAY_SIZE(t));
	r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct body ob = {}, nb = {};
		size_t span[4];
		unsigned first[2];
		bool done = false;

		if (spans(old, new, f, &t[i], span, first) < 0)
			goto next;
		r = body_build(old, span[0], span[1], first[0], &ob);
		if (r >= 0)
			r = body_build(new, span[2], span[3], first[1], &nb);
		if (r >= 0) {
			*ret_checked = true;
			r = judge_body(g, f, &t[i], &ob, &nb, &done);
		}
		body_free(&ob);
		body_free(&nb);
	next:
		free(t[i].def_name);
		t[i].def_name = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(t[i].def_name);
	return r;
}

/* Top-level statements of a body, and those made dead by an exit just
 * before them with no label between (the old, path-free rule: a return
 * with code after it at the function's own level). */
static void count_dead(const struct body *b, unsigned *ret_dead, unsigned *ret_stmts)
{
	bool pending = false;
	unsigned dead = 0, stmts = 0;

	for (size_t i = 0; i < b->n; i++) {
		const char *p = skip_spaces(b->code[i]);
		bool c;

		if (!*p || b->depth[i] != 1)
			continue;
		if (is_label_line(p)) {
			pending = false;
			continue;
		}
		if (pending) {
			dead++;
			pending = false;
		}
		if (*p != '}' && *p != '{')
			stmts++;
		if (unconditional_exit(b, i, &c) && (word(p, "return") || word(p, "goto") || c))
			pending = true;
	}
	*ret_dead = dead;
	*ret_stmts = stmts;
}

/* "X = E;" or "return E;": the target ("return" for a return) and E,
 * spaces dropped.  false for anything else. */
static bool split_assignment(const char *code, char *lhs, char *rhs, size_t max)
{
	const char *p = skip_spaces(code), *eq;
	size_t o = 0;

	if (word(p, "return")) {
		snprintf(lhs, max, "return");
		eq = word(p, "return") - 1;
	} else {
		eq = strchr(p, '=');
		if (!eq || eq == p || strchr("=!<>+-*/%&|^", eq[-1]) || eq[1] == '=')
			return false;
		for (const char *c = p; c < eq && o + 1 < max; c++)
			if (!isspace((unsigned char)*c))
				lhs[o++] = *c;
		lhs[o] = '\0';
		if (!o)
			return false;
	}
	o = 0;
	for (const char *c = eq + 1; *c && *c != ';' && o + 1 < max; c++)
		if (!isspace((unsigned char)*c))
			rhs[o++] = *c;
	rhs[o] = '\0';
	return true;
}

/* A literal the faulting expression could be swapped for: 0, -1, NULL,
 * false, true, -EINVAL, ERR_PTR(-ENOMEM), sizeof-free constants. */
static bool constant_expr(const char *e)
{
	size_t n = strlen(e);

	if (!n)
		return false;
	if (streq(e, "NULL") || streq(e, "false") || streq(e, "true") || streq(e, "\"\"") ||
	    (e[0] == '\'' && e[n - 1] == '\'' && n >= 3 && n <= 6))
		return true;
	if (startswith(e, "ERR_PTR(") && e[n - 1] == ')') {
		char in[128];

		snprintf(in, sizeof(in), "%.*s", (int)(n - 9), e + 8);
		return constant_expr(in);
	}
	if (*e == '-' || *e == '(')
		return constant_expr(e + 1) || (e[0] == '(' && e[n - 1] == ')');
	if (e[0] == 'E' && strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n)
		return true;
	return isdigit((unsigned char)e[0]) && strspn(e, "0123456789abcdefABCDEFxXuUlL") == n;
}

/* Is the deleted faulting line (base line `line`) replaced in its hunk by
 * the same target given a constant: the access is gone and its result
 * faked, "ret = m->len;" becoming "ret = 0;". */
static bool fault_replaced_by_constant(const struct udiff_file *f, unsigned line)
{
	char lhs[256], rhs[256], l2[256], r2[256], code[1024];

	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		unsigned o = h->old_len ? h->old_start : h->old_start + 1;
		size_t k, from, to;
		bool in_comment = false;

		for (k = 0; k < h->n_lines; k++) {
			if (h->lines[k].kind == '+')
				continue;
			if (o == line)
				break;
			o++;
		}
		if (k == h->n_lines || h->lines[k].kind != '-')
			continue;
		gate_strip_code(h->lines[k].text, code, sizeof(code), &in_comment);
		if (!split_assignment(code, lhs, rhs, sizeof(lhs)) || constant_expr(rhs))
			return false;
		/* the run of changed lines around it */
		for (from = k; from > 0 && h->lines[from - 1].kind != ' '; from--)
			;
		for (to = k; to + 1 < h->n_lines && h->lines[to + 1].kind != ' '; to++)
			;
		for (size_t i = from; i <= to; i++) {
			in_comment = false;
			if (h->lines[i].kind != '+')
				continue;
			gate_strip_code(h->lines[i].text, code, sizeof(code), &in_comment);
			if (split_assignment(code, l2, r2, sizeof(l2)) && streq(l2, lhs) &&
			    constant_expr(r2))
				return true;
		}
		return false;
	}
	return false;
}

static int judge_body(struct gate_ctx *g, const struct udiff_file *f, const struct target *t,
		      const struct body *ob, const struct body *nb, bool *ret_done)
{
	const char *path = udiff_file_path(f), *fn = t->def_name ?: t->name;
	unsigned od, os, nd, ns, nfault = 0;
	size_t fi = SIZE_MAX;

	count_dead(ob, &od, &os);
	count_dead(nb, &nd, &ns);
	if (nd > od)
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "%s: %s() now returns before the rest of its body on every path; "
				    "the crashing code is skipped, not fixed", path, t->name) ?: 1;
	if (os >= 6 && ns * 3 < os)
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "%s: %s() is cut from %u to %u statements", path, t->name, os, ns) ?: 1;
	if (t->fault && gate_map_line(f, t->fault, &nfault) == -ENOENT) {
		_cleanup_free_ char *esc = NULL;
		size_t k = t->fault - ob->first;

		if (k < ob->n)
			esc = str_escape(skip_spaces(ob->code[k]), strlen(skip_spaces(ob->code[k])), 120);
		*ret_done = true;
		if (fault_replaced_by_constant(f, t->fault))
			return gate_verdict(g, "amputation", GATE_FAIL,
					    "%s:%u: the faulting access of %s() (%s) is deleted and its "
					    "result replaced by a constant; the crash is avoided, not fixed",
					    path, t->fault, fn, esc ?: "") ?: 1;
		return gate_verdict(g, "amputation", GATE_FLAG,
				    "%s:%u: the patch deletes the faulting line of %s() (%s); that is "
				    "the fix only when the line itself is the bug: the behaviour checks "
				    "and the review must show what it did and why dropping it is right",
				    path, t->fault, fn, esc ?: "") ?: 1;
	}
	if (nfault >= nb->first && nfault - nb->first < nb->n)
		fi = nfault - nb->first;
	for (size_t i = 0; i < nb->n; i++) {
		const char *p = skip_spaces(nb->code[i]), *rest;
		bool constant;
		int v;

		if (!line_added(f, nb->first + (unsigned)i))
			continue;
		if ((v = leading_if(p, &rest)) == 0 ||
		    ((p = word(p, "while")) && !word(nb->code[i], "}") && keyword_cond(p, &rest) == 0))
			return gate_verdict(g, "amputation", GATE_FAIL,
					    "%s:%u: %s() gains a condition that is always false; the "
					    "code under it can never run", path, nb->first + (unsigned)i,
					    fn) ?: 1;
		if (!unconditional_exit(nb, i, &constant))
			continue;
		if (fi != SIZE_MAX && i < fi && encloses(nb, i, fi)) {
			bool label = false;

			for (size_t k = i + 1; k <= fi && !label; k++)
				label = is_label_line(nb->code[k]) && encloses(nb, k, fi);
			if (!label)
				return gate_verdict(g, "amputation", GATE_FAIL,
						    "%s:%u: %s() gains an exit%s that runs on every path to "
						    "the faulting line %u; the crashing code is skipped, not fixed",
						    path, nb->first + (unsigned)i, fn,
						    constant ? " under a condition that is always true" : "",
						    nfault) ?: 1;
		} else if (constant)
			return gate_verdict(g, "amputation", GATE_FAIL,
					    "%s:%u: %s() gains an exit under a condition that is always "
					    "true", path, nb->first + (unsigned)i, fn) ?: 1;
	}
	return 0;
}

/* A hunk line that opens a braceless if/else/for/while: the next line is
 * its body, not an unconditional statement. */
static bool guarded_line(const char *text)
{
	char code[1024];
	bool in_comment = false;
	const char *p;
	size_t n;

	gate_strip_code(text, code, sizeof(code), &in_comment);
	p = skip_spaces(code);
	n = strlen(p);
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 0 || p[n - 1] == ';' || p[n - 1] == '{' || p[n - 1] == '}')
		return false;
	return word(p, "if") || word(p, "else") || word(p, "} else") || word(p, "for") ||
	       word(p, "while") || word(p, "&&") || word(p, "||") || p[n - 1] == ')' ||
	       p[n - 1] == '&' || p[n - 1] == '|' || p[n - 1] == ',';
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
			const char *want = c_syscall_name(suspects[i], NULL);
			const char *p = strstr(h->section, want ?: suspects[i]);
			size_t k = strlen(want ?: suspects[i]);

			if (p && (p[k] == '(' || (want && (p[k] == ',' || p[k] == ')'))))
				fn = suspects[i];
		}
		if (!fn)
			continue;
		for (size_t k = 0; k + 1 < h->n_lines; k++) {
			const char *t = h->lines[k].text, *next = h->lines[k + 1].text, *rest;
			bool always = h->lines[k].kind == '+' && leading_if(t, &rest) == 1 && is_exit(rest);

			if (h->lines[k].kind == '+' && leading_if(t, &rest) == 0)
				return gate_verdict(g, "amputation", GATE_FAIL,
						    "%s: %s() gains a condition that is always false",
						    udiff_file_path(f), fn) ?: 1;
			if (always)
				return gate_verdict(g, "amputation", GATE_FAIL,
						    "%s: %s() gains an exit under a condition that is always true",
						    udiff_file_path(f), fn) ?: 1;
			if (h->lines[k].kind != '+' || t[0] != '\t' || t[1] == '\t' ||
			    !(startswith(t + 1, "return") || startswith(t + 1, "goto ")))
				continue;
			if (k > 0 && guarded_line(h->lines[k - 1].text))
				continue;
			if (next[0] == '\t' && next[1] != '\t' && !is_label_line(next) && next[1] != '}')
				return gate_verdict(g, "amputation", GATE_FAIL,
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
	unsigned n = gate_count_calls(code, cc->fn);

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
	int r = gate_each_changed_line(g, count_suspect_calls, &cc, false);

	if (r < 0)
		return r;
	if (cc.removed > cc.added)
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "removes %u call(s) to the crashing function %s(); the crash is "
				    "avoided, not fixed", cc.removed - cc.added, site) ?: 1;
	return 0;
}

/* Constant conditions anywhere in the patch: no fix needs "if (0)" or an
 * exit under "if (1)". */
static int constant_line(struct gate_ctx *g, const struct udiff_file *f,
			 const struct udiff_line *l, const char *code, void *ud)
{
	const char *rest;
	int v;

	(void)ud;
	if (l->kind != '+')
		return 0;
	v = leading_if(code, &rest);
	if (v == 0)
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "%s: adds a condition that is always false; the code under it can "
				    "never run", udiff_file_path(f)) ?: 1;
	if (v == 1 && is_exit(rest))
		return gate_verdict(g, "amputation", GATE_FAIL,
				    "%s: adds an exit under a condition that is always true",
				    udiff_file_path(f)) ?: 1;
	return 0;
}

int gate_amputation(struct gate_ctx *g)
{
	const char *suspects[6];
	size_t n, before = g->out->n;
	bool checked = false;
	int r;

	r = gate_each_changed_line(g, constant_line, NULL, false);
	if (r != 0)
		return r < 0 ? r : 0;
	if (!g->crash)
		return gate_verdict(g, "amputation", GATE_SKIP, "no crash site known");
	n = crash_info_suspects(g->crash, suspects, ARRAY_SIZE(suspects));
	if (n == 0)
		return gate_verdict(g, "amputation", GATE_SKIP, "no crashing function in the report");
	if (g->crash->site) {
		r = removed_site_call(g, g->crash->site);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	for (size_t i = 0; i < g->d->n_files; i++) {
		const struct udiff_file *f = &g->d->files[i];

		r = g->src ? amputation_in_file(g, f, &checked) : amputation_in_hunks(g, f, suspects, n);
		if (r < 0)
			return r;
		if (r > 0 && g->out->v[g->out->n - 1].status == GATE_FAIL)
			return 0;
	}
	if (g->out->n > before)
		return 0; /* flagged */
	return gate_verdict(g, "amputation", GATE_PASS, "%s: the crashing path still runs (%s)",
			    suspects[0], checked ? "function bodies compared" : "judged from the hunks");
}
