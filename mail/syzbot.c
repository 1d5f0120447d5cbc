/* Recognising syzbot's mail (dashboard/app/templates/mail_*.txt): bug
 * reports, "found a reproducer" follow-ups and patch test results, and
 * the syzbot identity of replies in a syzbot thread. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "mail-internal.h"

#define SYZBOT_EXTID_MAX 64

/* The extid of "syzbot+EXTID@...", or NULL. */
static char *extid_of_addr(const char *a)
{
	const char *p = startswith(a, "syzbot+"), *at;
	size_t n;

	if (!p || !(at = strchr(p, '@')))
		return NULL;
	n = (size_t)(at - p);
	if (n == 0 || n > SYZBOT_EXTID_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]))
			return NULL;
	return strndup(p, n);
}

static char *extid_of_body(const char *body)
{
	const char *p = strstr(body, "bug?extid=");
	size_t n = 0;

	if (!p)
		return NULL;
	p += strlen("bug?extid=");
	while (n < SYZBOT_EXTID_MAX && isalnum((unsigned char)p[n]))
		n++;
	return n ? strndup(p, n) : NULL;
}

static bool from_syzbot(const struct mail *m)
{
	return m->from && (startswith(m->from, "syzbot+") || startswith(m->from, "syzbot@"));
}

/* Drops "Re:"/"Fwd:" and "[syzbot]" plus the "[subsys?]" tags after it. */
static char *title_of_subject(const char *s)
{
	const char *p = s, *q;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "re:", 3) == 0)
			p += 3;
		else if (strncasecmp(p, "fwd:", 4) == 0)
			p += 4;
		else
			break;
	}
	q = strstr(p, "[syzbot]");
	if (!q)
		return NULL;
	p = q + strlen("[syzbot]");
	for (;;) {
		const char *end;

		while (*p == ' ')
			p++;
		if (*p != '[' || !(end = strchr(p, ']')) || end == p + 1 || end[-1] != '?')
			break;
		p = end + 1;
	}
	while (*p == ' ')
		p++;
	if (!*p)
		return NULL;
	q = p + strlen(p);
	while (q > p && q[-1] == ' ')
		q--;
	return strndup(p, (size_t)(q - p));
}

struct field {
	const char *label;
	size_t offset; /* into struct mail_syzbot */
	bool first_token;
};

#define F(l, member, tok) { l, offsetof(struct mail_syzbot, member), tok }
static const struct field fields[] = {
	F("HEAD commit:", head_commit, true),
	F("commit:", head_commit, true),
	F("git tree:", git_tree, false),
	F("console output:", console_log, true),
	F("console+strace:", console_log, true),
	F("kernel config:", kernel_config, true),
	F("dashboard link:", dashboard, true),
	F("compiler:", compiler, false),
	F("userspace arch:", userspace_arch, false),
	F("syz repro:", syz_repro, true),
	F("C reproducer:", c_repro, true),
};
#undef F

static int set_field(struct mail *m, const struct field *f, const char *v, size_t n)
{
	const char **slot = (const char **)((char *)&m->syz + f->offset);
	size_t k = 0;

	if (*slot)
		return 0;
	while (n > 0 && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0)
		return 0;
	if (f->first_token)
		while (k < n && v[k] != ' ' && v[k] != '\t')
			k++;
	else
		k = n;
	if (k > MAIL_FIELD_MAX)
		return 0;
	*slot = mail_keep(m, strndup(v, k));
	if (!*slot)
		return -ENOMEM;
	if (f->offset == offsetof(struct mail_syzbot, git_tree) && memchr(v, ' ', k)) {
		/* "git://host/repo.git branch": a repository alias and a branch */
		const char *sp = memchr(v, ' ', n);

		if (sp) {
			size_t t = (size_t)(sp - v);

			while (sp < v + n && *sp == ' ')
				sp++;
			m->syz.git_branch = mail_keep(m, strndup(sp, (size_t)(v + n - sp)));
			m->syz.git_tree = mail_keep(m, strndup(v, t));
			if (!m->syz.git_branch || !m->syz.git_tree)
				return -ENOMEM;
		}
	}
	return 0;
}

