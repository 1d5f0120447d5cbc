/* Scrubbing secrets and addresses.  The patterns are PCRE2 (linked for
 * the oops table already): each rule is one pcre2_substitute() over the
 * whole text, under a match limit, so hostile text cannot make it
 * super-linear; addresses need a numbered placeholder per address and
 * are replaced by a loop of their own. */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/strutil.h"
#include "scrub.h"

#define MATCH_LIMIT 10000000
#define REDACTED "[REDACTED]"

/* Kept in this order: the credential forms first, so that the generic
 * "key = value" rule does not leave half a credential behind. */
static const struct rule {
	const char *pattern;
	const char *replacement;
} rules[] = {
	/* a key cut short by the trajectory's text limit has no END line */
	{ "-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[\\s\\S]{0,65535}?-----END[A-Z0-9 ]{0,40}"
	  "PRIVATE KEY-----|[A-Za-z0-9+/=\\s]*)",
	  "[REDACTED PRIVATE KEY]" },
	/* scheme://user:password@host and scheme://token@host */
	{ "\\b([a-zA-Z][a-zA-Z0-9+.-]{0,31}://)[^\\s/?#@\"'<>]{1,1024}@", "${1}" REDACTED "@" },
	/* HTTP credentials; the lookahead keeps "Basic understanding" */
	{ "(?i)\\b(bearer|basic)(\\s{1,8})(?=[A-Za-z0-9._~+/-]*[0-9=._~+/])[A-Za-z0-9._~+/=-]{8,}",
	  "${1}${2}" REDACTED },
	/* the forms of well-known providers' keys and tokens */
	{ "\\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
	  "|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
	  "|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
	  "|eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,})",
	  REDACTED },
	/* key = value, key: value, "key": "value", ?key=value */
	{ "(?i)((?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret"
	  "|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|secret|password|passwd|pwd"
	  "|credentials?|authorization|(?<=[?&])key)[\"']?\\s{0,8}[:=]\\s{0,8}[\"']?)"
	  "(?!\\[REDACTED|(?i:bearer|basic)\\s)[^\\s\"',;&<>]{3,}",
	  "${1}" REDACTED },
};

/* not a placeholder again: a text may be scrubbed twice */
static const char address_re[] =
	"(?<![A-Za-z0-9._%+-])(?!person[0-9]*@redacted\\.invalid\\b)[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\\.){1,8}[A-Za-z]{2,63}\\b";

/* a JSON member whose name says its value is secret */
static const char secret_key_re[] =
	"(?i)^(?:[a-z0-9]*[_-])*(?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key"
	"|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|secret"
	"|password|passwd|pwd|credentials?|authorization|cookie)$";

struct scrub {
	pcre2_code *code[ARRAY_SIZE(rules)];
	pcre2_code *address, *secret_key;
	pcre2_match_context *mctx;
	char **secrets;
	char **addresses; /* seen, in order: the placeholder is the index */
	size_t n_addresses;
	size_t count;
};

void scrub_free(struct scrub *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		pcre2_code_free(s->code[i]);
	pcre2_code_free(s->address);
	pcre2_code_free(s->secret_key);
	pcre2_match_context_free(s->mctx);
	for (size_t i = 0; s->secrets && s->secrets[i]; i++)
		free(s->secrets[i]);
	free(s->secrets);
	for (size_t i = 0; i < s->n_addresses; i++)
		free(s->addresses[i]);
	free(s->addresses);
	free(s);
}

static pcre2_code *compile(const char *pattern)
{
	PCRE2_SIZE off;
	int err;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);

	/* JIT only speeds matching up; the interpreter answers the same */
	if (c)
		(void)pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);
	return c;
}

