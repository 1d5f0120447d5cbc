/* Unit tests of common/: buffers, string helpers, config, subprocesses. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/proc.h"
#include "common/slot.h"
#include <sys/wait.h>
#include "common/strutil.h"
#include "common/url.h"

static void test_buf_bounds(void **state)
{
	_cleanup_buf_ struct buf b = BUF_INIT(8);

	assert_int_equal(buf_puts(&b, "1234"), 0);
	assert_int_equal(buf_puts(&b, "5678"), 0);
	assert_int_equal(buf_puts(&b, "9"), -E2BIG);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.data, "12345678");
	buf_reset(&b);
	assert_int_equal(buf_append_trunc(&b, "abcdefghij", 10), 0);
	assert_true(b.truncated);
	assert_string_equal(b.data, "abcdefgh");
	assert_int_equal(buf_printf(&b, "%d", 1), -E2BIG);
}

static void test_escape(void **state)
{
	_cleanup_free_ char *a = str_escape("a\nb\x01\xff", 5, 100);
	_cleanup_free_ char *b = str_escape("abcdef", 6, 3);

	assert_string_equal(a, "a\\nb\\x01\\xff");
	assert_string_equal(b, "abc...");
	{
		/* lines kept, control bytes and NULs replaced, only the tail */
		_cleanup_free_ char *t = str_printable_tail("x\nab\tc\x1b[2J\0z\xff\n", 14, 100);
		_cleanup_free_ char *u = str_printable_tail("0123456789", 10, 4);

		assert_string_equal(t, "x\nab\tc?[2J?z?\n");
		assert_string_equal(u, "6789");
	}
}

