/* The dashboard's escaping: every class of byte a stranger can put in a
 * title or a mail, and html_fmt's conversions. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/html.h"

static struct buf out;

static char *esc(const char *s, size_t n)
{
	buf_free(&out);
	out = BUF_INIT(4096);
	assert_int_equal(html_escape(&out, s, n), 0);
	return out.data ?: "";
}

static void test_specials(void **state)
{
	(void)state;
	assert_string_equal(esc("<script>alert('x')</script>", 27),
			    "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
	assert_string_equal(esc("a & \"b\"", 7), "a &amp; &quot;b&quot;");
	assert_string_equal(esc("plain text", 10), "plain text");
	/* an already escaped text is escaped again, not trusted */
	assert_string_equal(esc("&lt;", 4), "&amp;lt;");
}

static void test_bytes(void **state)
{
	(void)state;
	/* tab and newline stay; other controls, DEL and NUL do not */
	assert_string_equal(esc("a\tb\nc", 5), "a\tb\nc");
	assert_string_equal(esc("a\rb\x1b[31m\x7f", 9), "a\xef\xbf\xbd" "b\xef\xbf\xbd[31m\xef\xbf\xbd");
	assert_string_equal(esc("a\0b", 3), "a\xef\xbf\xbd" "b");
	/* valid UTF-8 is kept; broken, overlong and surrogate sequences are not */
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x9c\x93", 9), "caf\xc3\xa9 \xe2\x9c\x93");
	assert_string_equal(esc("\xc3", 1), "\xef\xbf\xbd");
	assert_string_equal(esc("\xc0\xbc", 2), "\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(esc("\xed\xa0\x80", 3), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	/* a broken lead byte does not swallow the '<' after it */
	assert_string_equal(esc("\xe2<", 2), "\xef\xbf\xbd&lt;");
}

static void test_every_byte(void **state)
{
	char in[256];

	(void)state;
	for (int i = 0; i < 256; i++)
		in[i] = (char)i;
	const char *e = esc(in, sizeof(in));

	/* whatever comes in, no markup character leaves unescaped */
	assert_null(strpbrk(e, "<>\"'"));
	for (const char *a = strchr(e, '&'); a; a = strchr(a + 1, '&'))
		assert_true(!strncmp(a, "&amp;", 5) || !strncmp(a, "&lt;", 4) ||
			    !strncmp(a, "&gt;", 4) || !strncmp(a, "&quot;", 6) ||
			    !strncmp(a, "&#39;", 5));
}

static void test_fmt(void **state)
{
	struct buf b = BUF_INIT(4096);

	(void)state;
	assert_int_equal(html_fmt(&b, "<td>%s</td><td>%H</td>%d %u %D %F %%", "<b>", "<i>x</i>",
				  -3, 7u, (int64_t)1 << 40, 0.125), 0);
	assert_string_equal(b.data, "<td>&lt;b&gt;</td><td><i>x</i></td>-3 7 1099511627776 0.12 %");
	buf_reset(&b);
	assert_int_equal(html_fmt(&b, "?tree=%q&x=%s", "a b&c=<d>/é", NULL), 0);
	assert_string_equal(b.data, "?tree=a%20b%26c%3D%3Cd%3E%2F%C3%A9&x=");
	buf_reset(&b);
	assert_int_equal(html_fmt(&b, "%x", 1), -EINVAL);
	assert_int_equal(html_fmt(&b, "ends in %"), -EINVAL);
	buf_free(&b);
}

static void test_bounded(void **state)
{
	struct buf b = BUF_INIT(16);

	(void)state;
	/* a page is bounded: escaping that grows the text past it fails */
	assert_int_equal(html_escape(&b, "<<<<<<<<", 8), -E2BIG);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specials), cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_every_byte), cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_bounded),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	buf_free(&out);
	return r;
}