static int add_secrets(struct scrub *s, char *const *secrets)
{
	for (size_t i = 0; secrets && secrets[i]; i++) {
		if (strlen(secrets[i]) < SCRUB_SECRET_MIN || strv_contains(s->secrets, secrets[i]))
			continue;
		if (strv_len(s->secrets) >= SCRUB_SECRETS_MAX)
			return -E2BIG;
		if (strv_push(&s->secrets, secrets[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

int scrub_new(char *const *secrets, struct scrub **ret)
{
	_cleanup_(scrub_freep) struct scrub *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->mctx = pcre2_match_context_create(NULL);
	if (!s->mctx || pcre2_set_match_limit(s->mctx, MATCH_LIMIT) != 0)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		if (!(s->code[i] = compile(rules[i].pattern)))
			return -EINVAL;
	if (!(s->address = compile(address_re)) || !(s->secret_key = compile(secret_key_re)))
		return -EINVAL;
	r = add_secrets(s, secrets);
	if (r < 0)
		return r;
	*ret = s;
	s = NULL;
	return 0;
}

size_t scrub_count(const struct scrub *s)
{
	return s->count;
}

/* Every occurrence of each known secret, longest first would not matter:
 * a secret inside another is replaced by the outer one's pass too. */
static int replace_secrets(struct scrub *s, char **text)
{
	for (size_t i = 0; s->secrets && s->secrets[i]; i++) {
		const char *sec = s->secrets[i], *p = *text, *hit;
		size_t n = strlen(sec);
		struct buf b = BUF_INIT(SCRUB_TEXT_MAX);

		if (!strstr(p, sec))
			continue;
		while ((hit = strstr(p, sec))) {
			if (buf_append(&b, p, (size_t)(hit - p)) < 0 || buf_puts(&b, REDACTED) < 0)
				return buf_free(&b), -ENOMEM;
			s->count++;
			p = hit + n;
		}
		if (buf_puts(&b, p) < 0)
			return buf_free(&b), -ENOMEM;
		free(*text);
		*text = buf_steal(&b, NULL);
	}
	return 0;
}

static int substitute(struct scrub *s, pcre2_code *code, const char *repl, char **text)
{
	uint32_t opts = PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_EXTENDED |
			PCRE2_SUBSTITUTE_OVERFLOW_LENGTH;
	size_t len = strlen(*text), cap = len + 1;

	for (int tries = 0; tries < 2; tries++) {
		_cleanup_free_ char *out = malloc(cap);
		PCRE2_SIZE n = cap;
		int rc;

		if (!out)
			return -ENOMEM;
		rc = pcre2_substitute(code, (PCRE2_SPTR)*text, len, 0, opts, NULL, s->mctx,
				      (PCRE2_SPTR)repl, PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)out, &n);
		if (rc == PCRE2_ERROR_NOMEMORY && n <= SCRUB_TEXT_MAX) {
			cap = n;
			continue;
		}
		if (rc < 0)
			return rc == PCRE2_ERROR_NOMEMORY ? -E2BIG : -EINVAL;
		if (rc > 0) {
			s->count += (size_t)rc;
			free(*text);
			*text = TAKE_PTR(out);
		}
		return 0;
	}
	return -E2BIG;
}

/* The number of an address: the same address is the same person. */
static int address_index(struct scrub *s, const char *a, size_t n, size_t *ret)
{
	char **grown;

	for (size_t i = 0; i < s->n_addresses; i++)
		if (strlen(s->addresses[i]) == n && strncasecmp(s->addresses[i], a, n) == 0)
			return *ret = i + 1, 0;
	if (s->n_addresses >= SCRUB_ADDRESSES_MAX)
		return *ret = 0, 0;
	grown = realloc(s->addresses, (s->n_addresses + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	s->addresses = grown;
	if (!(s->addresses[s->n_addresses] = strndup(a, n)))
		return -ENOMEM;
	*ret = ++s->n_addresses;
	return 0;
}

static int replace_addresses(struct scrub *s, char **text)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(s->address, NULL);
	struct buf b = BUF_INIT(SCRUB_TEXT_MAX);
	size_t len = strlen(*text), at = 0, k;
	int rc, r = 0;

	if (!md)
		return -ENOMEM;
	while ((rc = pcre2_match(s->address, (PCRE2_SPTR)*text, len, at, 0, md, s->mctx)) > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

		r = address_index(s, *text + ov[0], ov[1] - ov[0], &k);
		if (r >= 0)
			r = buf_append(&b, *text + at, ov[0] - at);
		if (r >= 0)
			r = k ? buf_printf(&b, "person%zu@redacted.invalid", k)
			      : buf_puts(&b, "person@redacted.invalid");
		if (r < 0)
			break;
		s->count++;
		at = ov[1];
	}
	pcre2_match_data_free(md);
	if (r >= 0 && rc != PCRE2_ERROR_NOMATCH)
		r = rc == PCRE2_ERROR_MATCHLIMIT ? -E2BIG : -EINVAL;
	if (r >= 0 && at == 0)
		return buf_free(&b), 0;
	if (r >= 0)
		r = buf_puts(&b, *text + at);
	if (r < 0)
		return buf_free(&b), r;
	free(*text);
	*text = buf_steal(&b, NULL);
	return 0;
}

int scrub_text(struct scrub *s, const char *text, char **ret)
{
	_cleanup_free_ char *t = NULL;
	int r;

	if (strlen(text) > SCRUB_TEXT_MAX)
		return -E2BIG;
	t = strdup(text);
	if (!t)
		return -ENOMEM;
	r = replace_secrets(s, &t);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(rules); i++)
		r = substitute(s, s->code[i], rules[i].replacement, &t);
	if (r >= 0)
		r = replace_addresses(s, &t);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(t);
	return 0;
}

static int scrub_string(struct scrub *s, json_t *j)
{
	_cleanup_free_ char *t = NULL, *fixed = NULL;
	size_t n;
	int r = scrub_text(s, json_string_value(j), &t);

	if (r < 0)
		return r;
	if (streq(t, json_string_value(j)))
		return 0;
	/* a secret cut inside a UTF-8 sequence leaves invalid text */
	if (utf8_repair(t, strlen(t), &fixed, &n) < 0)
		return -ENOMEM;
	return json_string_setn(j, fixed, n) < 0 ? -ENOMEM : 0;
}

static bool is_secret_key(struct scrub *s, const char *key)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(s->secret_key, NULL);
	bool yes = md && pcre2_match(s->secret_key, (PCRE2_SPTR)key, strlen(key), 0, 0, md,
				     s->mctx) > 0;

	pcre2_match_data_free(md);
	return yes;
}

/* Keys are renamed after the walk: an object must not change under its
 * iterator, and a renamed key must not be scrubbed twice. */
static int scrub_object(struct scrub *s, json_t *j)
{
	_cleanup_json_ json_t *renamed = json_object();
	const char *key;
	json_t *v;
	int r;

	if (!renamed)
		return -ENOMEM;
	json_object_foreach(j, key, v) {
		_cleanup_free_ char *k = NULL;

		r = is_secret_key(s, key) && json_is_string(v) && json_string_length(v) > 0
			    ? (s->count++, json_string_set(v, REDACTED) < 0 ? -ENOMEM : 0)
			    : scrub_json(s, v);
		if (r >= 0)
			r = scrub_text(s, key, &k);
		if (r < 0)
			return r;
		if (!streq(k, key) && json_object_set_new(renamed, key, json_string(k)) < 0)
			return -ENOMEM;
	}
	json_object_foreach(renamed, key, v) {
		_cleanup_free_ char *fixed = NULL;
		size_t n;

		if (utf8_repair(json_string_value(v), strlen(json_string_value(v)), &fixed, &n) < 0 ||
		    json_object_set(j, fixed, json_object_get(j, key)) < 0)
			return -ENOMEM;
		json_object_del(j, key);
	}
	return 0;
}

int scrub_json(struct scrub *s, json_t *j)
{
	size_t i;
	json_t *v;
	int r;

	if (json_is_string(j))
		return scrub_string(s, j);
	if (json_is_object(j))
		return scrub_object(s, j);
	json_array_foreach(j, i, v) {
		r = scrub_json(s, v);
		if (r < 0)
			return r;
	}
	return 0;
}
