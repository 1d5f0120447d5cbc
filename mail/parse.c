/* RFC 5322/MIME decoding through GMime: headers, the text body and the
 * attachments, all bounded.  The analysis of the decoded text lives in
 * the other files of this folder. */
#include "common/strutil.h"
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "mail-internal.h"

/* after our headers: glib redefines MIN/MAX itself */
#include <gmime/gmime.h>

static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;

static void gmime_setup(void)
{
	g_mime_init();
}

DEFINE_CLEANUP(GObject, g_object_unref)
DEFINE_CLEANUP(char, g_free)
#define _cleanup_gobj_ _cleanup_(g_object_unrefp)
#define _cleanup_gfree_ _cleanup_(g_freep)

const char *mail_keep(struct mail *m, char *s)
{
	if (!s || m->n_syz_fields >= ARRAY_SIZE(m->syz_fields)) {
		free(s);
		return NULL;
	}
	m->syz_fields[m->n_syz_fields++] = s;
	return s;
}

/* GMime hands out g_malloc'd strings; kfix frees with free(). */
static char *gdup(const char *s, size_t max)
{
	if (!s)
		return NULL;
	return strndup(s, max);
}

static int add_addresses(struct mail *m, InternetAddressList *l)
{
	int n = l ? internet_address_list_length(l) : 0;

	for (int i = 0; i < n && strv_len(m->recipients) < 256; i++) {
		InternetAddress *a = internet_address_list_get_address(l, i);
		_cleanup_free_ char *addr = NULL;
		int r;

		if (INTERNET_ADDRESS_IS_GROUP(a)) {
			r = add_addresses(m, internet_address_group_get_members(
						     INTERNET_ADDRESS_GROUP(a)));
			if (r < 0)
				return r;
			continue;
		}
		addr = gdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)),
			    MAIL_FIELD_MAX);
		if (!addr || !*addr)
			continue;
		ascii_lower(addr);
		if (strv_contains(m->recipients, addr))
			continue;
		r = strv_push(&m->recipients, addr);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_from(struct mail *m, GMimeMessage *msg)
{
	InternetAddressList *l = g_mime_message_get_from(msg);
	InternetAddress *a;

	if (!l || internet_address_list_length(l) < 1)
		return 0;
	a = internet_address_list_get_address(l, 0);
	if (!INTERNET_ADDRESS_IS_MAILBOX(a))
		return 0;
	m->from = gdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)),
		       MAIL_FIELD_MAX);
	if (!m->from)
		return -ENOMEM;
	ascii_lower(m->from);
	{
		_cleanup_gfree_ char *d = internet_address_to_string(a, NULL, FALSE);

		m->from_display = gdup(d ? d : m->from, MAIL_FIELD_MAX);
	}
	return m->from_display ? 0 : -ENOMEM;
}

static int read_ids(struct mail *m, GMimeMessage *msg)
{
	const char *v;

	v = g_mime_message_get_message_id(msg);
	if (v && *v && !(m->message_id = gdup(v, MAIL_FIELD_MAX)))
		return -ENOMEM;
	v = g_mime_object_get_header(GMIME_OBJECT(msg), "In-Reply-To");
	if (v) {
		_cleanup_gfree_ char *id = g_mime_utils_decode_message_id(v);

		if (id && *id && !(m->in_reply_to = gdup(id, MAIL_FIELD_MAX)))
			return -ENOMEM;
	}
	v = g_mime_object_get_header(GMIME_OBJECT(msg), "References");
	if (v) {
		GMimeReferences *refs = g_mime_references_parse(NULL, v);
		int n = refs ? g_mime_references_length(refs) : 0;

		for (int i = 0; i < n && i < 128; i++) {
			int r = strv_push(&m->references,
					  g_mime_references_get_message_id(refs, i));

			if (r < 0) {
				g_mime_references_free(refs);
				return r;
			}
		}
		if (refs)
			g_mime_references_free(refs);
	}
	if (!m->references && !(m->references = calloc(1, sizeof(char *))))
		return -ENOMEM;
	return 0;
}

/* Decoded bytes of a leaf part (transfer encoding undone, no charset
 * conversion: a patch keeps its bytes). */
