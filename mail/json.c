/* The JSON view of a parsed mail, as printed by `kfixctl mail parse`. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "mail-internal.h"

static json_t *syzbot_json(const struct mail_syzbot *s)
{
	if (!s)
		return json_null();
	return json_pack("{s:o s:o s:o s:o s:o s:o s:o s:o s:o s:o s:o}",
			 "extid", json_str_or_null(s->extid), "title", json_str_or_null(s->title),
			 "head_commit", json_str_or_null(s->head_commit),
			 "git_tree", json_str_or_null(s->git_tree),
			 "git_branch", json_str_or_null(s->git_branch),
			 "console_log", json_str_or_null(s->console_log),
			 "kernel_config", json_str_or_null(s->kernel_config),
			 "dashboard", json_str_or_null(s->dashboard),
			 "syz_repro", json_str_or_null(s->syz_repro),
			 "c_repro", json_str_or_null(s->c_repro),
			 "compiler", json_str_or_null(s->compiler));
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
						      "args", json_str_or_null(c[i].args)));
	t = mail_trailers(m, &n);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(trailers, json_pack("{s:o s:o}", "key", json_str_or_null(t[i].key),
							  "value", json_str_or_null(t[i].value)));
	/* "o" steals the references, also on failure */
	j = json_pack("{s:o s:o s:o s:o s:s s:o s:o s:o s:o}",
		      "message_id", json_str_or_null(m->message_id),
		      "in_reply_to", json_str_or_null(m->in_reply_to),
		      "from", json_str_or_null(m->from_display),
		      "subject", json_str_or_null(m->subject),
		      "kind", mail_kind_name(m->kind),
		      "syzbot", syzbot_json(mail_syzbot(m)),
		      "commands", cmds,
		      "patch", json_str_or_null(m->patch),
		      "trailers", trailers);
	if (!j)
		return -ENOMEM;
	*ret = TAKE_PTR(j);
	return 0;
}