static int read_fields(struct mail *m)
{
	const char *pos = m->body, *l;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		if (n == 3 && memcmp(l, "---", 3) == 0)
			break; /* the help footer follows */
		if (line_is_quoted(l, n))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
			size_t k = strlen(fields[i].label);

			if (n >= k && memcmp(l, fields[i].label, k) == 0) {
				int r = set_field(m, &fields[i], l + k, n - k);

				if (r < 0)
					return r;
				break;
			}
		}
	}
	return 0;
}

/* The crash report: after the Reported-by tag (reports) or the first line
 * (test results that still crash), up to the footer. */
static int read_report(struct mail *m, const char *start)
{
	_cleanup_buf_ struct buf b = BUF_INIT(MAIL_TEXT_MAX);
	const char *pos = start, *l;
	size_t n;

	while (text_next_line(&pos, &l, &n)) {
		if ((n == 3 && memcmp(l, "---", 3) == 0) ||
		    (n >= 10 && memcmp(l, "Tested on:", 10) == 0))
			break;
		if (b.len == 0 && n == 0)
			continue;
		if (buf_append(&b, l, n) < 0 || buf_puts(&b, "\n") < 0)
			return 0; /* too long: keep no report rather than half */
	}
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	if (b.len == 0)
		return 0;
	m->syz.report = mail_keep(m, buf_steal(&b, NULL));
	return m->syz.report ? 0 : -ENOMEM;
}

static const char *after_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

/* syzbot opens with "Hello," or directly with what happened. */
static const char *opening_line(const char *body)
{
	const char *pos = body, *l;
	size_t n;

	for (int i = 0; i < 4 && text_next_line(&pos, &l, &n); i++) {
		if (n == 0 || (n == 6 && memcmp(l, "Hello,", 6) == 0))
			continue;
		return l;
	}
	return NULL;
}

static int classify(struct mail *m)
{
	const char *b = opening_line(m->body), *p;

	if (!b)
		return 0;
	if (startswith(b, "syzbot found the following issue on:") ||
	    (startswith(b, "syzbot has found a reproducer for the following issue on:") &&
	     (m->syz.found_reproducer = true))) {
		m->kind = MAIL_KIND_SYZBOT_REPORT;
		p = strstr(b, "\nReported-by: syzbot+");
		return p ? read_report(m, after_line(p + 1)) : 0;
	}
	if (startswith(b, "syzbot has tested the proposed patch and the reproducer did not trigger any issue")) {
		m->kind = MAIL_KIND_SYZBOT_TEST_RESULT;
		m->syz.test = MAIL_TEST_OK;
	} else if (startswith(b, "syzbot has tested the proposed patch but the reproducer is still triggering an issue")) {
		m->kind = MAIL_KIND_SYZBOT_TEST_RESULT;
		m->syz.test = MAIL_TEST_CRASH;
		return read_report(m, after_line(b));
	} else if (startswith(b, "syzbot tried to test the proposed patch but the build/boot failed")) {
		m->kind = MAIL_KIND_SYZBOT_TEST_RESULT;
		m->syz.test = MAIL_TEST_BUILD_ERROR;
		return read_report(m, after_line(b));
	}
	return 0;
}

int mail_analyse_syzbot(struct mail *m)
{
	char *extid = NULL;
	bool syz = from_syzbot(m);
	int r;

	if (m->from)
		extid = extid_of_addr(m->from);
	for (size_t i = 0; !extid && m->recipients[i]; i++)
		extid = extid_of_addr(m->recipients[i]);
	if (!extid && syz)
		extid = extid_of_body(m->body);
	if (!extid && !syz)
		return 0;
	m->has_syzbot = true;
	if (extid && !(m->syz.extid = mail_keep(m, extid)))
		return -ENOMEM;
	m->syz.title = mail_keep(m, title_of_subject(m->subject));
	if (!syz)
		return 0;
	r = read_fields(m);
	if (r < 0)
		return r;
	if (!m->syz.extid && m->syz.dashboard)
		m->syz.extid = mail_keep(m, extid_of_body(m->syz.dashboard));
	return classify(m);
}