static void test_parse(void **state)
{
	uint64_t v;
	bool bl;

	assert_int_equal(parse_duration("90", &v), 0);
	assert_int_equal(v, 90000000);
	assert_int_equal(parse_duration("5min", &v), 0);
	assert_int_equal(v, 300000000);
	assert_int_equal(parse_duration("250ms", &v), 0);
	assert_int_equal(v, 250000);
	assert_int_equal(parse_duration("5 parsecs", &v), -EINVAL);
	assert_int_equal(parse_duration("-1s", &v), -EINVAL);
	assert_int_equal(parse_size("10M", &v), 0);
	assert_int_equal(v, 10 * 1024 * 1024);
	assert_int_equal(parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(parse_bool("Yes", &bl), 0);
	assert_true(bl);
	assert_int_equal(parse_bool("maybe", &bl), -EINVAL);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/kfix-test-conf-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static int load_text(const char *text, struct config **ret, char **ret_err)
{
	_cleanup_free_ char *path = write_tmp(text);
	int r = config_load(path, ret, ret_err);

	unlink(path);
	return r;
}

static void test_config_good(void **state)
{
	struct config *c = NULL;
	char *err = NULL, **names = NULL, **allow = NULL;
	const char *s;
	int64_t i;
	uint64_t d;

	assert_int_equal(load_text("[kfix]\n\tworkers = 4\n\tlease = 2min\n"
				   "[tree \"linux\"]\n\turl = https://x/y.git\n"
				   "\tallow-commands = a@x\n\tallow-commands = b@x\n"
				   "[tree \"next\"]\n\turl = https://x/n.git\n",
				   &c, &err), 0);
	assert_null(err);
	assert_int_equal(config_get_int(c, "kfix", NULL, "workers", &i), 0);
	assert_int_equal(i, 4);
	assert_int_equal(config_get_duration(c, "kfix", NULL, "lease", &d), 0);
	assert_int_equal(d, 120000000);
	/* unset key: the schema default */
	assert_int_equal(config_get_int(c, "kfix", NULL, "job-attempts", &i), 0);
	assert_int_equal(i, 3);
	assert_int_equal(config_get_string(c, "tree", "linux", "branch", &s), 0);
	assert_string_equal(s, "master");
	assert_int_equal(config_get_string(c, "tree", "next", "url", &s), 0);
	assert_string_equal(s, "https://x/n.git");
	assert_int_equal(config_subsections(c, "tree", &names), 0);
	assert_int_equal(strv_len(names), 2);
	assert_string_equal(names[0], "linux");
	assert_int_equal(config_get_list(c, "tree", "linux", "allow-commands", &allow), 0);
	assert_int_equal(strv_len(allow), 2);
	assert_string_equal(allow[1], "b@x");
	strv_free(allow);
	/* an unset list: its schema default, or empty when it has none */
	assert_int_equal(config_get_list(c, "kfix", NULL, "text-hosts", &allow), 0);
	assert_int_equal(strv_len(allow), 1);
	assert_string_equal(allow[0], "syzkaller.appspot.com");
	strv_free(allow);
	assert_int_equal(config_get_list(c, "tree", "next", "allow-commands", &allow), 0);
	assert_int_equal(strv_len(allow), 0);
	strv_free(names);
	strv_free(allow);
	config_free(c);
}

static void expect_error(const char *text, const char *needle)
{
	struct config *c = NULL;
	char *err = NULL;

	assert_true(load_text(text, &c, &err) < 0);
	assert_null(c);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	free(err);
}

/* Every path under [kfix] state-dir comes from one function: relative
 * state-dirs resolve against the config file's folder, the default is
 * the schema's, and a sub-path cannot leave the folder by being absolute. */
static void test_state_path(void **state)
{
	struct config *c = NULL;
	char *err = NULL, *p = NULL;

	(void)state;
	assert_int_equal(load_text("[kfix]\n\tstate-dir = /srv/kfix\n", &c, &err), 0);
	assert_int_equal(config_state_path(c, NULL, &p), 0);
	assert_string_equal(p, "/srv/kfix");
	free(p);
	assert_int_equal(config_state_path(c, "jobs/12", &p), 0);
	assert_string_equal(p, "/srv/kfix/jobs/12");
	free(p);
	p = NULL;
	assert_int_equal(config_state_path(c, "/etc/passwd", &p), -EINVAL);
	assert_null(p);
	config_free(c);

	assert_int_equal(load_text("[kfix]\n\tworkers = 1\n", &c, &err), 0);
	assert_int_equal(config_state_path(c, "kfix.db", &p), 0);
	assert_string_equal(p, "/var/lib/kfix/kfix.db");
	free(p);
	config_free(c);
}

static void test_config_errors(void **state)
{
	expect_error("[kfix]\n\tworkerz = 4\n", ":2: unknown key 'kfix.workerz'");
	expect_error("[kfix]\n\tworkers = 0\n", ":2: key 'kfix.workers': value '0' out of range");
	expect_error("[kfix]\n\tworkers = many\n", "not a whole number");
	expect_error("[bogus]\n\tx = 1\n", ":1: unknown section [bogus]");
	expect_error("[tree]\n\turl = x\n", "needs a name");
	expect_error("[kfix]\n\tlog-level = loud\n", "must be one of");
	expect_error("[kfix\n", "missing ']' in section header");
	expect_error("\n\n[tree \"a\"]\n\tbranch = x\n\tpriority = 1e9\n", ":5:");
	{
		struct config *c = NULL;
		char *err = NULL;

		assert_int_equal(config_load("/nonexistent/kfix.conf", &c, &err), -ENOENT);
		assert_non_null(strstr(err, "/nonexistent/kfix.conf"));
		free(err);
	}
}

static void test_config_secret(void **state)
{
	_cleanup_free_ char *dir = strdup("/tmp/kfix-cred-XXXXXX"), *p = NULL;
	struct config *c = NULL;
	char *err = NULL, *v = NULL;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&p, "%s/llm-key", dir) > 0);
	assert_int_equal(write_file_atomic(p, "sk-123\n", 7, 0600), 0);
	setenv("CREDENTIALS_DIRECTORY", dir, 1);
	assert_int_equal(load_text("[llm \"x\"]\n\tapi-key = secret:llm-key\n"
				   "[llm \"y\"]\n\tapi-key = secret:missing\n",
				   &c, &err), 0);
	assert_int_equal(config_get_secret(c, "llm", "x", "api-key", &v), 0);
	assert_string_equal(v, "sk-123");
	free(v);
	assert_int_equal(config_get_secret(c, "llm", "y", "api-key", &v), -ENOENT);
	unsetenv("CREDENTIALS_DIRECTORY");
	assert_int_equal(config_get_secret(c, "llm", "x", "api-key", &v), -ENOKEY);
	config_free(c);
	expect_error("[llm \"x\"]\n\tapi-key = secret:../etc/shadow\n", "contains '/'");
	rm_rf(dir);
}

static void count_output(void *userdata, const char *data, size_t len)
{
	(void)data;
	*(size_t *)userdata += len;
}

