/* Patch mail in git format-patch form, and kfix's replies. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strutil.h"
#include "compose.h"
#include "diffstat-internal.h"
#include "header-internal.h"

#define COMPOSE_MAX (MAIL_SIZE_MAX / 2)

/* ---- trailer order ---- */

/* b4's order, prefixes as its trailer-order patterns are ("fixes*"):
 * what the patch fixes and who reported it, who made it and signed it
 * off, then what reviewers gave it (chain of custody: a Reviewed-by
 * follows the Signed-off-by it reviewed), links last; a "Closes:" stays
 * beside its Reported-by, as submitting-patches.rst asks, and the
 * coding assistant is named before the human who signs off for it. */
static int trailer_rank(const char *key)
{
	static const char *const order[] = {
		"fixes",   "reported", "closes", "suggested", "original", "co-",  "assisted",
		"signed-off", "tested", "reviewed", "acked", "cc", "link",
	};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (strncasecmp(key, order[i], strlen(order[i])) == 0)
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

void mail_trailers_sort(struct mail_trailer *t, size_t n)
{
	/* insertion sort: stable, and trailer lists are short */
	for (size_t i = 1; i < n; i++) {
		struct mail_trailer x = t[i];
		size_t j = i;

		while (j > 0 && trailer_rank(t[j - 1].key) > trailer_rank(x.key)) {
			t[j] = t[j - 1];
			j--;
		}
		t[j] = x;
	}
}

/* ---- text that must not be mistaken for structure by git am ---- */

/* A line of free text (model output, titles) that git mailinfo or git
 * apply would read as structure gets a leading blank. */
static bool line_is_structure(const char *l, size_t n, bool first)
{
	static const char *const starts[] = { "---", "diff ", "Index: ", "+++ ", "@@ ",
					      "-- ", ">8", "From ", "base-commit:" };
	static const char *const first_starts[] = { "From:", "Subject:", "Date:" };

	for (size_t i = 0; i < ARRAY_SIZE(starts); i++)
		if (n >= strlen(starts[i]) && memcmp(l, starts[i], strlen(starts[i])) == 0)
			return true;
	for (size_t i = 0; first && i < ARRAY_SIZE(first_starts); i++)
		if (n >= strlen(first_starts[i]) &&
		    strncasecmp(l, first_starts[i], strlen(first_starts[i])) == 0)
			return true;
	return n == 2 && memcmp(l, "--", 2) == 0;
}

/* Below the cut, prose is wrapped as the body is (75 columns); what is
 * laid out (indented, console lines, tables, a word longer than a line)
 * is left as it is. */
#define NOTES_WIDTH 75

static bool is_prose(const char *l, size_t n)
{
	if (n <= NOTES_WIDTH || l[0] == ' ' || l[0] == '\t' || l[0] == '[' || l[0] == '|' ||
	    l[0] == '>')
		return false;
	for (size_t i = 0; i + 1 < n; i++)
		if ((l[i] == ' ' && l[i + 1] == ' ') || l[i] == '\t')
			return false;
	return true;
}

/* One long prose line as lines of at most NOTES_WIDTH columns; a list
 * item's ("- ") continuation lines are indented under its text. */
static int put_wrapped(struct buf *b, const char *l, size_t n)
{
	const char *hang = n > 2 && l[0] == '-' && l[1] == ' ' ? "  " : "";
	size_t col = 0;

	while (n > 0) {
		size_t w = 0;

		while (w < n && l[w] != ' ')
			w++;
		if (col > 0 && col + 1 + w > NOTES_WIDTH) {
			if (buf_printf(b, "\n%s", hang) < 0)
				return -E2BIG;
			col = strlen(hang);
		} else if (col > 0) {
			if (buf_puts(b, " ") < 0)
				return -E2BIG;
			col++;
		}
		if (buf_append(b, l, w) < 0)
			return -E2BIG;
		col += w;
		l += w;
		n -= w;
		while (n > 0 && *l == ' ') {
			l++;
			n--;
		}
	}
	return 0;
}

static int put_free_text(struct buf *b, const char *text, const char *indent, bool wrap)
{
	const char *pos = text, *l;
	bool first = true;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		bool guard = line_is_structure(l, n, first) || (n > 0 && l[0] == ' ' && !*indent);

		/* trailing blanks are checkpatch errors and mean nothing */
		while (n > 0 && (l[n - 1] == ' ' || l[n - 1] == '\t'))
			n--;
		if (n > 0 && buf_puts(b, guard ? "  " : indent) < 0)
			return -E2BIG;
		if (wrap && !guard && !*indent && is_prose(l, n) ? put_wrapped(b, l, n) < 0
							 : buf_append(b, l, n) < 0)
			return -E2BIG;
		if (buf_puts(b, "\n") < 0)
			return -E2BIG;
		first = false;
	}
	return 0;
}

