/* Title normalisation and crash types.  syzbot titles must not depend on
 * addresses, pids, line numbers or CPU numbers, so that one bug keeps one
 * title; the rules are those documented for syzkaller's corpus.  The scan
 * is hand-written (no regex) and linear in the title length. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "report-internal.h"

#define TITLE_MAX 120

/* A title's prefix decides its type; the first matching row wins. */
static const struct {
	const char *prefix;
	const char *type;
} types[] = {
	{ "KMSAN: uninit-value", "KMSAN-UNINIT-VALUE" },
	{ "KMSAN: kernel-infoleak-after-free", "KMSAN-USE-AFTER-FREE-READ" },
	{ "KMSAN: kernel-usb-infoleak-after-free", "KMSAN-USE-AFTER-FREE-READ" },
	{ "KMSAN: use-after-free", "KMSAN-USE-AFTER-FREE-READ" },
	{ "KMSAN: kernel-infoleak", "KMSAN-INFO-LEAK" },
	{ "KMSAN: kernel-usb-infoleak", "KMSAN-INFO-LEAK" },
	{ "KASAN: null-ptr-deref Read", "KASAN-NULL-POINTER-DEREFERENCE-READ" },
	{ "KASAN: null-ptr-deref Write", "KASAN-NULL-POINTER-DEREFERENCE-WRITE" },
	{ "KASAN: slab-use-after-free Write", "KASAN-USE-AFTER-FREE-WRITE" },
	{ "KASAN: use-after-free Write", "KASAN-USE-AFTER-FREE-WRITE" },
	{ "KASAN: slab-use-after-free Read", "KASAN-USE-AFTER-FREE-READ" },
	{ "KASAN: use-after-free", "KASAN-USE-AFTER-FREE-READ" }, /* at least a read */
	{ "KASAN: double-free or invalid-free", "KASAN-INVALID-FREE" },
	{ "KASAN: invalid-free", "KASAN-INVALID-FREE" },
	{ "KASAN: global-out-of-bounds Write", "KASAN-WRITE" },
	{ "KASAN: out-of-bounds Write", "KASAN-WRITE" },
	{ "KASAN: slab-out-of-bounds Write", "KASAN-WRITE" },
	{ "KASAN: stack-out-of-bounds Write", "KASAN-WRITE" },
	{ "KASAN: user-memory-access Write", "KASAN-WRITE" },
	{ "KASAN: vmalloc-out-of-bounds Write", "KASAN-WRITE" },
	{ "KASAN: wild-memory-access Write", "KASAN-WRITE" },
	{ "KASAN: invalid-access Write", "KASAN-WRITE" },
	{ "KASAN: global-out-of-bounds", "KASAN-READ" },
	{ "KASAN: invalid-access", "KASAN-READ" },
	{ "KASAN: out-of-bounds", "KASAN-READ" },
	{ "KASAN: slab-out-of-bounds", "KASAN-READ" },
	{ "KASAN: stack-out-of-bounds", "KASAN-READ" },
	{ "KASAN: unknown-crash Read", "KASAN-READ" },
	{ "KASAN: user-memory-access", "KASAN-READ" },
	{ "KASAN: vmalloc-out-of-bounds", "KASAN-READ" },
	{ "KASAN: wild-memory-access", "KASAN-READ" },
	{ "KFENCE: use-after-free read", "KFENCE-USE-AFTER-FREE-READ" },
	{ "KFENCE: use-after-free write", "KFENCE-USE-AFTER-FREE-WRITE" },
	{ "KFENCE: out-of-bounds read", "KFENCE-READ" },
	{ "KFENCE: invalid read", "KFENCE-READ" },
	{ "KFENCE: out-of-bounds write", "KFENCE-WRITE" },
	{ "KFENCE: invalid write", "KFENCE-WRITE" },
	{ "KFENCE: invalid free", "KFENCE-INVALID-FREE" },
	{ "KFENCE: memory corruption", "KFENCE-MEMORY-CORRUPTION" },
	{ "KCSAN: data-race", "KCSAN-DATARACE" },
	{ "KCSAN: assert", "KCSAN-ASSERT" },
	{ "BUG: unable to handle kernel NULL pointer dereference", "NULL-POINTER-DEREFERENCE" },
	{ "BUG: corrupted list", "MEMORY_SAFETY_BUG" },
	{ "BUG: unable to handle kernel paging request", "MEMORY_SAFETY_BUG" },
	{ "WARNING: refcount bug", "REFCOUNT_WARNING" },
	{ "UBSAN: array-index", "MEMORY_SAFETY_UBSAN" },
	/* lockdep and friends */
	{ "BUG: bad unlock balance in", "LOCKDEP" },
	{ "BUG: held lock freed in", "LOCKDEP" },
	{ "BUG: rwlock", "LOCKDEP" },
	{ "BUG: spinlock", "LOCKDEP" },
	{ "BUG: still has locks held in", "LOCKDEP" },
	{ "BUG: using", "LOCKDEP" }, /* ... in preemptible code */
	{ "WARNING: bad unlock balance in", "LOCKDEP" },
	{ "WARNING: held lock freed in", "LOCKDEP" },
	{ "WARNING: lock held", "LOCKDEP" },
	{ "WARNING: locking bug in", "LOCKDEP" },
	{ "WARNING: nested lock was not taken in", "LOCKDEP" },
	{ "WARNING: still has locks held in", "LOCKDEP" },
	{ "WARNING: suspicious RCU usage in", "LOCKDEP" },
	{ "inconsistent lock state in", "LOCKDEP" },
	{ "possible deadlock in", "LOCKDEP" },
	{ "BUG: lock held when returning to user space", "LOCKDEP" },
	{ "BUG: scheduling while atomic in", "ATOMIC_SLEEP" },
	{ "BUG: sleeping function called from invalid context in", "ATOMIC_SLEEP" },
	{ "memory leak in", "LEAK" },
	{ "BUG: bad usercopy in", "BUG" },
	{ "kernel BUG", "BUG" },
	{ "WARNING in", "WARNING" },
	/* printk()-style messages without a type of their own */
	{ "BUG: stack guard page was hit in", NULL },
	{ "WARNING: corrupted", NULL },
	{ "WARNING: kernel stack frame pointer has bad value", NULL },
	{ "WARNING: kernel stack regs has bad", NULL },
	{ "BUG: soft lockup in", "HANG" },
	{ "BUG: hard lockup in", "HANG" },
	{ "INFO: rcu detected stall in", "HANG" },
	{ "INFO: task can't die in", "HANG" },
	{ "INFO: task hung in", "HANG" },
	{ "Alignment trap in", "DoS" },
	{ "BUG: Object already free", "DoS" },
	{ "Internal error in", "DoS" },
	{ "PANIC: double fault", "DoS" },
	{ "Unhandled fault in", "DoS" },
	{ "VFS: Busy inodes after unmount (use-after-free)", "DoS" },
	{ "VFS: Close: file count is zero (use-after-free)", "DoS" },
	{ "divide error in", "DoS" },
	{ "general protection fault in", "DoS" },
	{ "go runtime error", "DoS" },
	{ "invalid opcode in", "DoS" },
	{ "kernel panic:", "DoS" },
	{ "kernel stack overflow", "DoS" },
	{ "panic:", "DoS" },
	{ "rust_kernel panicked", "DoS" },
	{ "stack segment fault in", "DoS" },
	{ "trusty:", "DoS" },
	{ "unregister_netdevice: waiting for DEV to become free", "DoS" },
	{ "unexpected kernel reboot", "REBOOT" },
	{ "lost connection to test machine", "LOST_CONNECTION" },
	{ "SYZFAIL", "SYZ_FAILURE" },
	{ "SYZFATAL:", "SYZ_FAILURE" },
	/* defaults */
	{ "WARNING:", "WARNING" },
	{ "BUG:", NULL },
	{ "INFO:", NULL },
	{ "KASAN:", "KASAN-UNKNOWN" },
	{ "KFENCE:", "KFENCE-UNKNOWN" },
	{ "KMSAN:", "KMSAN-UNKNOWN" },
	{ "KCSAN:", "KCSAN-UNKNOWN" },
	{ "UBSAN:", "UBSAN" },
};

