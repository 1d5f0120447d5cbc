/* The resources gate: a patch must not stop a crash by leaking.
 *
 * Removing the kfree() that a use-after-free reads behind, or the put
 * that drops the last reference, makes the report go away and leaves an
 * object that is never released.  A release call removed by the patch is
 * judged on the function that held it: when no release of the same
 * object (first argument) is left in the patched function and the patch
 * adds none anywhere, the crash is avoided by a leak and the patch is
 * rejected.  Two releases of one object becoming one is the shape of a
 * double-free fix and passes; so does a release moved elsewhere by the
 * patch.  On a double or invalid free, dropping the only release in one
 * function can be right (another path frees it), so it is flagged for
 * the leak scan and the review instead.  Without the base tree the
 * hunks cannot show what is left, and a removed release is flagged. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "crashinfo-internal.h"
#include "gates-internal.h"
#include "repro/tree.h"
#include "udiff-internal.h"

#define ARG_MAX 128

/* Calls that give back what an earlier call took, by the kernel's naming
 * conventions: exact names first, then the prefixes and suffixes its
 * release helpers use (kmem_cache_free, free_netdev, sock_put,
 * put_device, inode_release, mutex_unlock, rcu_read_unlock, ...). */
static const char *const release_exact[] = {
	"kfree", "kvfree", "vfree", "kfree_sensitive", "kzfree", "kvfree_sensitive",
	"kfree_rcu", "kvfree_rcu", "kfree_skb", "consume_skb", "kfree_skb_reason",
	"fput", "dput", "iput", "fdput", "up", "up_read", "up_write", "kref_put",
	"refcount_dec", "refcount_dec_and_test", "refcount_dec_and_lock",
	"atomic_dec", "atomic_dec_and_test", "atomic_long_dec_and_test",
	"percpu_ref_put", "call_rcu", "module_put", "brelse", "bforget",
};
static const char *const release_prefixes[] = {
	"free_", "__free_", "put_", "__put_", "release_", "destroy_", "drop_",
};
static const char *const release_suffixes[] = {
	"_free", "_put", "_release", "_destroy", "_unlock", "_unref", "_drop",
	"_unlock_irq", "_unlock_irqrestore", "_unlock_bh",
};

static bool is_release(const char *name, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(release_exact); i++)
		if (strlen(release_exact[i]) == n && !memcmp(name, release_exact[i], n))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(release_prefixes); i++) {
		size_t k = strlen(release_prefixes[i]);

		if (n > k && !memcmp(name, release_prefixes[i], k))
			return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(release_suffixes); i++) {
		size_t k = strlen(release_suffixes[i]);

		if (n > k && !memcmp(name + n - k, release_suffixes[i], k))
			return true;
	}
	return false;
}

/* The first argument of the call whose '(' is at p, spaces and a leading
 * '&' or cast dropped: "kfree(msg->buf)" gives "msg->buf". */
static bool first_arg(const char *p, char out[ARG_MAX])
{
	size_t o = 0;
	int depth = 0;

	for (p++; *p; p++) {
		if (*p == '(' || *p == '[')
			depth++;
		else if (*p == ')' || *p == ']') {
			if (depth-- == 0)
				break;
		} else if (*p == ',' && depth == 0)
			break;
		if (isspace((unsigned char)*p))
			continue;
		if (o + 1 >= ARG_MAX)
			return false;
		out[o++] = *p;
	}
	out[o] = '\0';
	/* "(void *)x" and "&x" release x */
	if (out[0] == '(' && strchr(out, ')') && strchr(out, ')')[1])
		memmove(out, strchr(out, ')') + 1, strlen(strchr(out, ')') + 1) + 1);
	if (out[0] == '&')
		memmove(out, out + 1, strlen(out));
	return o > 0;
}

typedef bool (*release_fn)(const char *arg, void *ud);

/* Calls fn on the first argument of every release call in code. */
static void each_release(const char *code, release_fn fn, void *ud)
{
	for (const char *p = code; *p;) {
		const char *w = p, *q;
		char arg[ARG_MAX];

		if (!gate_ident_char(*p) || (p > code && gate_ident_char(p[-1]))) {
			p++;
			continue;
		}
		while (gate_ident_char(*p))
			p++;
		for (q = p; *q == ' ' || *q == '\t'; q++)
			;
		if (*q == '(' && !isdigit((unsigned char)*w) && is_release(w, (size_t)(p - w)) &&
		    first_arg(q, arg) && !fn(arg, ud))
			return;
	}
}

struct count_arg {
	const char *arg;
	unsigned n;
};

static bool count_one(const char *arg, void *ud)
{
	struct count_arg *c = ud;

	c->n += streq(arg, c->arg);
	return true;
}

/* Releases of arg in text[start, end), comments and strings left out. */
static unsigned count_in(const char *text, size_t start, size_t end, const char *arg)
{
	struct count_arg c = { .arg = arg };
	bool in_comment = false;

	for (size_t pos = start; pos < end;) {
		const char *nl = memchr(text + pos, '\n', end - pos);
		size_t len = nl ? (size_t)(nl - text - pos) : end - pos;
		char raw[1024], code[1024];

		snprintf(raw, sizeof(raw), "%.*s", (int)MIN(len, sizeof(raw) - 1), text + pos);
		gate_strip_code(raw, code, sizeof(code), &in_comment);
		each_release(code, count_one, &c);
		pos += len + 1;
	}
	return c.n;
}