static void test_proc(void **state)
{
	char *const echo[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	char *const slow[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	char *const loud[] = { "sh", "-c", "yes | head -c 100000", NULL };
	char *const cat[] = { "cat", NULL };
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct proc_result r;
	size_t seen = 0;

	assert_int_equal(proc_run(echo, &o, &r), 0);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.output, "out\nerr\n");
	proc_result_free(&r);

	o.timeout_usec = 200000;
	assert_int_equal(proc_run(slow, &o, &r), 0);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, 9);
	proc_result_free(&r);

	o = PROC_OPTS_DEFAULT;
	o.output_max = 1000;
	o.on_output = count_output;
	o.userdata = &seen;
	assert_int_equal(proc_run(loud, &o, &r), 0);
	assert_int_equal(r.output_len, 1000);
	assert_true(r.output_truncated);
	/* The follower sees everything, beyond the captured cap. */
	assert_int_equal(seen, 100000);
	proc_result_free(&r);

	o = PROC_OPTS_DEFAULT;
	o.stdin_data = "hello";
	o.stdin_len = 5;
	assert_int_equal(proc_run(cat, &o, &r), 0);
	assert_string_equal(r.output, "hello");
	proc_result_free(&r);
}

static void test_read_bounded(void **state)
{
	_cleanup_free_ char *path = write_tmp("0123456789");
	char *data = NULL;
	size_t len;

	assert_int_equal(read_file_bounded(path, 5, &data, &len), -EFBIG);
	assert_int_equal(read_file_bounded(path, 10, &data, &len), 0);
	assert_int_equal(len, 10);
	free(data);
	unlink(path);
}

/* Every key the schema knows is documented in kfix.conf(5) and in the
 * shipped example, so the two cannot drift from the code. */
static void test_schema_documented(void **state)
{
	const char *top = getenv("top_srcdir");
	_cleanup_free_ char *man = NULL, *example = NULL, *p1 = NULL, *p2 = NULL;
	size_t len;

	if (!top)
		skip();
	assert_true(asprintf(&p1, "%s/doc/kfix.conf.5.in", top) > 0);
	assert_true(asprintf(&p2, "%s/systemd/kfix.conf.example.in", top) > 0);
	assert_int_equal(read_file_bounded(p1, 1 << 20, &man, &len), 0);
	assert_int_equal(read_file_bounded(p2, 1 << 20, &example, &len), 0);
	for (const struct config_key *k = config_schema; k->section; k++) {
		char roff[128], ex[128];
		size_t j = 0;

		for (const char *c = k->key; *c && j < sizeof(roff) - 3; c++) {
			if (*c == '-')
				roff[j++] = '\\';
			roff[j++] = *c;
		}
		roff[j] = '\0';
		snprintf(ex, sizeof(ex), "\t%s = ", k->key);
		if (!strstr(man, roff))
			fail_msg("%s.%s missing from kfix.conf.5", k->section, k->key);
		if (!strstr(example, ex))
			fail_msg("%s.%s missing from kfix.conf.example", k->section, k->key);
	}
}

/* Slots bound concurrency across processes and come back when a holder
 * dies without releasing. */