static int part_bytes(GMimePart *p, char **ret, size_t *ret_len)
{
	GMimeDataWrapper *w = g_mime_part_get_content(p);
	_cleanup_gobj_ GObject *s = NULL;
	GByteArray *arr;

	if (!w)
		return -ENODATA;
	s = G_OBJECT(g_mime_stream_mem_new());
	if (g_mime_data_wrapper_write_to_stream(w, GMIME_STREAM(s)) < 0)
		return -EBADMSG;
	arr = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(s));
	if (arr->len > MAIL_TEXT_MAX)
		return -EFBIG;
	/* an empty part has no array storage at all */
	*ret = arr->len ? strndup((const char *)arr->data, arr->len) : strdup("");
	if (!*ret)
		return -ENOMEM;
	*ret_len = strlen(*ret);
	return 0;
}

static int take_text(struct mail *m, GMimePart *p)
{
	_cleanup_gfree_ char *t = NULL;

	if (!GMIME_IS_TEXT_PART(p))
		return 0;
	/* converts the charset to UTF-8 and undoes QP/base64 */
	t = g_mime_text_part_get_text(GMIME_TEXT_PART(p));
	if (!t)
		return 0;
	m->body = strndup(t, MAIL_TEXT_MAX);
	return m->body ? 0 : -ENOMEM;
}

static int take_attachment(struct mail *m, GMimePart *p)
{
	struct mail_attachment *a;
	const char *name;
	int r;

	if (m->n_att >= MAIL_ATTACHMENTS_MAX)
		return 0;
	a = &m->att[m->n_att];
	r = part_bytes(p, &a->data, &a->len);
	if (r == -ENODATA || r == -EBADMSG || r == -EFBIG)
		return 0;
	if (r < 0)
		return r;
	name = g_mime_part_get_filename(p);
	a->name = strndup(name ? name : "", 256);
	if (!a->name) {
		free(a->data);
		return -ENOMEM;
	}
	m->n_att++;
	return 0;
}

static int walk(struct mail *m, GMimeObject *o, int depth, int *parts)
{
	GMimeContentType *ct;

	if (depth > MAIL_DEPTH_MAX || ++*parts > MAIL_PARTS_MAX)
		return 0;
	if (GMIME_IS_MULTIPART(o)) {
		int n = g_mime_multipart_get_count(GMIME_MULTIPART(o));

		for (int i = 0; i < n; i++) {
			int r = walk(m, g_mime_multipart_get_part(GMIME_MULTIPART(o), i),
				     depth + 1, parts);
			if (r < 0)
				return r;
		}
		return 0;
	}
	/* a forwarded message/rfc822 is someone else's mail: not ours to act on */
	if (!GMIME_IS_PART(o))
		return 0;
	ct = g_mime_object_get_content_type(o);
	if (!m->body && !g_mime_part_is_attachment(GMIME_PART(o)) && ct &&
	    g_mime_content_type_is_type(ct, "text", "plain"))
		return take_text(m, GMIME_PART(o));
	if (ct && g_mime_content_type_is_type(ct, "text", "html") &&
	    !g_mime_part_is_attachment(GMIME_PART(o)))
		return 0;
	return take_attachment(m, GMIME_PART(o));
}

static int mail_read(struct mail *m, GMimeMessage *msg)
{
	GMimeObject *body = g_mime_message_get_mime_part(msg);
	const char *subj;
	int parts = 0, r;

	r = read_ids(m, msg);
	if (r < 0)
		return r;
	r = read_from(m, msg);
	if (r < 0)
		return r;
	subj = g_mime_message_get_subject(msg);
	m->subject = strndup(subj ? subj : "", MAIL_FIELD_MAX);
	if (!m->subject)
		return -ENOMEM;
	/* folded or encoded subjects may still carry control characters */
	for (char *p = m->subject; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	r = add_addresses(m, g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO));
	if (r < 0)
		return r;
	r = add_addresses(m, g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_CC));
	if (r < 0)
		return r;
	if (!m->recipients && !(m->recipients = calloc(1, sizeof(char *))))
		return -ENOMEM;
	if (body) {
		r = walk(m, body, 0, &parts);
		if (r < 0)
			return r;
	}
	if (!m->body && !(m->body = strdup("")))
		return -ENOMEM;
	return 0;
}