const char *title_type(const char *title)
{
	if (!title)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (startswith(title, types[i].prefix))
			return types[i].type;
	return NULL;
}

/* The title is rewritten by an ordered list of passes, each one rule of
 * syzkaller's dynamic title replacements (pkg/report/report.go), applied
 * to the whole title before the next one starts: the order matters, e.g.
 * "file.c:1234567" gets ADDR before LINE could see it.  Every pass is a
 * hand-written linear scan whose single run gives what applying the rule
 * until nothing changes gives.  Only the first TITLE_INPUT_MAX bytes of a
 * title are looked at. */
#define TITLE_INPUT_MAX (4 * REPORT_LINE_MAX)
#define TITLE_WORK_MAX (8 * TITLE_INPUT_MAX)

struct str {
	const char *s;
	size_t n;
};

static bool is_word(unsigned char c)
{
	return isalnum(c) || c == '_';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t run(const char *s, size_t n, bool (*in)(unsigned char))
{
	size_t i = 0;

	while (i < n && in((unsigned char)s[i]))
		i++;
	return i;
}

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && memcmp(s, p, k) == 0;
}

/* "NAME" + "[.]digits[(/|:)digits]": the length of the numbered tail. */
static size_t numbered_tail(const char *s, size_t n, bool dot)
{
	size_t i = dot && n > 0 && s[0] == '.' ? 1 : 0, d;

	d = run(s + i, n - i, is_digit);
	if (d == 0)
		return 0;
	i += d;
	if (i < n && (s[i] == '/' || s[i] == ':') && (d = run(s + i + 1, n - i - 1, is_digit)) > 0)
		i += 1 + d;
	return i;
}

