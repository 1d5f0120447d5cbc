/* libFuzzer harness for the parsers of untrusted webhook and feed input:
 * dashboard JSON (bug list, bug), forge events of every provider and
 * kind, mail Message-IDs, #kfix commands and dashboard links.  The first
 * byte picks the parser. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hooks/forge.h"
#include "hooks/syzbot.h"
#include "hooks/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const types[] = { "push", "issue_comment", "pull_request_review_comment",
				     "pull_request_review", "ping", "Push Hook", "Note Hook",
				     "other" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	char *err = NULL, *s = NULL;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	switch (sel % 6) {
	case 0: {
		struct syzbot_list *l = NULL;

		if (syzbot_parse_list(p, n, "https://syzkaller.appspot.com", &l, &err) == 0)
			syzbot_list_free(l);
		break;
	}
	case 1: {
		struct syzbot_bug *b = NULL;

		if (syzbot_parse_bug(p, n, "https://syzkaller.appspot.com", &b, &err) == 0) {
			syzbot_bug_pick_crash(b, sel & 8);
			syzbot_bug_free(b);
		}
		break;
	}
	case 2: {
		struct forge_event *e = NULL;
		enum forge_provider prov = (enum forge_provider)((sel >> 3) % _FORGE_PROVIDER_MAX);

		if (forge_event_parse(prov, types[(sel >> 5) % 8], p, n, &e, &err) == 0)
			forge_event_free(e);
		break;
	}
	case 3:
		if (webhook_mail_message_id(p, n, &s) == 0)
			free(s);
		s = NULL;
		break;
	default: {
		/* the string parsers take NUL-terminated text */
		char *t = malloc(n + 1);

		if (!t)
			return 0;
		memcpy(t, p, n);
		t[n] = '\0';
		if (sel % 6 == 4) {
			if (kfix_command_find(t, &s) == 0)
				free(s);
			int64_t bug;
			int v;
			forge_find_kfix_branch(t, &bug, &v);
		} else {
			if (syzbot_link("https://syzkaller.appspot.com", t, &s) == 0)
				free(s);
			free(syzbot_link_extid(t));
		}
		free(t);
		break;
	}
	}
	free(err);
	return 0;
}