static int put_section(struct buf *b, const char *title, const char *text)
{
	if (!text || !*text)
		return 0;
	if (buf_printf(b, "%s:\n", title) < 0)
		return -E2BIG;
	if (put_free_text(b, text, "", true) < 0 || buf_puts(b, "\n") < 0)
		return -E2BIG;
	return 0;
}

static int put_repro_table(struct buf *b, const struct patch_mail *p)
{
	int w = (int)strlen("kernel");

	if (p->n_repro == 0)
		return 0;
	for (size_t i = 0; i < p->n_repro; i++)
		w = MAX(w, (int)strlen(p->repro[i].kernel));
	if (buf_printf(b, "Reproduction:\n  %-*s  %s\n", w, "kernel", "result") < 0)
		return -E2BIG;
	for (size_t i = 0; i < p->n_repro; i++) {
		_cleanup_free_ char *k = strdup(p->repro[i].kernel), *r = strdup(p->repro[i].result);

		if (!k || !r)
			return -ENOMEM;
		/* one row per line, whatever the strings hold */
		for (char *c = k; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		for (char *c = r; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		if (buf_printf(b, "  %-*s  %s\n", w, k, r) < 0)
			return -E2BIG;
	}
	return buf_puts(b, "\n");
}

static int subject_of(const struct patch_mail *p, char **ret)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "[PATCH%s", p->rfc ? " RFC" : "");
	if (p->version > 1)
		snprintf(prefix + strlen(prefix), sizeof(prefix) - strlen(prefix), " v%d",
			 p->version);
	return asprintf(ret, "%s] %s", prefix, p->summary) < 0 ? -ENOMEM : 0;
}