struct patch_adds {
	const char *arg;
	unsigned n;
};

static int added_release(struct gate_ctx *g, const struct udiff_file *f,
			 const struct udiff_line *l, const char *code, void *ud)
{
	struct patch_adds *a = ud;
	struct count_arg c = { .arg = a->arg };

	(void)g;
	(void)f;
	if (l->kind == '+') {
		each_release(code, count_one, &c);
		a->n += c.n;
	}
	return 0;
}

static bool double_free(const struct gate_ctx *g)
{
	const char *t = g->crash ? g->crash->title : NULL;

	return t && (strstr(t, "double-free") || strstr(t, "invalid-free") ||
		     strstr(t, "double free") || strstr(t, "invalid free"));
}

struct removed {
	struct gate_ctx *g;
	const struct udiff_file *f;
	const char *old, *new;
	unsigned old_line;
	int verdict; /* 0 or 1 once a verdict is given, or a negative errno */
};

/* The base and patched spans of the function holding old_line. */
static int function_spans(const struct removed *rm, size_t span[4], char **ret_name)
{
	size_t nm, k = 0;
	unsigned first, nl;

	if (c_function_at_line(rm->old, strlen(rm->old), rm->old_line, &nm, &span[0], &span[1],
			       &first) < 0)
		return -ENOENT;
	while (gate_ident_char(rm->old[nm + k]))
		k++;
	if (!(*ret_name = strndup(rm->old + nm, k)))
		return -ENOMEM;
	if (gate_map_line(rm->f, first, &nl) >= 0 &&
	    c_function_at_line(rm->new, strlen(rm->new), nl, &nm, &span[2], &span[3], NULL) >= 0)
		return 0;
	if (c_find_function(rm->new, strlen(rm->new), *ret_name, &span[2], &span[3], NULL) >= 0)
		return 0;
	span[2] = span[3] = 0; /* the patch removes the whole function */
	return 0;
}

static bool judge_removed(const char *arg, void *ud)
{
	struct removed *rm = ud;
	struct gate_ctx *g = rm->g;
	struct patch_adds adds = { .arg = arg };
	_cleanup_free_ char *fn = NULL, *esc = NULL;
	size_t span[4];
	unsigned before, after;
	int r;

	if (!rm->old) {
		esc = str_escape(arg, strlen(arg), 80);
		rm->verdict = gate_verdict(g, "resources", GATE_FLAG,
					   "%s: removes a release of %s and the base tree was not "
					   "given to see what is left; the leak scan and the review "
					   "must show it is not leaked", udiff_file_path(rm->f),
					   esc ?: "") ?: 1;
		return false;
	}
	r = function_spans(rm, span, &fn);
	if (r < 0) {
		rm->verdict = r == -ENOENT ? 0 : r;
		return r == -ENOENT;
	}
	before = count_in(rm->old, span[0], span[1], arg);
	after = count_in(rm->new, span[2], span[3], arg);
	if (after > 0 || before == 0)
		return true;
	r = gate_each_changed_line(g, added_release, &adds, false);
	if (r < 0 || adds.n > 0) {
		rm->verdict = r;
		return r >= 0;
	}
	esc = str_escape(arg, strlen(arg), 80);
	rm->verdict = gate_verdict(g, "resources", double_free(g) ? GATE_FLAG : GATE_FAIL,
				   double_free(g) ?
				   "%s: %s() no longer releases %s; on a double free that is right "
				   "only when another path releases it: the leak scan and the review "
				   "must show it" :
				   "%s: %s() no longer releases %s and the patch releases it nowhere "
				   "else; the crash is avoided by leaking it, not fixed",
				   udiff_file_path(rm->f), fn, esc ?: "") ?: 1;
	return false;
}

static int resources_in_file(struct gate_ctx *g, const struct udiff_file *f)
{
	_cleanup_free_ char *old = NULL, *new = NULL;
	struct removed rm = { .g = g, .f = f };
	bool in_comment = false;
	int r = gate_file_texts(g, f, &old, &new);

	if (r == -ESRCH)
		return 0; /* the amputation gate says it does not apply */
	if (r < 0)
		return r;
	rm.old = old;
	rm.new = new;
	for (size_t j = 0; j < f->n_hunks; j++) {
		const struct udiff_hunk *h = &f->hunks[j];
		unsigned o = h->old_len ? h->old_start : h->old_start + 1;

		for (size_t k = 0; k < h->n_lines; k++) {
			const struct udiff_line *l = &h->lines[k];
			char code[1024];

			if (l->kind == '+')
				continue;
			if (l->kind == '-') {
				gate_strip_code(l->text, code, sizeof(code), &in_comment);
				rm.old_line = o;
				each_release(code, judge_removed, &rm);
				if (rm.verdict != 0)
					return rm.verdict;
			}
			o++;
		}
	}
	return 0;
}

int gate_resources(struct gate_ctx *g)
{
	size_t before = g->out->n;

	for (size_t i = 0; i < g->d->n_files; i++) {
		int r = resources_in_file(g, &g->d->files[i]);

		if (r < 0)
			return r;
		if (r > 0 && g->out->v[g->out->n - 1].status == GATE_FAIL)
			return 0;
	}
	if (g->out->n > before)
		return 0;
	return gate_verdict(g, "resources", GATE_PASS,
			    "every object the patch stops releasing is still released");
}
