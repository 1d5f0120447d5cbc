/* Cassettes for llm.h: recording every exchange as a JSON line, and
 * replaying them in order without a network, which demos and tests rely
 * on.  Kept apart from the call state machine in llm.c, which only hands
 * finished calls here to be recorded and replayed calls to be answered. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strutil.h"
#include "llm-internal.h"

#define CASSETTE_MAX (256u * 1024 * 1024)

int llm_record(struct llm *l, const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return negerrno();
	if (l->record)
		fclose(l->record);
	l->record = f;
	return 0;
}

int llm_replay(struct llm *l, const char *path)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_json_ json_t *arr = json_array();
	char *line, *save = NULL;
	size_t len;
	int r;

	r = read_file_bounded(path, CASSETTE_MAX, &data, &len);
	if (r < 0)
		return r;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *e = json_loads(line, JSON_REJECT_DUPLICATES, NULL);

		if (!json_is_object(e) || !json_object_get(e, "request")) {
			json_decref(e);
			return -EBADMSG;
		}
		json_array_append_new(arr, e);
	}
	json_decref(l->replay);
	l->replay = TAKE_PTR(arr);
	l->replay_next = 0;
	return 0;
}

int llm_new_for_replay(const char *path, struct llm **ret)
{
	_cleanup_(llm_freep) struct llm *l = NULL;
	struct llm_settings s = {};
	json_t *first;
	int r;

	r = llm_alloc(&l);
	if (r < 0)
		return r;
	r = llm_replay(l, path);
	if (r < 0)
		return r;
	first = json_array_get(l->replay, 0);
	s.provider = json_get_str(first, "provider");
	s.model = json_get_str(first, "model");
	if (!llm_provider_find(s.provider))
		return -EBADMSG;
	{
		_cleanup_(llm_freep) struct llm *n = NULL;

		r = llm_new(&s, &n);
		if (r < 0)
			return r;
		n->replay = TAKE_PTR(l->replay);
		*ret = TAKE_PTR(n);
	}
	return 0;
}

bool llm_is_replay(const struct llm *l)
{
	return l->replay != NULL;
}

void llm_record_exchange(struct llm *l, const struct llm_call *c)
{
	_cleanup_json_ json_t *e = NULL;
	_cleanup_free_ char *line = NULL;

	if (!l->record)
		return;
	e = json_pack("{s:i, s:s, s:s, s:O}", "n", (json_int_t)l->exchange,
		      "provider", llm_provider_name(l), "model", llm_model(l),
		      "request", c->request);
	if (!e)
		return;
	if (c->error)
		json_object_set_new(e, "error", json_string(c->error_text ?: strerror(-c->error)));
	else
		json_object_set_new(e, "body", json_text(c->resp.data ?: "", c->resp.len));
	line = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
	if (line) {
		fprintf(l->record, "%s\n", line);
		fflush(l->record);
	}
}

static char *normalised(const json_t *j);

/* Where the requests differ as compared (numbers masked). */
static char *first_difference(const json_t *want, const json_t *got)
{
	_cleanup_free_ char *a = normalised(want);
	_cleanup_free_ char *b = normalised(got);
	size_t i = 0;

	if (!a || !b)
		return NULL;
	while (a[i] && a[i] == b[i])
		i++;
	{
		size_t from = i > 40 ? i - 40 : 0;
		_cleanup_free_ char *ea = str_escape(a + from, strlen(a + from), 120);
		_cleanup_free_ char *eb = str_escape(b + from, strlen(b + from), 120);

		return strdup_printf("at byte %zu: recorded \"%s\", got \"%s\"", i,
				     ea ?: "", eb ?: "");
	}
}

/* Kernel runs differ in addresses, timestamps and pids from one run to
 * the next, and two builds of the same tree differ in code layout, so
 * prompts that quote a report differ in every offset and code byte.
 * Requests are compared with every hex word that holds a digit or
 * follows "0x" masked ("+0x9c/0xeb", "d3", "1f"), the bytes of an oops's "Code:" line masked
 * as a whole (a byte may be all letters), and runs of spaces as one (the
 * console pads "[    7.36]" and "[   12.04]" differently), so only a
 * change of substance diverges.  A pointer printed before the kernel's
 * hashing key is ready reads "(____ptrval____)": it is a masked number
 * too.  A hex dump's line (hexdump_line) is masked whole. */
static const char *skip_code_line(const char *p)
{
	static const char code[] = "Code: ";

	if (!startswith(p, code))
		return NULL;
	p += strlen(code);
	/* The line ends at a newline, escaped once or more by the dumps. */
	while (*p && *p != '\\' && *p != '"' && *p != '\n')
		p++;
	return p;
}

/* A line of the kernel's hex_dump_to_buffer() with its ASCII column
 * ("40 87 0b 00 ...  @....8.." as kmemleak prints an object): the
 * column renders the same random bytes as the hex words, as letters and
 * dots the word masking cannot see.  The length of what follows the
 * indentation when [l, e) is one, else 0. */