static int mail_analyse(struct mail *m)
{
	int (*const passes[])(struct mail *) = {
		mail_analyse_syzbot,   mail_analyse_commands, mail_analyse_patch,
		mail_analyse_trailers, mail_analyse_review,
	};

	for (size_t i = 0; i < ARRAY_SIZE(passes); i++) {
		int r = passes[i](m);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The boundary=... value at p (quoted or a token), bounded. */
static size_t boundary_value(const char *p, const char *end, const char **ret)
{
	const char *q;

	if (p < end && *p == '"') {
		q = memchr(p + 1, '"', (size_t)(end - p - 1));
		*ret = p + 1;
		return q ? (size_t)(q - p - 1) : 0;
	}
	for (q = p; q < end && !strchr(" \t\r\n;\"", *q); q++)
		;
	*ret = p;
	return (size_t)(q - p);
}

struct prescan {
	const char *b[MAIL_BOUNDARIES_MAX];
	size_t bn[MAIL_BOUNDARIES_MAX];
	size_t n_bounds, delimiters, headers, field;
	bool in_header;
};

static bool is_delimiter(const struct prescan *s, const char *l, size_t n)
{
	if (n < 3 || l[0] != '-' || l[1] != '-')
		return false;
	for (size_t i = 0; i < s->n_bounds; i++)
		if (n >= 2 + s->bn[i] && !memcmp(l + 2, s->b[i], s->bn[i]))
			return true;
	return false;
}

/* Finds boundary= parameters on a line and remembers them. */
static int note_boundaries(struct prescan *s, const char *l, size_t n, char **ret_error)
{
	for (size_t i = 0; i + 9 <= n; i++) {
		const char *v;
		size_t k;

		if (strncasecmp(l + i, "boundary=", 9) != 0)
			continue;
		k = boundary_value(l + i + 9, l + n, &v);
		if (k == 0 || k > 200)
			continue;
		if (s->n_bounds >= MAIL_BOUNDARIES_MAX)
			return error_set(ret_error, -E2BIG,
					 "more than %d multipart boundaries: nested too deep",
					 MAIL_BOUNDARIES_MAX);
		s->b[s->n_bounds] = v;
		s->bn[s->n_bounds++] = k;
	}
	return 0;
}

/* A cheap look at the raw bytes, before GMime builds a tree of them: a
 * hostile mail of a million empty parts or header lines would otherwise
 * cost gigabytes and seconds before kfix's own limits apply. */
static int mail_prescan(const char *data, size_t len, char **ret_error)
{
	struct prescan s = { .in_header = true };

	for (const char *l = data, *end = data + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		int r;

		if (n > 0 && l[n - 1] == '\r')
			n--;
		if (s.in_header) {
			if (n == 0)
				s.in_header = false;
			else if (l[0] == ' ' || l[0] == '\t')
				s.field += n;
			else {
				s.field = n;
				if (++s.headers > MAIL_HEADERS_MAX)
					return error_set(ret_error, -E2BIG, "more than %d header fields",
							 MAIL_HEADERS_MAX);
			}
			if (s.field > MAIL_HEADER_SIZE_MAX)
				return error_set(ret_error, -E2BIG, "a header field of more than %u bytes",
						 MAIL_HEADER_SIZE_MAX);
		}
		if (is_delimiter(&s, l, n) && ++s.delimiters > MAIL_PARTS_MAX + MAIL_BOUNDARIES_MAX)
			return error_set(ret_error, -E2BIG, "more than %d MIME parts", MAIL_PARTS_MAX);
		if (n >= 9 && (r = note_boundaries(&s, l, n, ret_error)) < 0)
			return r;
		l = nl ? nl + 1 : end;
	}
	return 0;
}

int mail_check_bounds(const char *data, size_t len, size_t max, char **ret_error)
{
	if (max == 0)
		max = MAIL_SIZE_MAX;
	if (len > max) {
		(void)error_set(ret_error, 0, "message is %zu bytes, larger than the limit of %zu bytes",
			  len, max);
		return -EFBIG;
	}
	return mail_prescan(data, len, ret_error);
}

int mail_parse(const char *data, size_t len, size_t max, struct mail **ret,
	       char **ret_error)
{
	_cleanup_(mail_freep) struct mail *m = NULL;
	_cleanup_gobj_ GObject *stream = NULL, *parser = NULL, *msg = NULL;
	int r;

	r = mail_check_bounds(data, len, max, ret_error);
	if (r < 0)
		return r;
	pthread_once(&gmime_once, gmime_setup);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	stream = G_OBJECT(g_mime_stream_mem_new_with_buffer(data, len));
	parser = G_OBJECT(g_mime_parser_new_with_stream(GMIME_STREAM(stream)));
	g_mime_parser_set_format(GMIME_PARSER(parser), GMIME_FORMAT_MESSAGE);
	msg = G_OBJECT(g_mime_parser_construct_message(GMIME_PARSER(parser), NULL));
	if (!msg) {
		(void)error_set(ret_error, 0, "not an RFC 5322 message");
		return -EBADMSG;
	}
	r = mail_read(m, GMIME_MESSAGE(msg));
	if (r < 0) {
		(void)error_set(ret_error, 0, "cannot read the message: %s", strerror(-r));
		return r;
	}
	r = mail_analyse(m);
	if (r < 0) {
		(void)error_set(ret_error, 0, "cannot analyse the message: %s", strerror(-r));
		return r;
	}
	*ret = TAKE_PTR(m);
	return 0;
}

void mail_free(struct mail *m)
{
	if (!m)
		return;
	free(m->message_id);
	free(m->in_reply_to);
	strv_free(m->references);
	free(m->from);
	free(m->from_display);
	free(m->subject);
	strv_free(m->recipients);
	free(m->body);
	for (size_t i = 0; i < m->n_att; i++) {
		free(m->att[i].name);
		free(m->att[i].data);
	}
	for (size_t i = 0; i < m->n_syz_fields; i++)
		free(m->syz_fields[i]);
	for (size_t i = 0; i < m->n_cmds; i++) {
		free((char *)m->cmds[i].name);
		free((char *)m->cmds[i].args);
	}
	free(m->patch);
	free(m->base_commit);
	for (size_t i = 0; i < m->n_trailers; i++) {
		free((char *)m->trailers[i].key);
		free((char *)m->trailers[i].value);
	}
	free(m->review);
	free(m);
}

enum mail_kind mail_kind(const struct mail *m) { return m->kind; }
const char *mail_message_id(const struct mail *m) { return m->message_id; }
const char *mail_in_reply_to(const struct mail *m) { return m->in_reply_to; }
char *const *mail_references(const struct mail *m) { return m->references; }
const char *mail_from(const struct mail *m) { return m->from; }
const char *mail_from_display(const struct mail *m) { return m->from_display; }
const char *mail_subject(const struct mail *m) { return m->subject; }
char *const *mail_recipients(const struct mail *m) { return m->recipients; }
const char *mail_body(const struct mail *m) { return m->body; }
const char *mail_patch(const struct mail *m) { return m->patch; }
const char *mail_base_commit(const struct mail *m) { return m->base_commit; }
const char *mail_review_comments(const struct mail *m) { return m->review; }

const struct mail_syzbot *mail_syzbot(const struct mail *m)
{
	return m->has_syzbot ? &m->syz : NULL;
}

const struct mail_command *mail_commands(const struct mail *m, size_t *ret_n)
{
	*ret_n = m->n_cmds;
	return m->cmds;
}

const struct mail_trailer *mail_trailers(const struct mail *m, size_t *ret_n)
{
	*ret_n = m->n_trailers;
	return m->trailers;
}

const char *mail_kind_name(enum mail_kind k)
{
	static const char *const names[] = {
		[MAIL_KIND_OTHER] = "other",
		[MAIL_KIND_SYZBOT_REPORT] = "syzbot-report",
		[MAIL_KIND_SYZBOT_TEST_RESULT] = "syzbot-test-result",
		[MAIL_KIND_REPLY] = "reply",
		[MAIL_KIND_PATCH] = "patch",
	};

	return (size_t)k < ARRAY_SIZE(names) ? names[k] : "other";
}

/* [tree "T"] allow-commands: addresses, or "@domain" for a whole domain,
 * compared case-insensitively. */
bool mail_sender_allowed(const struct config *cfg, const char *tree,
			 const char *sender)
{
	_cleanup_strv_ char **allow = NULL;
	const char *at;

	if (!sender || !(at = strrchr(sender, '@')) ||
	    config_get_list(cfg, "tree", tree, "allow-commands", &allow) < 0)
		return false;
	for (size_t i = 0; allow[i]; i++) {
		const char *a = allow[i];

		if (a[0] == '@' ? strcasecmp(a, at) == 0 : strcasecmp(a, sender) == 0)
			return true;
	}
	return false;
}
