/* Test driver for mail/: exposes composing, get_maintainer, SMTP sending
 * and public-inbox polling to the shell integration tests. */
#include "common/macro.h"
#include "mail/auth.h"
#undef MIN
#undef MAX
#include <opendkim/dkim.h>
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "mail/compose.h"
#include "mail/inbox.h"
#include "mail/parse.h"
#include "mail/smtp.h"

static char **json_strv(const json_t *a)
{
	char **v = calloc(1, sizeof(char *));
	size_t i;
	json_t *e;

	json_array_foreach(a, i, e)
		if (json_is_string(e) && strv_push(&v, json_string_value(e)) < 0)
			exit(3);
	return v;
}

/* SPEC is JSON with the fields of struct patch_mail. */
static int cmd_compose(const char *spec)
{
	_cleanup_free_ char *data = NULL, *out = NULL, *err = NULL;
	_cleanup_free_ struct mail_trailer *t = NULL;
	_cleanup_free_ struct mail_repro_row *rows = NULL;
	_cleanup_strv_ char **to = NULL, **cc = NULL, **refs = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct patch_mail p = { 0 };
	json_error_t jerr;
	size_t len, i;
	json_t *e;
	int r;

	if (read_file_bounded(spec, 1 << 24, &data, &len) < 0 ||
	    json_parse_bounded(data, len, 1 << 24, &j, &jerr) < 0)
		return 2;
	p.from = json_get_str(j, "from");
	p.author = json_get_str(j, "author");
	p.message_id = json_get_str(j, "message_id");
	p.in_reply_to = json_get_str(j, "in_reply_to");
	p.date = json_get_int(j, "date", 0);
	p.version = (int)json_get_int(j, "version", 1);
	p.rfc = json_get_bool(j, "rfc", false);
	p.summary = json_get_str(j, "summary");
	p.body = json_get_str(j, "body");
	p.explanation = json_get_str(j, "explanation");
	p.evidence = json_get_str(j, "evidence");
	p.patch_type = json_get_str(j, "patch_type");
	p.tested = json_get_str(j, "tested");
	p.not_tested = json_get_str(j, "not_tested");
	p.diff = json_get_str(j, "diff");
	p.base_commit = json_get_str(j, "base_commit");
	p.to = to = json_strv(json_object_get(j, "to"));
	p.cc = cc = json_strv(json_object_get(j, "cc"));
	p.references = refs = json_strv(json_object_get(j, "references"));
	t = calloc(64, sizeof(*t));
	rows = calloc(16, sizeof(*rows));
	json_array_foreach(json_object_get(j, "trailers"), i, e) {
		if (i >= 64)
			break;
		t[i].key = json_string_value(json_array_get(e, 0));
		t[i].value = json_string_value(json_array_get(e, 1));
		p.n_trailers = i + 1;
	}
	p.trailers = t;
	json_array_foreach(json_object_get(j, "repro"), i, e) {
		if (i >= 16)
			break;
		rows[i].kernel = json_string_value(json_array_get(e, 0));
		rows[i].result = json_string_value(json_array_get(e, 1));
		p.n_repro = i + 1;
	}
	p.repro = rows;
	r = mail_compose_patch(&p, &out, &err);
	if (r < 0) {
		fprintf(stderr, "compose: %s\n", err ? err : strerror(-r));
		return 1;
	}
	fputs(out, stdout);
	return 0;
}

static int cmd_maintainers(const char *tree, const char *diff_file)
{
	_cleanup_free_ char *diff = NULL, *err = NULL;
	_cleanup_strv_ char **v = NULL;
	size_t len;
	int r;

	if (read_file_bounded(diff_file, 1 << 24, &diff, &len) < 0)
		return 2;
	r = mail_maintainers(tree, diff, &v, &err);
	if (r < 0) {
		fprintf(stderr, "maintainers: %s\n", err ? err : strerror(-r));
		return 1;
	}
	for (size_t i = 0; v[i]; i++)
		puts(v[i]);
	return 0;
}

static int cmd_send(int argc, char **argv)
{
	_cleanup_free_ char *msg = NULL, *err = NULL;
	struct smtp_opts o = { .url = argv[0], .timeout_sec = 10 };
	size_t len;
	int r;

	if (argc < 3 || read_file_bounded("-", MAIL_SIZE_MAX, &msg, &len) < 0)
		return 2;
	o.user = getenv("SMTP_USER");
	o.password = getenv("SMTP_PASSWORD");
	o.ca_file = getenv("SMTP_CA_FILE");
	r = smtp_send(&o, msg, len, argv[1], argv + 2, &err);
	printf("%s %s\n", r == 0 ? "sent" : r == -EAGAIN ? "retry" : "park", err ? err : "");
	return r == 0 ? 0 : r == -EAGAIN ? 75 : 1;
}

