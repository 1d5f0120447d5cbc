#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/conf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "intake-review.h"
#include "mail/parse.h"
#include "store.h"

#define REVIEW_REFERENCES_MAX 16

struct intake_review {
	char *message_id, *from, *author;
	char **thread; /* In-Reply-To, then References from the newest */
	json_t *trailers;
	char *comments;
	bool approves; /* the sender gave Reviewed-by, Acked-by or Tested-by */
};

void intake_review_free(struct intake_review *r)
{
	if (!r)
		return;
	free(r->message_id);
	free(r->from);
	free(r->author);
	strv_free(r->thread);
	json_decref(r->trailers);
	free(r->comments);
	free(r);
}

static const char *const collected_keys[] = {
	"Reviewed-by", "Acked-by", "Tested-by", "Reported-by", "Suggested-by", NULL,
};

static bool approving_key(const char *k)
{
	return strcasecmp(k, "Reviewed-by") == 0 || strcasecmp(k, "Acked-by") == 0 ||
	       strcasecmp(k, "Tested-by") == 0;
}

/* A tag is given by a person for themselves: its address must be the
 * sender's, so a reply cannot put words in someone else's name. */
static bool names_sender(const char *value, const char *from)
{
	const char *lt = strrchr(value, '<');
	size_t n = strlen(from);

	if (!lt)
		return strcasecmp(value, from) == 0;
	return strncasecmp(lt + 1, from, n) == 0 && lt[1 + n] == '>';
}

