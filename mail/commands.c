/* #syz and #kfix commands, found the way syzbot finds them
 * (pkg/email/parser.go): a command starts a line of the subject or body,
 * so quoted lines never hold one; the word ends at blank or line end. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "mail-internal.h"

#define COMMAND_ARGS_MAX 1024

enum args_kind {
	ARGS_NONE,
	ARGS_LINE,    /* the rest of the line */
	ARGS_TOKENS2, /* two blank-separated tokens, which may wrap */
};

struct verb {
	const char *word;
	const char *name;
	enum args_kind args;
};

static const struct verb syz_verbs[] = {
	{ "upstream", "syz-upstream", ARGS_NONE },
	{ "fix", "syz-fix", ARGS_LINE },	 { "fix:", "syz-fix", ARGS_LINE },
	{ "unfix", "syz-unfix", ARGS_NONE },
	{ "dup", "syz-dup", ARGS_LINE },	 { "dup:", "syz-dup", ARGS_LINE },
	{ "undup", "syz-undup", ARGS_NONE },
	{ "test", "syz-test", ARGS_LINE },	 { "test:", "syz-test", ARGS_TOKENS2 },
	{ "invalid", "syz-invalid", ARGS_NONE },
	{ "uncc", "syz-uncc", ARGS_LINE },	 { "uncc:", "syz-uncc", ARGS_LINE },
	{ "set", "syz-set", ARGS_LINE },	 { "set:", "syz-set", ARGS_LINE },
	{ "unset", "syz-unset", ARGS_LINE },	 { "unset:", "syz-unset", ARGS_LINE },
	{ "regenerate", "syz-regenerate", ARGS_NONE },
	{ "reject", "syz-reject", ARGS_NONE },
	{ "unreject", "syz-unreject", ARGS_NONE },
	{ NULL, NULL, ARGS_NONE },
};

static const struct verb kfix_verbs[] = {
	{ "upstream", "kfix-upstream", ARGS_LINE },
	{ "reject", "kfix-reject", ARGS_LINE },
	{ "retest", "kfix-retest", ARGS_LINE },
	{ "repair", "kfix-repair", ARGS_LINE },
	{ "stop", "kfix-stop", ARGS_LINE },
	{ NULL, NULL, ARGS_NONE },
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_word_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Rest of the line, trimmed, inner blanks squeezed. */
static char *args_line(const char *p)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMMAND_ARGS_MAX);

	while (is_blank(*p))
		p++;
	for (; *p && *p != '\n' && *p != '\r'; p++) {
		if (is_blank(*p)) {
			if (b.len == 0 || b.data[b.len - 1] == ' ')
				continue;
			if (buf_append_trunc(&b, " ", 1) < 0)
				return NULL;
		} else if (buf_append_trunc(&b, p, 1) < 0) {
			return NULL;
		}
	}
	if (b.len > 0 && b.data[b.len - 1] == ' ')
		b.data[--b.len] = '\0';
	return buf_take_str(&b);
}

/* Up to n tokens separated by any white space, line ends included. */
static char *args_tokens(const char *p, int n)
{
	_cleanup_buf_ struct buf b = BUF_INIT(COMMAND_ARGS_MAX);

	for (int i = 0; i < n; i++) {
		size_t k = 0;

		while (*p && (is_blank(*p) || *p == '\r' || *p == '\n'))
			p++;
		while (!is_word_end(p[k]))
			k++;
		if (k == 0)
			break;
		if ((i > 0 && buf_append_trunc(&b, " ", 1) < 0) ||
		    buf_append_trunc(&b, p, k) < 0)
			return NULL;
		p += k;
	}
	return buf_take_str(&b);
}

static const struct verb *verb_find(const struct verb *v, const char *w, size_t n)
{
	for (; v->word; v++)
		if (strlen(v->word) == n && memcmp(v->word, w, n) == 0)
			return v;
	return NULL;
}

/* p is at the start of a line; adds the command found there, if any. */
static int try_line(struct mail *m, const char *p)
{
	const struct verb *table, *v;
	struct mail_command *c;
	const char *w;
	char *args;
	size_t n = 0;

	if (startswith(p, "#syz") && p[4] && strchr(" \t-:", p[4]))
		table = syz_verbs, p += 5;
	else if (startswith(p, "#kfix") && p[5] && strchr(" \t:", p[5]))
		table = kfix_verbs, p += 6;
	else
		return 0;
	while (is_blank(*p))
		p++;
	w = p;
	while (!is_word_end(w[n]))
		n++;
	v = verb_find(table, w, n);
	if (!v)
		return 0;
	args = v->args == ARGS_TOKENS2 ? args_tokens(w + n, 2)
	       : v->args == ARGS_LINE	? args_line(w + n)
					: strdup("");
	if (!args)
		return -ENOMEM;
	c = &m->cmds[m->n_cmds];
	c->args = args;
	c->name = strdup(v->name);
	c->kfix = table == kfix_verbs;
	if (!c->name) {
		free(args);
		return -ENOMEM;
	}
	m->n_cmds++;
	return 0;
}

static int scan(struct mail *m, const char *text)
{
	for (const char *p = text; p && *p && m->n_cmds < MAIL_COMMANDS_MAX;) {
		int r = try_line(m, p);

		if (r < 0)
			return r;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

int mail_analyse_commands(struct mail *m)
{
	const struct mail_syzbot *s = mail_syzbot(m);
	int r;

	/* syzbot's own mail carries sample commands in its help footer */
	if (s && m->from && (startswith(m->from, "syzbot+") || startswith(m->from, "syzbot@")))
		return 0;
	r = scan(m, m->subject);
	if (r < 0)
		return r;
	return scan(m, m->body);
}