static int on_message(const struct mail *m, const char *raw, size_t len,
		      const char *pos, void *userdata)
{
	const char *commit = strchr(pos, ':') + 1;

	if (!m) {
		printf("unparsable %s\n", commit);
		return 0;
	}
	printf("%s %s %s\n", commit, mail_kind_name(mail_kind(m)),
	       mail_message_id(m) ? mail_message_id(m) : "-");
	return 0;
}

/* inbox URL CACHE POSFILE [MAX] */
static int cmd_inbox(int argc, char **argv)
{
	_cleanup_(inbox_freep) struct inbox *ib = NULL;
	_cleanup_free_ char *pos = NULL, *newpos = NULL, *err = NULL;
	size_t len;
	int r, n = 0;

	if (argc < 3)
		return 2;
	if (read_file_bounded(argv[2], 4096, &pos, &len) < 0)
		pos = NULL;
	r = inbox_open(argv[0], argv[1], &ib, &err);
	if (r < 0) {
		fprintf(stderr, "inbox: %s\n", err ? err : strerror(-r));
		return 1;
	}
	r = inbox_poll(ib, pos, argc > 3 ? atoi(argv[3]) : 1000, on_message, NULL, &newpos,
		       &n, &err);
	if (r < 0) {
		fprintf(stderr, "inbox: %s\n", err ? err : strerror(-r));
		return 1;
	}
	if (write_file_atomic(argv[2], newpos, strlen(newpos), 0644) < 0)
		return 1;
	fprintf(stderr, "%d new, position %s\n", n, newpos);
	return 0;
}

/* Signs stdin with DKIM (relaxed/relaxed, rsa-sha256) as DOMAIN's
 * SELECTOR, with the PEM key in KEY, as a sender's MTA would: the
 * signature header, then the message. */
static int cmd_dkim_sign(const char *key_path, const char *selector, const char *domain)
{
	_cleanup_free_ char *key = NULL, *msg = NULL;
	size_t klen, mlen;
	DKIM_LIB *lib;
	DKIM *d;
	DKIM_STAT st;
	unsigned char hdr[8192];
	char *crlf;
	size_t clen = 0;
	int r;

	r = read_file_bounded(key_path, 1 << 16, &key, &klen);
	if (r >= 0)
		r = read_fd_bounded(STDIN_FILENO, 16u << 20, &msg, &mlen);
	if (r < 0) {
		fprintf(stderr, "mailtool: %s\n", strerror(-r));
		return 1;
	}
	/* DKIM hashes CRLF lines; the message is written back as it came */
	crlf = mail_auth_crlf(msg, mlen, &clen);
	if (!crlf)
		return 1;
	lib = dkim_init(NULL, NULL);
	if (!lib)
		return 1;
	d = dkim_sign(lib, (const unsigned char *)"mailtool", NULL, (unsigned char *)key,
		      (const unsigned char *)selector, (const unsigned char *)domain,
		      DKIM_CANON_RELAXED, DKIM_CANON_RELAXED, DKIM_SIGN_RSASHA256, -1, &st);
	if (!d || dkim_chunk(d, (unsigned char *)crlf, clen) != DKIM_STAT_OK ||
	    dkim_chunk(d, NULL, 0) != DKIM_STAT_OK || dkim_eom(d, NULL) != DKIM_STAT_OK ||
	    dkim_getsighdr(d, hdr, sizeof(hdr), strlen("DKIM-Signature: ")) != DKIM_STAT_OK) {
		fprintf(stderr, "mailtool: signing failed\n");
		return 1;
	}
	printf("DKIM-Signature: ");
	for (const unsigned char *p = hdr; *p; p++)
		if (*p != '\r')
			putchar(*p);
	printf("\n");
	fwrite(msg, 1, mlen, stdout);
	free(crlf);
	dkim_free(d);
	dkim_close(lib);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && streq(argv[1], "dkim-sign"))
		return cmd_dkim_sign(argv[2], argv[3], argv[4]);
	if (argc >= 3 && streq(argv[1], "compose"))
		return cmd_compose(argv[2]);
	if (argc >= 4 && streq(argv[1], "maintainers"))
		return cmd_maintainers(argv[2], argv[3]);
	if (argc >= 3 && streq(argv[1], "send"))
		return cmd_send(argc - 2, argv + 2);
	if (argc >= 3 && streq(argv[1], "inbox"))
		return cmd_inbox(argc - 2, argv + 2);
	fprintf(stderr, "usage: mailtool compose SPEC | maintainers TREE DIFF | "
			"send URL FROM RCPT... <MSG | inbox URL CACHE POSFILE [MAX] | "
			"dkim-sign KEY SELECTOR DOMAIN <MSG\n");
	return 2;
}