static void test_slots(void **state)
{
	char dir[] = "/tmp/kfix-slot-XXXXXX";
	struct slot *a = NULL, *b = NULL, *c = NULL;
	int busy = -1, status;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(slot_acquire(dir, "build", 2, 0, &a), 0);
	assert_int_equal(slot_acquire(dir, "build", 2, 0, &b), 0);
	assert_int_not_equal(slot_index(a), slot_index(b));
	assert_int_equal(slot_acquire(dir, "build", 2, 0, &c), -EAGAIN);
	assert_int_equal(slot_acquire(dir, "build", 2, 200000, &c), -EAGAIN);
	assert_int_equal(slot_busy(dir, "build", 2, &busy), 0);
	assert_int_equal(busy, 2);
	/* other names are other resources */
	assert_int_equal(slot_acquire(dir, "vm", 1, 0, &c), 0);
	slot_release(c);
	slot_release(a);
	assert_int_equal(slot_busy(dir, "build", 2, &busy), 0);
	assert_int_equal(busy, 1);
	/* a holder that is killed frees its slot */
	slot_release(b);
	pid = fork();
	if (pid == 0) {
		struct slot *x = NULL, *y = NULL;

		if (slot_acquire(dir, "build", 2, 0, &x) < 0 ||
		    slot_acquire(dir, "build", 2, 0, &y) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	for (int i = 0; i < 100 && busy != 2; i++) {
		usleep(20000);
		slot_busy(dir, "build", 2, &busy);
	}
	assert_int_equal(busy, 2);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_int_equal(slot_acquire(dir, "build", 2, 1000000, &a), 0);
	slot_release(a);
	assert_int_equal(slot_acquire(dir, "../x", 2, 0, &a), -EINVAL);
	rm_rf(dir);
}

#define FFFD "\xef\xbf\xbd"

/* utf8_repair(in) is want, and utf8_valid agrees on whether in was. */
static void check_repair(const char *in, size_t len, const char *want, size_t want_len)
{
	_cleanup_free_ char *out = NULL;
	size_t n = 0;

	assert_int_equal(utf8_repair(in, len, &out, &n), 0);
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, n);
	assert_int_equal(out[n], '\0');
	assert_int_equal(utf8_valid(in, len), len == want_len && memcmp(in, want, len) == 0);
}
#define REPAIR(in, want) check_repair(in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_utf8_invalid(void **state)
{
	REPAIR("a\xff" "b\xfe", "a" FFFD "b" FFFD);
	REPAIR("\x80x\xbf", FFFD "x" FFFD);	      /* lone continuation bytes */
	REPAIR("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD); /* no such lead byte */
	REPAIR("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* past U+10FFFF */
	REPAIR("\xc3(", FFFD "(");		      /* continuation missing */
	REPAIR("\xe2\x82x", FFFD FFFD "x");
}

static void test_utf8_overlong(void **state)
{
	REPAIR("\xc0\xaf", FFFD FFFD);			 /* '/' in two bytes */
	REPAIR("\xc1\xbf", FFFD FFFD);
	REPAIR("\xe0\x80\xaf", FFFD FFFD FFFD);		 /* '/' in three */
	REPAIR("\xe0\x9f\xbf", FFFD FFFD FFFD);		 /* U+07FF in three */
	REPAIR("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD); /* '/' in four */
	REPAIR("\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD); /* U+FFFF in four */
}

/* A cut never ends inside a character: "a€b" is a, 3 bytes of €, b. */
static void test_utf8_cut(void **state)
{
	static const char s[] = "a\xe2\x82\xac" "b";

	(void)state;
	assert_int_equal(utf8_cut(s, 5, 10), 5);
	assert_int_equal(utf8_cut(s, 5, 5), 5);
	assert_int_equal(utf8_cut(s, 5, 4), 4);
	assert_int_equal(utf8_cut(s, 5, 3), 1);
	assert_int_equal(utf8_cut(s, 5, 2), 1);
	assert_int_equal(utf8_cut(s, 5, 1), 1);
	assert_int_equal(utf8_cut(s, 5, 0), 0);
}

static void test_utf8_surrogates(void **state)
{
	REPAIR("\xed\xa0\x80", FFFD FFFD FFFD); /* U+D800 */
	REPAIR("\xed\xbf\xbf", FFFD FFFD FFFD); /* U+DFFF */
	/* a CESU-8 pair: two surrogates that would make U+1F600 */
	REPAIR("\xed\xa0\xbd\xed\xb8\x80", FFFD FFFD FFFD FFFD FFFD FFFD);
}

static void test_utf8_truncated(void **state)
{
	REPAIR("ok\xc3", "ok" FFFD);
	REPAIR("ok\xe2\x82", "ok" FFFD FFFD);
	REPAIR("ok\xf0\x9f\x98", "ok" FFFD FFFD FFFD);
	/* the length bounds the read even when a NUL follows */
	check_repair("\xe2\x82\xac", 2, FFFD FFFD, 6);
	assert_int_equal(utf8_seq_len("\xe2\x82\xac", 2), 0);
	assert_int_equal(utf8_seq_len("", 0), 0);
}

static void test_utf8_valid_kept(void **state)
{
	static const char text[] =
		"plain ASCII, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80, " FFFD ", "
		"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf "
		"\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf";

	REPAIR(text, text);
	REPAIR("", "");
	check_repair("a\0b", 3, "a\0b", 3); /* NUL is valid UTF-8 */
	assert_int_equal(utf8_seq_len("\xf4\x8f\xbf\xbf", 4), 4);
	assert_int_equal(utf8_seq_len("\xe2\x82\xac", 3), 3);
	assert_int_equal(utf8_seq_len("A", 1), 1);
}

/* The validator accepts exactly what jansson accepts, over every lead
 * and second byte. */
static void test_utf8_agrees_with_jansson(void **state)
{
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			for (size_t len = 1; len <= 4; len++) {
				const char buf[4] = { (char)a, (char)b, (char)0x80, (char)0xbf };
				json_t *j = json_stringn(buf, len);

				assert_int_equal(j != NULL, utf8_valid(buf, len));
				json_decref(j);
			}
}

/* Any bytes become a JSON string that a parser takes back. */
static void test_json_text(void **state)
{
	static const char bad[] = "t\xc3\xa9st \xff \xc0\xaf \xed\xa0\x80 \xf0\x9f\x98";
	static const char good[] = "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac";
	_cleanup_json_ json_t *o = json_pack("{s:o, s:o, s:o, s:o}", "bad",
					     json_str_or_null(bad), "good", json_str_or_null(good),
					     "nul", json_text("a\0\xff", 3), "none",
					     json_str_or_null(NULL));
	_cleanup_free_ char *dump = NULL;
	_cleanup_json_ json_t *back = NULL;
	json_error_t err;

	assert_non_null(o);
	dump = json_dumps(o, JSON_COMPACT);
	assert_non_null(dump);
	back = json_loads(dump, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	assert_non_null(back);
	assert_string_equal(json_get_str(back, "bad"),
			    "t\xc3\xa9st " FFFD " " FFFD FFFD " " FFFD FFFD FFFD " " FFFD FFFD FFFD);
	assert_string_equal(json_get_str(back, "good"), good);
	assert_int_equal(json_string_length(json_object_get(back, "nul")), 5);
	assert_memory_equal(json_string_value(json_object_get(back, "nul")), "a\0" FFFD, 5);
	assert_true(json_is_null(json_object_get(back, "none")));
	{
		_cleanup_free_ char *copy = json_get_strdup(back, "good");

		assert_string_equal(copy, good);
		assert_ptr_not_equal(copy, json_get_str(back, "good"));
		assert_null(json_get_strdup(back, "none"));	/* null, not a string */
		assert_null(json_get_strdup(back, "absent"));
	}
}

static void test_strdup_printf(void **state)
{
	_cleanup_free_ char *s = NULL, *empty = NULL, *big = NULL;
	char long_arg[5000];

	(void)state;
	s = strdup_printf("edit %zu: %s not found in %s", (size_t)3, "foo", "a.c");
	assert_string_equal(s, "edit 3: foo not found in a.c");
	empty = strdup_printf("%s", "");
	assert_string_equal(empty, "");
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	big = strdup_printf("[%s]", long_arg);
	assert_int_equal(strlen(big), sizeof(long_arg) + 1);
	assert_int_equal(big[0], '[');
	assert_int_equal(big[sizeof(long_arg)], ']');
}

/* Every URL kfix takes goes through one parser: hosts lower-case and
 * without IPv6 brackets, credentials and ports seen, junk refused. */
static void test_url(void **state)
{
	struct url u;
	char big[600];

	(void)state;
	assert_int_equal(url_parse("HTTPS://Syzkaller.AppSpot.com/text?tag=x", &u), 0);
	assert_string_equal(u.scheme, "https");
	assert_string_equal(u.host, "syzkaller.appspot.com");
	assert_string_equal(u.user, "");
	assert_false(u.password);
	assert_true(u.query);
	assert_int_equal(u.port, 0);

	assert_int_equal(url_parse("ssh://git@[::1]:2222/", &u), 0);
	assert_string_equal(u.user, "git");
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 2222);
	assert_string_equal(u.path, "/");
	assert_true(url_is_loopback(&u));

	assert_int_equal(url_parse("ssh://builder", &u), 0);
	assert_string_equal(u.path, "/");
	assert_int_equal(url_parse("http://us%40er:secret@host/", &u), 0);
	assert_string_equal(u.user, "us@er");
	assert_true(u.password);

	assert_int_equal(url_parse("smtp://127.0.0.1:2525", &u), 0);
	assert_true(url_is_loopback(&u));
	assert_int_equal(url_parse("smtp://LocalHost", &u), 0);
	assert_true(url_is_loopback(&u));
	assert_int_equal(url_parse("smtp://127.0.0.1.example.org", &u), 0);
	assert_false(url_is_loopback(&u));
	assert_int_equal(url_parse("smtp://user@127.0.0.1/", &u), 0);
	assert_true(url_is_loopback(&u));
	assert_int_equal(url_parse("smtp://10.0.0.1", &u), 0);
	assert_false(url_is_loopback(&u));

	assert_int_equal(url_parse("not a url", &u), -EINVAL);
	assert_int_equal(url_parse("http://", &u), -EINVAL);
	assert_int_equal(url_parse("http://host:99999/", &u), -EINVAL);
	assert_int_equal(url_parse("http://ho st/", &u), -EINVAL);
	assert_int_equal(url_parse(NULL, &u), -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "http://", 7);
	assert_int_equal(url_parse(big, &u), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_bounds),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_overlong),
		cmocka_unit_test(test_utf8_cut),
		cmocka_unit_test(test_utf8_surrogates),
		cmocka_unit_test(test_utf8_truncated),
		cmocka_unit_test(test_utf8_valid_kept),
		cmocka_unit_test(test_utf8_agrees_with_jansson),
		cmocka_unit_test(test_json_text),
		cmocka_unit_test(test_strdup_printf),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_config_good),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_secret),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_read_bounded),
		cmocka_unit_test(test_schema_documented),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_state_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