/* syz-executor.3/1234 -> syz-executor, syzkaller012:3 -> syzkaller */
static int pass_numbered(struct buf *b, const char *s, size_t n, const char *name, bool dot)
{
	size_t k = strlen(name);

	for (size_t i = 0; i < n;) {
		if (has_prefix(s + i, n - i, name)) {
			size_t j = i + k, t;

			/* the replacement may be followed by another tail */
			while ((t = numbered_tail(s + j, n - j, dot)) > 0)
				j += t;
			if (j > i + k) {
				buf_append_trunc(b, name, k);
				i = j;
				continue;
			}
		}
		buf_append_trunc(b, s + i, 1);
		i++;
	}
	return 0;
}

static int pass_executor(struct buf *b, const char *s, size_t n)
{
	return pass_numbered(b, s, n, "syz-executor", true);
}

static int pass_syzkaller(struct buf *b, const char *s, size_t n)
{
	return pass_numbered(b, s, n, "syzkaller", false);
}

/* A non-alphanumeric byte, then "[0x]" and 6+ lower-case hex digits. */
static int pass_addr(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];

		buf_append_trunc(b, s + i, 1);
		i++;
		if (isalnum(c) && c < 0x80)
			continue;
		if (has_prefix(s + i, n - i, "0x") && run(s + i + 2, n - i - 2, is_lower_hex) >= 6) {
			buf_puts(b, "ADDR");
			i += 2 + run(s + i + 2, n - i - 2, is_lower_hex);
		} else if (run(s + i, n - i, is_lower_hex) >= 6) {
			buf_puts(b, "ADDR");
			i += run(s + i, n - i, is_lower_hex);
		}
	}
	return 0;
}

/* Four dot-separated groups of 1-3 digits, anywhere: leftmost, with each
 * group as long as still lets the rest match. */
static size_t ipv4_at(const char *s, size_t n, int group)
{
	size_t d = MIN(run(s, n, is_digit), (size_t)3);

	for (; d >= 1; d--) {
		size_t rest;

		if (group == 3)
			return d;
		if (d >= n || s[d] != '.')
			continue;
		rest = ipv4_at(s + d + 1, n - d - 1, group + 1);
		if (rest)
			return d + 1 + rest;
	}
	return 0;
}

static int pass_ip(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t m = ipv4_at(s + i, n - i, 0);

		if (m) {
			buf_puts(b, "IP");
			i += m;
		} else {
			buf_append_trunc(b, s + i, 1);
			i++;
		}
	}
	return 0;
}

/* ".ext" followed by ":123[:45...]": the numbers become one ":LINE". */
static int pass_line(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t w = s[i] == '.' ? run(s + i + 1, n - i - 1, is_word) : 0;
		size_t j = i + 1 + w, d;
		bool any = false;

		while (w > 0 && j + 1 < n && s[j] == ':' && (d = run(s + j + 1, n - j - 1, is_digit)) > 0) {
			j += 1 + d;
			any = true;
		}
		if (any) {
			buf_append_trunc(b, s + i, 1 + w);
			buf_puts(b, ":LINE");
			i = j;
		} else {
			buf_append_trunc(b, s + i, 1);
			i++;
		}
	}
	return 0;
}

static bool is_symbol(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '.';
}

static bool is_lower_alnum(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z');
}