static int put_common_headers(struct buf *b, const char *from, time_t date,
			      const char *subject, const char *message_id,
			      const char *in_reply_to, char *const *refs, char *const *to,
			      char *const *cc, char **ret_error)
{
	if (header_check_msgid(message_id) < 0)
		return error_set(ret_error, -EINVAL, "invalid Message-ID");
	if (header_put_address(b, "From", from) < 0)
		return error_set(ret_error, -EINVAL, "invalid From address");
	if (header_put_date(b, date) < 0 || header_put_text(b, "Subject", subject) < 0 ||
	    header_put_msgid(b, "Message-ID", message_id) < 0)
		return error_set(ret_error, -EINVAL, "cannot write the headers");
	if (in_reply_to && header_put_msgid(b, "In-Reply-To", in_reply_to) < 0)
		return error_set(ret_error, -EINVAL, "invalid In-Reply-To Message-ID");
	if (header_put_msgids(b, "References", refs) < 0)
		return error_set(ret_error, -EINVAL, "invalid References Message-ID");
	if (!to || !to[0])
		return error_set(ret_error, -EINVAL, "no recipient");
	if (header_put_addresses(b, "To", to) < 0 || header_put_addresses(b, "Cc", cc) < 0)
		return error_set(ret_error, -EINVAL, "invalid recipient address");
	if (buf_puts(b, "MIME-Version: 1.0\n"
			"Content-Type: text/plain; charset=UTF-8\n"
			"Content-Transfer-Encoding: 8bit\n"
			"X-Mailer: kfix " PACKAGE_VERSION "\n\n") < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	return 0;
}

/* References: the given chain, or at least the message replied to. */
static int refs_of(char *const *refs, const char *in_reply_to, char ***ret)
{
	_cleanup_strv_ char **v = NULL;

	for (size_t i = 0; refs && refs[i]; i++)
		if (strv_push(&v, refs[i]) < 0)
			return -ENOMEM;
	if (in_reply_to && !strv_contains(v, in_reply_to) && strv_push(&v, in_reply_to) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

static bool is_hex40(const char *s)
{
	if (!s || strlen(s) != 40)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static int put_trailers(struct buf *b, const struct patch_mail *p, char **ret_error)
{
	_cleanup_free_ struct mail_trailer *t = NULL;

	if (p->n_trailers == 0)
		return 0;
	t = calloc(p->n_trailers, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t, p->trailers, p->n_trailers * sizeof(*t));
	mail_trailers_sort(t, p->n_trailers);
	if (buf_puts(b, "\n") < 0)
		return -E2BIG;
	for (size_t i = 0; i < p->n_trailers; i++) {
		if (strpbrk(t[i].key, " :\r\n") || strpbrk(t[i].value, "\r\n"))
			return error_set(ret_error, -EINVAL, "a trailer holds a line break or bad key");
		if (buf_printf(b, "%s: %s\n", t[i].key, t[i].value) < 0)
			return -E2BIG;
	}
	return 0;
}

/* What the repair found and how it was tested: below the mail's "---",
 * above the trailers in the branch's commit. */
static int put_notes(struct buf *b, const struct patch_mail *p)
{
	if (put_section(b, "Root cause", p->explanation) < 0 ||
	    put_section(b, "Patch type", p->patch_type) < 0 ||
	    put_section(b, "Evidence", p->evidence) < 0 || put_repro_table(b, p) < 0 ||
	    put_section(b, "Tested", p->tested) < 0 || put_section(b, "Not tested", p->not_tested) < 0)
		return -E2BIG;
	return 0;
}

int mail_compose_commit_message(const struct patch_mail *p, char **ret, char **ret_error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMPOSE_MAX);
	int r;

	if (!p->summary || !*p->summary || strpbrk(p->summary, "\r\n"))
		return error_set(ret_error, -EINVAL, "a one-line summary is needed");
	if (buf_printf(&b, "%s\n\n", p->summary) < 0 ||
	    (p->body && *p->body && (put_free_text(&b, p->body, "", false) < 0 ||
				     buf_puts(&b, "\n") < 0)) ||
	    put_notes(&b, p) < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	r = put_trailers(&b, p, ret_error);
	if (r < 0)
		return r;
	/* no blank line at the end, none doubled before the trailers */
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	for (char *d; (d = strstr(b.data, "\n\n\n"));)
		memmove(d, d + 1, strlen(d));
	if (buf_puts(&b, "\n") < 0)
		return -E2BIG;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

int mail_compose_patch(const struct patch_mail *p, char **ret, char **ret_error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMPOSE_MAX);
	char changes[32] = "Changes";
	_cleanup_free_ char *subject = NULL;
	_cleanup_strv_ char **refs = NULL;
	int r;

	if (!p->from || !p->message_id || !p->summary || !*p->summary || !p->diff)
		return error_set(ret_error, -EINVAL, "from, message_id, summary and diff are needed");
	if (strncmp(p->diff, "diff --git ", 11) != 0)
		return error_set(ret_error, -EINVAL, "the diff does not start with 'diff --git'");
	if (p->base_commit && !is_hex40(p->base_commit))
		return error_set(ret_error, -EINVAL, "base-commit is not 40 hex digits");
	if (subject_of(p, &subject) < 0 || refs_of(p->references, p->in_reply_to, &refs) < 0)
		return -ENOMEM;
	r = put_common_headers(&b, p->from, p->date, subject, p->message_id, p->in_reply_to,
			       refs, p->to, p->cc, ret_error);
	if (r < 0)
		return r;
	if (p->author && !streq(p->author, p->from)) {
		if (header_check_address(p->author) < 0)
			return error_set(ret_error, -EINVAL, "invalid author address");
		if (buf_printf(&b, "From: %s\n\n", p->author) < 0)
			return -E2BIG;
	}
	/* the body is the commit message: as the repair wrapped it (a
	 * quoted log line stays whole) */
	if ((p->body && put_free_text(&b, p->body, "", false) < 0))
		return error_set(ret_error, -E2BIG, "message too large");
	r = put_trailers(&b, p, ret_error);
	if (r < 0)
		return r;
	if (p->version > 1 && p->changes && *p->changes)
		snprintf(changes, sizeof(changes), "Changes since v%d", p->version - 1);
	if (buf_puts(&b, "---\n") < 0 || put_section(&b, "How to answer", p->howto) < 0 ||
	    put_section(&b, changes, p->changes) < 0 ||
	    (p->version > 1 && p->prev_link &&
	     buf_printf(&b, "Link to v%d: %s\n\n", p->version - 1, p->prev_link) < 0) ||
	    put_notes(&b, p) < 0 || diffstat_format(p->diff, &b) < 0 ||
	    buf_printf(&b, "\n%s", p->diff) < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	if (b.data[b.len - 1] != '\n' && buf_puts(&b, "\n") < 0)
		return -E2BIG;
	if (p->base_commit && buf_printf(&b, "\nbase-commit: %s\n", p->base_commit) < 0)
		return -E2BIG;
	if (buf_puts(&b, "-- \nkfix " PACKAGE_VERSION "\n") < 0)
		return -E2BIG;
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* ---- replies ---- */

static int reply_subject(const struct mail *orig, char **ret)
{
	const char *s = mail_subject(orig) ? mail_subject(orig) : "";

	if (strncasecmp(s, "re:", 3) == 0)
		return (*ret = strdup(s)) ? 0 : -ENOMEM;
	return asprintf(ret, "Re: %s", s) < 0 ? -ENOMEM : 0;
}

static int reply_refs(const struct mail *orig, char ***ret)
{
	return refs_of(mail_references(orig), mail_message_id(orig), ret);
}

int mail_refusal_key(const struct mail *orig, const char *tree, char **ret)
{
	return asprintf(ret, "kfix-refusal:%s:%s", mail_from(orig) ? mail_from(orig) : "",
			tree ? tree : "") < 0
		       ? -ENOMEM
		       : 0;
}

int mail_compose_refusal(const struct mail *orig, const char *from,
			 const char *message_id, const char *tree, time_t date,
			 char **ret, char **ret_error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	_cleanup_free_ char *subject = NULL;
	_cleanup_strv_ char **refs = NULL;
	char *to[] = { (char *)mail_from(orig), NULL };
	int r;

	if (!to[0])
		return error_set(ret_error, -EINVAL, "the mail has no sender to answer");
	if (reply_subject(orig, &subject) < 0 || reply_refs(orig, &refs) < 0)
		return -ENOMEM;
	r = put_common_headers(&b, from, date, subject, message_id, mail_message_id(orig),
			       refs, to, NULL, ret_error);
	if (r < 0)
		return r;
	if (tree && strpbrk(tree, "\r\n"))
		return error_set(ret_error, -EINVAL, "tree name holds a line break");
	if (buf_puts(&b, "Hello,\n\nthank you for your message.  It contains #kfix commands, but "
			 "your address\nis not on the list of senders allowed to give kfix "
			 "commands") < 0 ||
	    (tree && buf_printf(&b, " for the tree\n\"%s\"", tree) < 0) ||
	    buf_puts(&b, ", so the commands were not carried out.\n\nIf you maintain "
			 "this code and want to use them, please ask the\noperator of this "
			 "kfix instance to add your address to allow-commands.\nYou will not "
			 "get this note again.\n\n-- \nkfix\n") < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

int mail_compose_notice(const char *from, char *const *to, const char *message_id,
			const char *in_reply_to, const char *subject, const char *text,
			time_t date, char **ret, char **ret_error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(64 * 1024);
	_cleanup_free_ char *subj = NULL;
	_cleanup_strv_ char **refs = NULL;
	int r;

	if (refs_of(NULL, in_reply_to, &refs) < 0)
		return -ENOMEM;
	if (in_reply_to && strncasecmp(subject, "re:", 3) != 0)
		r = asprintf(&subj, "Re: %s", subject) < 0 ? -ENOMEM : 0;
	else
		r = (subj = strdup(subject)) ? 0 : -ENOMEM;
	if (r < 0)
		return r;
	r = put_common_headers(&b, from, date, subj, message_id, in_reply_to, refs, to, NULL,
			       ret_error);
	if (r < 0)
		return r;
	if (buf_puts(&b, text) < 0 || buf_puts(&b, "\n-- \nkfix\n") < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

static bool one_token(const char *s)
{
	return s && *s && !strpbrk(s, " \t\r\n");
}

int mail_compose_syz_test(const struct syz_test_mail *m, char **ret, char **ret_error)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMPOSE_MAX);
	_cleanup_free_ char *subject = NULL, *addr = NULL;
	_cleanup_strv_ char **refs = NULL;
	const struct mail_syzbot *s = m->report ? mail_syzbot(m->report) : NULL;
	const char *extid = s && s->extid ? s->extid : m->extid;
	char *to[2] = { NULL, NULL };
	int r;

	if (!extid || strspn(extid, "0123456789abcdef") != strlen(extid) || !*extid)
		return error_set(ret_error, -EINVAL, "no syzbot bug id");
	if ((m->git_tree || m->branch) && (!one_token(m->git_tree) || !one_token(m->branch)))
		return error_set(ret_error, -EINVAL, "tree and branch must be single tokens");
	if (!m->diff || !*m->diff)
		return error_set(ret_error, -EINVAL, "no patch");
	if (m->report) {
		r = reply_subject(m->report, &subject);
		if (r >= 0)
			r = reply_refs(m->report, &refs);
	} else {
		r = asprintf(&subject, "Re: [syzbot] %s", m->title ? m->title : extid) < 0 ? -ENOMEM : 0;
		if (r >= 0 && m->report_mid)
			r = strv_push(&refs, m->report_mid);
	}
	if (r < 0 || asprintf(&addr, "syzbot+%s@syzkaller.appspotmail.com", extid) < 0)
		return -ENOMEM;
	to[0] = addr;
	r = put_common_headers(&b, m->from, m->date, subject, m->message_id,
			       m->report ? mail_message_id(m->report) : m->report_mid, refs, to,
			       m->cc, ret_error);
	if (r < 0)
		return r;
	r = m->git_tree ? buf_printf(&b, "#syz test: %s %s\n\n", m->git_tree, m->branch)
			: buf_puts(&b, "#syz test\n\n");
	if (r < 0 || buf_puts(&b, m->diff) < 0)
		return error_set(ret_error, -E2BIG, "message too large");
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* The addr-spec of "Name <addr>" or "addr", lower case. */
static char *addr_spec(const char *a)
{
	const char *lt = strrchr(a, '<');
	char *s = lt ? strndup(lt + 1, strcspn(lt + 1, ">")) : strdup(a);

	for (char *p = s; p && *p; p++)
		*p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
	return s;
}

static int add_unique(char ***list, char ***seen, const char *a)
{
	_cleanup_free_ char *spec = addr_spec(a);

	if (!spec)
		return -ENOMEM;
	if (header_check_address(a) < 0 || strv_contains(*seen, spec))
		return 0;
	if (strv_push(seen, spec) < 0 || strv_push(list, a) < 0)
		return -ENOMEM;
	return 0;
}

int mail_upstream_recipients(const struct mail *report, char *const *maintainers,
			     char *const *extra_cc, char ***ret_to, char ***ret_cc)
{
	_cleanup_strv_ char **to = NULL, **cc = NULL, **seen = NULL;
	const struct mail_syzbot *s = report ? mail_syzbot(report) : NULL;

	for (size_t i = 0; maintainers && maintainers[i]; i++)
		if (add_unique(&to, &seen, maintainers[i]) < 0)
			return -ENOMEM;
	if (s && s->extid) {
		_cleanup_free_ char *syz = NULL;

		if (asprintf(&syz, "syzbot+%s@syzkaller.appspotmail.com", s->extid) < 0 ||
		    add_unique(&cc, &seen, syz) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; report && mail_recipients(report)[i]; i++)
		if (add_unique(&cc, &seen, mail_recipients(report)[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; extra_cc && extra_cc[i]; i++)
		if (add_unique(&cc, &seen, extra_cc[i]) < 0)
			return -ENOMEM;
	if ((!to && !(to = calloc(1, sizeof(char *)))) || (!cc && !(cc = calloc(1, sizeof(char *)))))
		return -ENOMEM;
	*ret_to = TAKE_PTR(to);
	*ret_cc = TAKE_PTR(cc);
	return 0;
}
