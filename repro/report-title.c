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

static bool is_word(unsigned char c)
{
	return isalnum(c) || c == '_';
}

static size_t span(const char *s, const char *set)
{
	return strspn(s, set);
}

#define DIGITS "0123456789"
#define HEX "0123456789abcdef"

/* "syz-executor.3/1234" -> "syz-executor", "syzkaller012:3" -> "syzkaller". */
static size_t match_executor(const char *s, const char *name, size_t *ret_skip)
{
	size_t n = strlen(name), i, d;

	if (strncmp(s, name, n) != 0)
		return 0;
	i = n;
	if (streq(name, "syz-executor") && s[i] == '.' && isdigit((unsigned char)s[i + 1]))
		i++;
	d = span(s + i, DIGITS);
	if (d == 0)
		return 0;
	i += d;
	if ((s[i] == '/' || s[i] == ':') && (d = span(s + i + 1, DIGITS)) > 0)
		i += 1 + d;
	*ret_skip = i;
	return n;
}

/* "func+0x1a/0x2b": returns the length of the "+0x../0x.." tail. */
static size_t match_offset(const char *s)
{
	size_t a, b;

	if (strncmp(s, "+0x", 3) != 0)
		return 0;
	a = span(s + 3, HEX "ghijklmnopqrstuvwxyz");
	if (a == 0 || strncmp(s + 3 + a, "/0x", 3) != 0)
		return 0;
	b = span(s + 6 + a, HEX "ghijklmnopqrstuvwxyz");
	return b ? 6 + a + b : 0;
}

/* 1.2.3.4: returns its length. */
static size_t match_ipv4(const char *s)
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		size_t d = span(s + i, DIGITS);

		if (d == 0 || d > 3)
			return 0;
		i += d;
		if (part < 3) {
			if (s[i] != '.')
				return 0;
			i++;
		}
	}
	return isdigit((unsigned char)s[i]) || s[i] == '.' ? 0 : i;
}

/* "[0x]" followed by 6+ hex digits: returns the length. */
static size_t hex_run(const char *s)
{
	size_t pre = strncmp(s, "0x", 2) == 0 ? 2 : 0;
	size_t n = span(s + pre, HEX);

	return n >= 6 ? pre + n : 0;
}

static int normalize_into(struct buf *b, const char *t)
{
	size_t skip;
	int r = 0;

	for (size_t i = 0; t[i] && r >= 0;) {
		const char *p = t + i;
		bool after_word = i > 0 && is_word(t[i - 1]);
		bool after_alpha = i > 0 && isalpha((unsigned char)t[i - 1]);
		size_t n;

		if (match_executor(p, "syz-executor", &skip) || match_executor(p, "syzkaller", &skip)) {
			r = buf_append(b, p, *p == 's' && p[3] == '-' ? strlen("syz-executor") : strlen("syzkaller"));
			i += skip;
		} else if ((n = match_offset(p)) && after_word) {
			i += n; /* offsets and sizes change with every build */
		} else if (*p == ':' && isdigit((unsigned char)p[1])) {
			r = buf_puts(b, ":LINE");
			while (t[i] == ':' && isdigit((unsigned char)t[i + 1]))
				i += 1 + span(t + i + 1, DIGITS);
		} else if (strncmp(p, "CPU#", 4) == 0 && isdigit((unsigned char)p[4])) {
			r = buf_puts(b, "CPU");
			i += 4 + span(p + 4, DIGITS);
		} else if (!after_word && (n = match_ipv4(p))) {
			r = buf_puts(b, "IP");
			i += n;
		} else if (!after_alpha && (n = hex_run(p)) > 0) {
			r = buf_puts(b, "ADDR");
			i += n;
		} else if (isdigit((unsigned char)*p) && (n = span(p, DIGITS)) &&
			   !is_word(p[n]) && (n >= 5 || !after_word)) {
			r = buf_puts(b, "NUM");
			i += n;
		} else {
			n = 1;
			r = buf_append(b, p, n);
			i += n;
		}
	}
	return r;
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
	struct buf b = BUF_INIT(4 * REPORT_LINE_MAX);
	char *res;

	if (normalize_into(&b, t) < 0 || buf_append(&b, "", 0) < 0) {
		buf_free(&b);
		return NULL;
	}
	res = sanitize(b.data);
	buf_free(&b);
	return res;
}

int report_normalize_title(const char *t, char **ret_title)
{
	char *s = title_normalize(t);

	if (!s)
		return -ENOMEM;
	*ret_title = s;
	return 0;
}