/* "+0x1a/0x2b": the length, 0 if s does not start with one. */
static size_t offset_at(const char *s, size_t n)
{
	size_t a, c;

	if (!has_prefix(s, n, "+0x"))
		return 0;
	a = run(s + 3, n - 3, is_lower_alnum);
	if (a == 0 || !has_prefix(s + 3 + a, n - 3 - a, "/0x"))
		return 0;
	c = run(s + 6 + a, n - 6 - a, is_lower_alnum);
	return c ? 6 + a + c : 0;
}

/* "func+0x1a/0x2b" -> "func": after a symbol that has a letter followed by
 * at least one more symbol byte.  Dropping an offset joins the symbol with
 * what follows ("a+0x1/0x2b+0x3/0x4" -> "ab"), so the symbol is the one
 * written so far. */
static int pass_offset(struct buf *b, const char *s, size_t n)
{
	size_t sym_len = 0, letter = SIZE_MAX; /* the symbol written so far */

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t m;

		if (letter != SIZE_MAX && letter + 1 < sym_len && (m = offset_at(s + i, n - i)) > 0) {
			i += m;
			continue;
		}
		buf_append_trunc(b, s + i, 1);
		i++;
		if (!is_symbol(c)) {
			sym_len = 0;
			letter = SIZE_MAX;
			continue;
		}
		if (letter == SIZE_MAX && is_alpha(c))
			letter = sym_len;
		sym_len++;
	}
	return 0;
}

static int pass_cpu(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t d;

		if (has_prefix(s + i, n - i, "CPU#") && (d = run(s + i + 4, n - i - 4, is_digit)) > 0) {
			buf_puts(b, "CPU");
			i += 4 + d;
			/* "CPU#1#2": the replacement meets the next number */
			while (i < n && s[i] == '#' && (d = run(s + i + 1, n - i - 1, is_digit)) > 0)
				i += 1 + d;
		} else {
			buf_append_trunc(b, s + i, 1);
			i++;
		}
	}
	return 0;
}

/* A whole number between two non-word bytes (or the end) is NUM; a run
 * of 7+ digits is NUM wherever it is (shorter ones may be part of a name:
 * cfg80211, nl802154). */
static int pass_num(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t d = run(s + i, n - i, is_digit);

		if (d == 0) {
			buf_append_trunc(b, s + i, 1);
			i++;
			continue;
		}
		if (d >= 7 || (i > 0 && !is_word((unsigned char)s[i - 1]) &&
			       (i + d == n || !is_word((unsigned char)s[i + d]))))
			buf_puts(b, "NUM");
		else
			buf_append_trunc(b, s + i, d);
		i += d;
	}
	return 0;
}

static int (*const passes[])(struct buf *b, const char *s, size_t n) = {
	pass_executor, pass_syzkaller, pass_addr, pass_ip, pass_line, pass_offset, pass_cpu, pass_num,
};

static char *normalize(const char *t)
{
	_cleanup_free_ char *cur = strndup(t, TITLE_INPUT_MAX);
	size_t n;

	if (!cur)
		return NULL;
	n = strlen(cur);
	for (size_t p = 0; p < ARRAY_SIZE(passes); p++) {
		struct buf b = BUF_INIT(TITLE_WORK_MAX);

		if (passes[p](&b, cur, n) < 0 || buf_append(&b, "", 0) < 0) {
			buf_free(&b);
			return NULL;
		}
		free(cur);
		cur = buf_steal(&b, &n);
		if (!cur)
			return NULL;
	}
	return TAKE_PTR(cur);
}

/* Keeps printable ASCII, folds tabs and runs of spaces, cuts at TITLE_MAX. */
static char *sanitize(const char *t)
{
	size_t n = strlen(t), j = 0;
	char *out = malloc(MIN(n, (size_t)TITLE_MAX) + 1);
	char prev = ' ';

	if (!out)
		return NULL;
	for (size_t i = 0; i < n && i < TITLE_MAX; i++) {
		char c = t[i] == '\t' ? ' ' : t[i];

		if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
			continue;
		if (c == ' ' && prev == ' ')
			continue;
		out[j++] = c;
		prev = c;
	}
	while (j > 0 && out[j - 1] == ' ')
		j--;
	out[j] = 0;
	return out;
}

char *title_normalize(const char *t)
{
	_cleanup_free_ char *n = normalize(t);

	return n ? sanitize(n) : NULL;
}

int report_normalize_title(const char *t, char **ret_title)
{
	char *s = title_normalize(t);

	if (!s)
		return -ENOMEM;
	*ret_title = s;
	return 0;
}
