/* The JSON view of a parsed mail, as printed by `kfixctl mail parse`. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "mail-internal.h"

/* Length of the valid UTF-8 sequence at s, 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3
		 : (*s & 0xf8) == 0xf0 ? 4 : 0;

	if (n == 0 || (n == 2 && *s < 0xc2) || (n == 4 && *s > 0xf4))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Attachments keep their bytes, which need not be UTF-8: JSON must be. */
static json_t *str_or_null(const char *s)
{
	_cleanup_free_ char *fixed = NULL;
	json_t *j;
	size_t len, o = 0;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	len = strlen(s);
	fixed = malloc(len * 3 + 1);
	if (!fixed)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t k = utf8_seq((const unsigned char *)s + i);

		if (k == 0) {
			memcpy(fixed + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
			i++;
			continue;
		}
		memcpy(fixed + o, s + i, k);
		o += k;
		i += k;
	}
	fixed[o] = '\0';
	j = json_string(fixed);
	/* surrogates or overlong forms: say so rather than fail */
	return j ? j : json_string("(text that is not valid UTF-8)");
}

static json_t *syzbot_json(const struct mail_syzbot *s)
{
	if (!s)
		return json_null();
	return json_pack("{s:o s:o s:o s:o s:o s:o s:o s:o s:o s:o s:o}",
			 "extid", str_or_null(s->extid), "title", str_or_null(s->title),
			 "head_commit", str_or_null(s->head_commit),
			 "git_tree", str_or_null(s->git_tree),
			 "git_branch", str_or_null(s->git_branch),
			 "console_log", str_or_null(s->console_log),
			 "kernel_config", str_or_null(s->kernel_config),
			 "dashboard", str_or_null(s->dashboard),
			 "syz_repro", str_or_null(s->syz_repro),
			 "c_repro", str_or_null(s->c_repro),
			 "compiler", str_or_null(s->compiler));
}

int mail_to_json(const struct mail *m, json_t **ret)
{
	_cleanup_json_ json_t *j = NULL;
	json_t *cmds = json_array(), *trailers = json_array();
	const struct mail_command *c;
	const struct mail_trailer *t;
	size_t n;

	if (!cmds || !trailers) {
		json_decref(cmds);
		json_decref(trailers);
		return -ENOMEM;
	}
	c = mail_commands(m, &n);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(cmds, json_pack("{s:s s:o}", "name", c[i].name,
						      "args", str_or_null(c[i].args)));
	t = mail_trailers(m, &n);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(trailers, json_pack("{s:o s:o}", "key", str_or_null(t[i].key),
							  "value", str_or_null(t[i].value)));
	/* "o" steals the references, also on failure */
	j = json_pack("{s:o s:o s:o s:o s:s s:o s:o s:o s:o}",
		      "message_id", str_or_null(m->message_id),
		      "in_reply_to", str_or_null(m->in_reply_to),
		      "from", str_or_null(m->from_display),
		      "subject", str_or_null(m->subject),
		      "kind", mail_kind_name(m->kind),
		      "syzbot", syzbot_json(mail_syzbot(m)),
		      "commands", cmds,
		      "patch", str_or_null(m->patch),
		      "trailers", trailers);
	if (!j)
		return -ENOMEM;
	*ret = TAKE_PTR(j);
	return 0;
}
