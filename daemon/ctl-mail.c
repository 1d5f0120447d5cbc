/* kfixctl mail parse: what kfix understands of one message. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "ctl.h"
#include "mail/parse.h"

static void print_text(const char *label, const char *s)
{
	if (s)
		ctl_print_escaped(label, s);
}

static void print_human(const struct mail *m)
{
	const struct mail_syzbot *s = mail_syzbot(m);
	const struct mail_command *c;
	const struct mail_trailer *t;
	size_t n;

	printf("kind: %s\n", mail_kind_name(mail_kind(m)));
	print_text("message-id", mail_message_id(m));
	print_text("in-reply-to", mail_in_reply_to(m));
	print_text("from", mail_from_display(m));
	print_text("subject", mail_subject(m));
	if (s) {
		print_text("syzbot extid", s->extid);
		print_text("syzbot title", s->title);
		print_text("head commit", s->head_commit);
		print_text("git tree", s->git_tree);
		print_text("git branch", s->git_branch);
		print_text("console log", s->console_log);
		print_text("kernel config", s->kernel_config);
		print_text("dashboard", s->dashboard);
		print_text("syz repro", s->syz_repro);
		print_text("C repro", s->c_repro);
		print_text("compiler", s->compiler);
	}
	c = mail_commands(m, &n);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *e = str_escape(c[i].args, strlen(c[i].args), 200);

		printf("command: %s %s\n", c[i].name, e ? e : "");
	}
	t = mail_trailers(m, &n);
	for (size_t i = 0; i < n; i++)
		print_text(t[i].key, t[i].value);
	print_text("base-commit", mail_base_commit(m));
	if (mail_patch(m))
		printf("patch: %zu bytes\n", strlen(mail_patch(m)));
}

static int mail_parse_cmd(struct ctl *c, int argc, char **argv)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_free_ char *data = NULL, *err = NULL;
	size_t len;
	int r;

	if (argc != 1) {
		ctl_err("usage: kfixctl [--json] mail parse FILE|-");
		return 2;
	}
	r = read_file_bounded(argv[0], MAIL_SIZE_MAX, &data, &len);
	if (r == -EFBIG) {
		ctl_err("%s: larger than the mail size limit of %u bytes", argv[0], MAIL_SIZE_MAX);
		return 1;
	}
	if (r < 0) {
		ctl_err("%s: %s", argv[0], strerror(-r));
		return 1;
	}
	r = mail_parse(data, len, 0, &m, &err);
	if (r < 0) {
		ctl_err("%s: %s", argv[0], err ? err : strerror(-r));
		return 1;
	}
	if (c->json) {
		_cleanup_json_ json_t *j = NULL;

		if (mail_to_json(m, &j) < 0) {
			ctl_err("out of memory");
			return 1;
		}
		return json_print(j) < 0 ? 1 : 0;
	}
	print_human(m);
	return 0;
}

int ctl_mail(struct ctl *c, int argc, char **argv)
{
	/* argv[0] is "mail"; --json was already taken out by kfixctl */
	if (argc >= 2 && streq(argv[1], "parse"))
		return mail_parse_cmd(c, argc - 2, argv + 2);
	ctl_err("usage: kfixctl mail parse [--json] FILE|-");
	return 2;
}
