/* Private to mail/: the parsed message and the analysis passes over it. */
#ifndef KFIX_MAIL_INTERNAL_H
#define KFIX_MAIL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "parse.h"

/* Bounds on what one message may make us keep. */
#define MAIL_TEXT_MAX (8U * 1024 * 1024)
#define MAIL_ATTACHMENTS_MAX 32
#define MAIL_PARTS_MAX 256
#define MAIL_DEPTH_MAX 16
/* What the pre-scan allows before GMime sees a byte. */
#define MAIL_HEADERS_MAX 1000
#define MAIL_HEADER_SIZE_MAX (64U * 1024)
#define MAIL_BOUNDARIES_MAX (2 * MAIL_DEPTH_MAX)
#define MAIL_TRAILERS_MAX 64
#define MAIL_FIELD_MAX 4096

struct mail_attachment {
	char *name;
	char *data; /* decoded, NUL-terminated */
	size_t len;
};

struct mail {
	enum mail_kind kind;
	char *message_id;
	char *in_reply_to;
	char **references;
	char *from;
	char *from_display;
	char *subject;
	char **recipients;
	char *body;
	struct mail_attachment att[MAIL_ATTACHMENTS_MAX];
	size_t n_att;

	bool has_syzbot;
	struct mail_syzbot syz;
	char *syz_fields[24]; /* owns the strings the syz pointers show */
	size_t n_syz_fields;

	struct mail_command cmds[MAIL_COMMANDS_MAX];
	size_t n_cmds;

	char *patch;
	char *base_commit;
	struct mail_trailer trailers[MAIL_TRAILERS_MAX];
	size_t n_trailers;
	char *review;
};

/* Analysis passes, run in this order by mail_parse(). */
int mail_analyse_syzbot(struct mail *m);
int mail_analyse_commands(struct mail *m);
int mail_analyse_patch(struct mail *m);
int mail_analyse_trailers(struct mail *m);
int mail_analyse_review(struct mail *m);

/* buf_steal(), but an empty buffer gives "" (buf_steal leaves an empty
 * buffer's bytes unterminated). */
static inline char *buf_take_str(struct buf *b)
{
	return b->len ? buf_steal(b, NULL) : strdup("");
}

/* Keeps s (taken) in m and returns it, NULL on ENOMEM (s freed). */
const char *mail_keep(struct mail *m, char *s);

/* Line iteration over a NUL-terminated text: ret_line and ret_len get the next line
 * without its '\n' (and without a trailing '\r'); false at the end. */
bool text_next_line(const char **pos, const char **ret_line, size_t *ret_len);
bool line_is_quoted(const char *line, size_t len);
/* The syzbot diff scanner (the rules of its pkg/email ParsePatch). */
char *diff_extract(const char *text);

#endif