static int trailers_fill(struct intake_review *r, const struct mail *m)
{
	const struct mail_trailer *t;
	size_t n = 0;

	r->trailers = json_array();
	if (!r->trailers)
		return -ENOMEM;
	t = mail_trailers(m, &n);
	for (size_t i = 0; i < n && json_array_size(r->trailers) < REVIEW_TRAILERS_MAX; i++) {
		const char *key = NULL;

		for (size_t k = 0; collected_keys[k] && !key; k++)
			if (strcasecmp(t[i].key, collected_keys[k]) == 0)
				key = collected_keys[k];
		if (!key || !r->from || !names_sender(t[i].value, r->from) ||
		    strpbrk(t[i].value, "\r\n"))
			continue;
		r->approves |= approving_key(key);
		if (json_array_append_new(r->trailers, json_pack("{s:s, s:s}", "key", key, "value",
								 t[i].value)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The comments, cut at a line end when too long. */
static int comments_cut(const char *text, char **ret)
{
	size_t n = strlen(text);
	static const char cut[] = "[... the rest of the reply was cut by kfix]\n";

	if (n <= REVIEW_COMMENTS_MAX) {
		*ret = strdup(text);
		return *ret ? 0 : -ENOMEM;
	}
	n = REVIEW_COMMENTS_MAX - sizeof(cut);
	while (n > 0 && text[n - 1] != '\n')
		n--;
	*ret = malloc(n + sizeof(cut));
	if (!*ret)
		return -ENOMEM;
	memcpy(*ret, text, n);
	memcpy(*ret + n, cut, sizeof(cut));
	return 0;
}

static int comments_fill(struct intake_review *r, const char *text)
{
	return comments_cut(text, &r->comments);
}

/* kfix's patch mails are "kfix-BUG-vN[-rfc]@domain" (daemon/publish.c). */
static bool kfix_message_id(const char *id)
{
	if (id && *id == '<')
		id++;
	return id && startswith(id, "kfix-");
}

int intake_review_new(const struct mail *m, bool has_command, struct intake_review **ret)
{
	_cleanup_(intake_review_freep) struct intake_review *r = NULL;
	char *const *refs = mail_references(m);
	const char *text = mail_review_comments(m);
	int e;

	*ret = NULL;
	if (mail_kind(m) != MAIL_KIND_REPLY || !mail_message_id(m) || !mail_from(m) ||
	    (!mail_in_reply_to(m) && strv_len(refs) == 0))
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r || !strdup_each((char **[]){ &r->message_id, &r->from, &r->author },
			       (const char *const[]){ mail_message_id(m), mail_from(m),
						      mail_from_display(m) }, 3))
		return -ENOMEM;
	if (kfix_message_id(mail_in_reply_to(m)) && strv_push(&r->thread, mail_in_reply_to(m)) < 0)
		return -ENOMEM;
	for (size_t i = strv_len(refs); i > 0 && i + REVIEW_REFERENCES_MAX > strv_len(refs); i--)
		if (kfix_message_id(refs[i - 1]) && !strv_contains(r->thread, refs[i - 1]) &&
		    strv_push(&r->thread, refs[i - 1]) < 0)
			return -ENOMEM;
	/* a list's other threads are none of kfix's business: not even kept */
	if (!r->thread)
		return 0;
	e = trailers_fill(r, m);
	/* words next to a command explain the command: they ask for nothing */
	if (e >= 0 && text && !has_command)
		e = comments_fill(r, text);
	if (e < 0)
		return e;
	if (json_array_size(r->trailers) == 0 && !r->comments)
		return 0;
	*ret = TAKE_PTR(r);
	return 0;
}

/* The [mail] key a review reads: kfix's own address, NULL when unset. */
static const char *review_own_from_config(const struct config *cfg)
{
	const char *own = NULL;

	(void)config_get_string(cfg, "mail", NULL, "from", &own);
	return own;
}

/* Who may ask for a new version: the tree's allowed senders, and the
 * people the answered mail went to (the maintainers get_maintainer.pl
 * named, in To or Cc).  A stranger on a list is heard, not obeyed. */
static bool may_iterate(struct store *s, const struct config *cfg, const char *tree,
			const char *answered, const char *from)
{
	_cleanup_free_ char *rcpt = NULL;
	_cleanup_json_ json_t *a = NULL;
	json_t *v;
	size_t i;

	if (tree && mail_sender_allowed(cfg, tree, from))
		return true;
	if (store_patch_mail_recipients(s, answered, &rcpt) < 0 || !(a = json_loads(rcpt, 0, NULL)))
		return false;
	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcasecmp(json_string_value(v), from) == 0)
			return true;
	return false;
}

int intake_review_apply(struct store *s, const struct config *cfg,
			const struct intake_review *r, int64_t *ret_bug, const char **ret_reason)
{
	_cleanup_(store_patch_freep) struct store_patch *p = NULL;
	_cleanup_(store_bug_freep) struct store_bug *b = NULL;
	_cleanup_free_ char *trailers = NULL;
	struct store_review v;
	const char *answered = NULL, *own = review_own_from_config(cfg);
	int64_t count = 0, id = 0;
	bool created = false;
	int e = -ENOENT;

	*ret_bug = 0;
	*ret_reason = NULL;
	for (size_t i = 0; e == -ENOENT && r->thread && r->thread[i]; i++) {
		e = store_patch_find_by_message_id(s, r->thread[i], &p);
		answered = r->thread[i];
	}
	if (e == -ENOENT) {
		*ret_reason = "a reply to no kfix patch";
		return 0;
	}
	if (e < 0)
		return e;
	*ret_bug = p->bug_id;
	if (own && names_sender(own, r->from)) {
		*ret_reason = "kfix's own mail";
		return 0;
	}
	e = store_review_count(s, p->id, &count);
	if (e < 0)
		return e;
	if (count >= REVIEWS_PER_PATCH_MAX) {
		*ret_reason = "too many replies on this patch version";
		return 0;
	}
	e = store_bug_get(s, p->bug_id, &b);
	if (e < 0)
		return e;
	trailers = json_dumps(r->trailers, JSON_COMPACT);
	if (!trailers)
		return -ENOMEM;
	v = (struct store_review){
		.bug_id = p->bug_id, .patch_id = p->id, .message_id = r->message_id,
		.author = r->author ? r->author : r->from, .trailers = trailers,
		.comments = r->comments,
		/* praise with a Reviewed-by is an approval, not a request */
		.may_iterate = r->comments && !r->approves &&
			       may_iterate(s, cfg, b->tree, answered, r->from),
	};
	e = store_review_add(s, &v, &id, &created);
	if (e < 0 || !created)
		return e;
	return store_event_add_json(s, p->bug_id, 0, "review.received",
			 json_pack("{s:I, s:I, s:i, s:s, s:s, s:O, s:b, s:b}", "review",
				   (json_int_t)id, "patch", (json_int_t)p->id, "version",
				   p->version, "by", v.author, "message_id", r->message_id,
				   "trailers", r->trailers, "comments", r->comments != NULL,
				   "new_version", v.may_iterate));
}

int intake_review_forge(struct store *s, const struct intake_forge_review *r,
			const char **ret_reason)
{
	struct store_patch **ps = NULL;
	_cleanup_free_ char *comments = NULL;
	struct store_review v;
	int64_t count = 0, id = 0, patch = 0;
	bool created = false;
	size_t n = 0;
	int e = store_patch_list(s, NULL, r->bug, 0, &ps, &n);

	*ret_reason = NULL;
	for (size_t i = 0; e >= 0 && i < n; i++)
		if (ps[i]->version == r->version)
			patch = ps[i]->id;
	store_patch_list_free(ps, n);
	if (e < 0)
		return e;
	if (!patch) {
		*ret_reason = "a comment on a version kfix did not make";
		return 0;
	}
	e = store_review_count(s, patch, &count);
	if (e < 0)
		return e;
	if (count >= REVIEWS_PER_PATCH_MAX) {
		*ret_reason = "too many replies on this patch version";
		return 0;
	}
	e = comments_cut(r->comments, &comments);
	if (e < 0)
		return e;
	v = (struct store_review){ .bug_id = r->bug, .patch_id = patch, .message_id = (char *)r->key,
				   .author = (char *)r->author, .trailers = (char *)"[]",
				   .comments = comments, .may_iterate = true };
	e = store_review_add(s, &v, &id, &created);
	if (e < 0 || !created)
		return e;
	return store_event_add_json(s, r->bug, 0, "review.received",
				    json_pack("{s:I, s:I, s:i, s:s, s:s, s:[], s:b, s:b, s:s, s:O}",
					      "review", (json_int_t)id, "patch", (json_int_t)patch,
					      "version", r->version, "by", r->author, "message_id",
					      r->key, "trailers", "comments", 1, "new_version", 1,
					      "via", "forge", "forge", r->thread));
}

static bool pair_known(const json_t *a, const char *key, const char *value)
{
	const json_t *t;
	size_t i;

	json_array_foreach(a, i, t)
		if (strcasecmp(json_get_str(t, "key") ?: "", key) == 0 &&
		    strcasecmp(json_get_str(t, "value") ?: "", value) == 0)
			return true;
	return false;
}

int intake_review_trailers(struct store *s, int64_t bug_id, int version, json_t **ret)
{
	struct store_review **vs = NULL;
	_cleanup_json_ json_t *out = json_array();
	size_t n = 0;
	int e;

	if (!out)
		return -ENOMEM;
	e = store_review_list(s, bug_id, 0, 0, &vs, &n);
	for (size_t i = 0; i < n && e >= 0; i++) {
		_cleanup_(store_patch_freep) struct store_patch *p = NULL;
		_cleanup_json_ json_t *a = NULL;
		json_t *t;
		size_t k;

		if (!vs[i]->trailers || store_patch_get(s, vs[i]->patch_id, &p) < 0 ||
		    p->version > version || !(a = json_loads(vs[i]->trailers, 0, NULL)))
			continue;
		json_array_foreach(a, k, t) {
			const char *key = json_get_str(t, "key"), *value = json_get_str(t, "value");

			if (key && value && !pair_known(out, key, value) &&
			    json_array_size(out) < REVIEW_TRAILERS_MAX * 2)
				e = json_array_append(out, t);
		}
	}
	store_review_list_free(vs, n);
	if (e < 0)
		return e;
	*ret = TAKE_PTR(out);
	return 0;
}
