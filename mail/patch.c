/* Patches, trailers and review comments in mail. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "mail-internal.h"

#define REVIEW_CONTEXT_LINES 6

static bool is_from_syzbot(const struct mail *m)
{
	return m->from && (startswith(m->from, "syzbot+") || startswith(m->from, "syzbot@"));
}

static char *base_commit_of(const char *text)
{
	const char *pos = text, *l;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		size_t k = strlen("base-commit: "), i;

		if (n < k + 40 || memcmp(l, "base-commit: ", k) != 0)
			continue;
		for (i = 0; i < 40; i++)
			if (!isxdigit((unsigned char)l[k + i]))
				break;
		if (i == 40 && (n == k + 40 || isspace((unsigned char)l[k + 40])))
			return strndup(l + k, 40);
	}
	return NULL;
}

/* "[PATCH ...]" or "[RFC PATCH ...]" first in the subject: a submission. */
static bool subject_is_patch(const char *s)
{
	const char *end;

	while (*s == ' ')
		s++;
	if (*s != '[' || !(end = strchr(s, ']')))
		return false;
	for (const char *p = s; p + 5 <= end; p++)
		if (strncmp(p, "PATCH", 5) == 0)
			return true;
	return false;
}

static bool subject_is_reply(const char *s)
{
	while (*s == ' ')
		s++;
	return strncasecmp(s, "re:", 3) == 0;
}

int mail_analyse_patch(struct mail *m)
{
	if (!is_from_syzbot(m)) {
		/* syzbot: the first attachment holding a diff, else the body */
		for (size_t i = 0; i < m->n_att && !m->patch; i++)
			m->patch = diff_extract(m->att[i].data);
		if (!m->patch)
			m->patch = diff_extract(m->body);
		m->base_commit = base_commit_of(m->body);
		for (size_t i = 0; i < m->n_att && !m->base_commit; i++)
			m->base_commit = base_commit_of(m->att[i].data);
	}
	if (m->kind != MAIL_KIND_OTHER || is_from_syzbot(m))
		return 0;
	if (m->patch && subject_is_patch(m->subject) && !subject_is_reply(m->subject))
		m->kind = MAIL_KIND_PATCH;
	else if (m->in_reply_to || subject_is_reply(m->subject))
		m->kind = MAIL_KIND_REPLY;
	else if (m->patch)
		m->kind = MAIL_KIND_PATCH;
	return 0;
}

/* "Key-by: value" and the other tags a kernel commit carries. */
static bool trailer_split(const char *l, size_t n, size_t *ret_klen, size_t *ret_voff)
{
	static const char *const plain[] = { "Fixes", "Closes", "Link" };
	size_t k = 0, v;

	while (k < n && (isalnum((unsigned char)l[k]) || l[k] == '-'))
		k++;
	if (k == 0 || k >= n || l[k] != ':' || !isupper((unsigned char)l[0]))
		return false;
	if (!(k > 3 && strncasecmp(l + k - 3, "-by", 3) == 0)) {
		bool ok = false;

		for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
			ok |= strlen(plain[i]) == k && strncmp(l, plain[i], k) == 0;
		if (!ok)
			return false;
	}
	v = k + 1;
	while (v < n && (l[v] == ' ' || l[v] == '\t'))
		v++;
	if (v >= n)
		return false;
	*ret_klen = k;
	*ret_voff = v;
	return true;
}

static bool is_signature(const char *l, size_t n)
{
	return n == 3 && memcmp(l, "-- ", 3) == 0;
}

int mail_analyse_trailers(struct mail *m)
{
	const char *pos = m->body, *l;
	size_t n, k, v;

	while (text_next_line(&pos, &l, &n) && m->n_trailers < MAIL_TRAILERS_MAX) {
		struct mail_trailer *t = &m->trailers[m->n_trailers];

		if (is_signature(l, n))
			break;
		if (line_is_quoted(l, n) || !trailer_split(l, n, &k, &v) || n - v > MAIL_FIELD_MAX)
			continue;
		t->key = strndup(l, k);
		t->value = strndup(l + v, n - v);
		if (!t->key || !t->value) {
			free((char *)t->key);
			free((char *)t->value);
			return -ENOMEM;
		}
		m->n_trailers++;
	}
	return 0;
}

static bool is_attribution(const char *l, size_t n)
{
	return n >= 6 && memcmp(l + n - 6, "wrote:", 6) == 0;
}

static bool is_noise(const char *l, size_t n)
{
	size_t k, v;

	return is_attribution(l, n) || trailer_split(l, n, &k, &v) ||
	       (n >= 4 && (memcmp(l, "#syz", 4) == 0 || (n >= 5 && memcmp(l, "#kfix", 5) == 0)));
}

/* The reviewer's lines, each block preceded by the quoted lines it answers. */
int mail_analyse_review(struct mail *m)
{
	_cleanup_buf_ struct buf b = BUF_INIT(MAIL_TEXT_MAX);
	const char *ctx[REVIEW_CONTEXT_LINES];
	size_t ctxn[REVIEW_CONTEXT_LINES], nctx = 0, n, said = 0;
	const char *pos = m->body, *l;
	bool blank_pending = false;

	if (m->kind != MAIL_KIND_REPLY)
		return 0;
	while (text_next_line(&pos, &l, &n)) {
		if (is_signature(l, n) || (n >= 10 && memcmp(l, "diff --git", 10) == 0))
			break;
		if (line_is_quoted(l, n)) {
			if (nctx == REVIEW_CONTEXT_LINES) {
				memmove(ctx, ctx + 1, sizeof(ctx[0]) * (nctx - 1));
				memmove(ctxn, ctxn + 1, sizeof(ctxn[0]) * (nctx - 1));
				nctx--;
			}
			ctx[nctx] = l;
			ctxn[nctx++] = n;
			continue;
		}
		if (n == 0 || is_noise(l, n)) {
			blank_pending = b.len > 0;
			continue;
		}
		if (nctx > 0 || blank_pending)
			if (b.len > 0 && buf_puts(&b, "\n") < 0)
				return 0;
		for (size_t i = 0; i < nctx; i++)
			if (buf_append(&b, ctx[i], ctxn[i]) < 0 || buf_puts(&b, "\n") < 0)
				return 0;
		nctx = 0;
		blank_pending = false;
		if (buf_append(&b, l, n) < 0 || buf_puts(&b, "\n") < 0)
			return 0;
		said++;
	}
	if (said == 0)
		return 0;
	m->review = buf_steal(&b, NULL);
	return m->review ? 0 : -ENOMEM;
}