static size_t hexdump_line(const char *l, const char *e)
{
	const char *p = l;
	size_t word = 0, bytes = 0;

	while (p < e) {
		size_t n = 0;

		while (p + n < e && isxdigit((unsigned char)p[n]))
			n++;
		if (n == 0 || n % 2 || (word && n != word) || p + n >= e || p[n] != ' ')
			break;
		word = n;
		bytes += n / 2;
		p += n + 1;
	}
	if (bytes < 4 || p >= e || *p != ' ' || (size_t)(e - p - 1) != bytes)
		return 0;
	return (size_t)(e - l);
}

/* A row of KASAN's "Memory state around the buggy address" (">" marks
 * the buggy row): an address, then 16 shadow bytes such as "fa fb fc",
 * which depend on where the allocator put the neighbouring objects and
 * are letters as often as digits.  The row's length when [l, e) is one,
 * else 0. */
static size_t shadow_line(const char *l, const char *e)
{
	const char *p = l + (l < e && *l == '>');
	size_t n = 0, bytes = 0;

	while (p + n < e && isxdigit((unsigned char)p[n]))
		n++;
	if (n < 8 || p + n + 1 >= e || p[n] != ':')
		return 0;
	for (p += n + 1; p + 3 <= e && p[0] == ' ' && isxdigit((unsigned char)p[1]) &&
			 isxdigit((unsigned char)p[2]);
	     p += 3)
		bytes++;
	return p == e && bytes >= 8 ? (size_t)(e - l) : 0;
}

/* s with each hex dump line's words and column, and each shadow row, as
 * one "#"; NULL when s has none (or on no memory: the line then compares
 * as it is). */
static char *hexdumps_masked(const char *s)
{
	struct buf b = BUF_INIT(strlen(s) + 1);
	bool any = false;

	for (const char *l = s; *l;) {
		const char *e = strchrnul(l, '\n'), *t = l;
		size_t n;

		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		n = hexdump_line(t, e);
		if (!n)
			n = shadow_line(t, e);
		any |= n > 0;
		if (buf_append(&b, l, (size_t)(t - l)) < 0 ||
		    buf_append(&b, n ? "#" : t, n ? 1 : (size_t)(e - t)) < 0 ||
		    (*e && buf_append(&b, "\n", 1) < 0)) {
			buf_free(&b);
			return NULL;
		}
		l = *e ? e + 1 : e;
	}
	if (!any) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, NULL);
}

static void mask_hexdumps(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		_cleanup_free_ char *m = hexdumps_masked(json_string_value(j));

		if (m)
			json_string_set(j, m);
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			mask_hexdumps(v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			mask_hexdumps(v);
	}
}

static char *normalised(const json_t *j)
{
	_cleanup_json_ json_t *copy = json_deep_copy(j);
	_cleanup_free_ char *s = NULL;
	char *out, *o;

	if (!copy)
		return NULL;
	mask_hexdumps(copy);
	s = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		return NULL;
	out = o = malloc(strlen(s) + 1);
	if (!out)
		return NULL;
	for (const char *p = s; *p;) {
		static const char ptrval[] = "(____ptrval____)";
		const char *end;
		size_t n = 0;
		bool digit = false;

		if (startswith(p, ptrval)) {
			*o++ = '#';
			p += strlen(ptrval);
			continue;
		}
		if ((end = skip_code_line(p))) {
			o = stpcpy(o, "Code: #");
			p = end;
			continue;
		}
		if (p[0] == '0' && p[1] == 'x' && isxdigit((unsigned char)p[2])) {
			n = 2;
			digit = true;
		}
		while (isxdigit((unsigned char)p[n])) {
			digit |= isdigit((unsigned char)p[n]);
			n++;
		}
		if (digit) {
			*o++ = '#';
			p += n;
		} else if (n > 0) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else if (*p == ' ' && o > out && o[-1] == ' ')
			p++;
		else
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static bool same_request(const json_t *recorded, const json_t *request)
{
	_cleanup_free_ char *a = NULL, *b = NULL;

	if (json_equal(recorded, request))
		return true;
	a = normalised(recorded);
	b = normalised(request);
	return a && b && streq(a, b);
}

void llm_call_replay(struct llm_call *c)
{
	struct llm *l = c->llm;
	json_t *e = json_array_get(l->replay, l->replay_next);
	const char *body, *err;
	char *msg = NULL;
	int r;

	if (!e) {
		llm_call_complete(c, -ENOMSG, strdup_printf(
			"replay: request %u is beyond the end of the cassette (%zu exchanges)",
			l->exchange, json_array_size(l->replay)));
		return;
	}
	if (!same_request(json_object_get(e, "request"), c->request)) {
		_cleanup_free_ char *diff = first_difference(json_object_get(e, "request"),
							     c->request);

		llm_call_complete(c, -ENOMSG, strdup_printf(
			"replay: request %u diverges from the cassette %s", l->exchange,
			diff ?: ""));
		return;
	}
	l->replay_next++;
	c->attempts = 1;
	err = json_get_str(e, "error");
	body = json_get_str(e, "body");
	if (err || !body) {
		llm_call_complete(c, -EIO, strdup_printf("replay: recorded failure: %s", err ?: "no body"));
		return;
	}
	r = l->provider->decode(body, strlen(body), &c->response, &msg);
	if (r >= 0)
		c->response->replayed = true;
	llm_call_complete(c, r < 0 ? r : 0, msg);
}
