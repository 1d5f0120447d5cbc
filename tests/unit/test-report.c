/* Unit tests of repro/report.h: the API contract, title normalisation and
 * hostile input (empty, garbage, NULs, huge lines, truncation). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/strutil.h"
#include "repro/report.h"

static const char kasan_log[] =
	"[   10.000000][ T100] syz-executor0: some context\n"
	"[   10.000001][ T200] other task noise\n"
	"[   10.100000][ T100] ==================================================================\n"
	"[   10.100001][ T100] BUG: KASAN: use-after-free in ip6_send_skb+0x2f5/0x330\n"
	"[   10.100002][ T100] Read of size 8 at addr ffff88004fab1858 by task syz-executor0/30168\n"
	"[   10.100003][ T100]\n"
	"[   10.100004][ T100] CPU: 0 PID: 30168 Comm: syz.3.1234 Not tainted 4.12.0-rc3+ #3\n"
	"[   10.100005][ T100] Call Trace:\n"
	"[   10.100006][ T100]  dump_stack+0x292/0x395 lib/dump_stack.c:52\n"
	"[   10.100007][ T200] interleaved line of another task\n"
	"[   10.100008][ T100]  kasan_report+0x230/0x340 mm/kasan/report.c:408\n"
	"[   10.100009][ T100]  ip6_send_skb+0x2f5/0x330 net/ipv6/ip6_output.c:1748\n"
	"[   10.100010][ T100]  ip6_push_pending_frames+0xb8/0xe0 net/ipv6/ip6_output.c:1763\n"
	"[   10.100011][ T100]  rawv6_sendmsg+0x2ede/0x4400 net/ipv6/raw.c:932\n"
	"[   10.100012][ T100]  entry_SYSCALL_64_fastpath+0x1f/0xbe\n"
	"[   10.100013][ T100] Kernel panic - not syncing: panic_on_warn set ...\n";

static struct report *parse(const char *s, size_t n)
{
	struct report *r = NULL;

	assert_int_equal(report_parse(s, n, &r), 0);
	assert_non_null(r);
	return r;
}

static void test_kasan(void **state)
{
	_cleanup_(report_freep) struct report *r = parse(kasan_log, sizeof(kasan_log) - 1);
	char *const *frames = report_frames(r);
	int proc = -1, id = -1;

	assert_string_equal(report_title(r), "KASAN: use-after-free Read in ip6_send_skb");
	assert_string_equal(report_type(r), "KASAN-USE-AFTER-FREE-READ");
	assert_string_equal(report_frame(r), "ip6_send_skb");
	assert_string_equal(report_guilty_file(r), "net/ipv6/ip6_output.c");
	assert_non_null(frames[0]);
	assert_string_equal(frames[0], "ip6_send_skb");
	assert_string_equal(frames[1], "ip6_push_pending_frames");
	assert_false(report_corrupted(r));
	assert_false(report_suppressed(r));
	assert_true(report_panicked(r));
	assert_true(report_matches_title(r, "KASAN: use-after-free Read in ip6_send_skb"));
	assert_true(report_matches_title(r, "bad-access in ip6_send_skb"));
	assert_false(report_matches_title(r, "KASAN: use-after-free Read in ip6_fragment"));
	assert_true(report_executor(r, &proc, &id));
	assert_int_equal(proc, 3);
	assert_int_equal(id, 1234);
	/* the text holds the same task's lines only, with the context before */
	assert_non_null(strstr(report_text(r), "syz-executor0: some context\n"));
	assert_null(strstr(report_text(r), "interleaved line"));
	assert_null(strstr(report_text(r), "[   10.1"));
	/* from the oops line on, without that context */
	assert_true(strncmp(report_oops_text(r), "BUG: KASAN: use-after-free", 26) == 0 ||
		    strncmp(report_oops_text(r), "==", 2) == 0);
	assert_null(strstr(report_oops_text(r), "some context"));
	assert_int_equal(report_start(r), strstr(kasan_log, "[   10.100001]") - kasan_log);
	assert_true(report_end(r) > report_start(r));
	assert_true(report_end(r) <= sizeof(kasan_log) - 1);
}

static void test_no_crash(void **state)
{
	static const char log[] = "[    0.000000] Linux version 6.1\n[    1.0] login: \n";
	_cleanup_(report_freep) struct report *r = parse(log, sizeof(log) - 1);
	_cleanup_(report_freep) struct report *e = parse("", 0);

	assert_null(report_title(r));
	assert_null(report_text(r));
	assert_null(report_type(r));
	assert_null(report_alt_titles(r)[0]);
	assert_null(report_frames(r)[0]);
	assert_false(report_matches_title(r, "anything"));
	assert_null(report_title(e));
}

static void test_too_big(void **state)
{
	struct report *r = NULL;

	/* the length is checked before any byte is read */
	assert_int_equal(report_parse("", REPORT_INPUT_MAX + 1, &r), -E2BIG);
	assert_null(r);
}

static void test_normalize(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "INFO: task syz-executor.3:1234 blocked", "INFO: task syz-executor blocked" },
		{ "BUG: Dentry ffff88801234abcd{i=0} in use", "BUG: Dentry ADDR{i=NUM} in use" },
		{ "WARNING: at fs/ext4/inode.c:1234 ext4_foo+0x1a/0x2b", "WARNING: at fs/ext4/inode.c:LINE ext4_foo" },
		{ "connect to 10.128.0.17 failed", "connect to IP failed" },
		{ "INFO: rcu detected stall on CPU#3", "INFO: rcu detected stall on CPU" },
		{ "INFO: Allocated in x age=1 cpu=0 pid=6024", "INFO: Allocated in x age=NUM cpu=NUM pid=NUM" },
		{ "in mac80211_rx ext4_iget ip6_fragment loop4", "in mac80211_rx ext4_iget ip6_fragment loop4" },
		{ "mkdir ./syzkaller-testdir264563108: read-only", "mkdir ./syzkaller-testdirNUM: read-only" },
		{ "a\tb  \x01 c\xff", "a b c" },
		/* report.go's rules, in its order: LINE only after a file
		 * extension, NUM only between non-word bytes or 7+ digits, ADDR
		 * only after a non-alphanumeric byte, and each rule until it
		 * no longer changes the title */
		{ "BUG: bad value 12:34", "BUG: bad value NUM:NUM" },
		{ "sock 10.0.0.1:80 gone", "sock IP:NUM gone" },
		{ "drivers/foo.c:12:34 bar", "drivers/foo.c:LINE bar" },
		{ "in foo12345 bar", "in foo12345 bar" },
		{ "in v1234567", "in vNUM" },
		{ "abcdef12 first", "abcdef12 first" },
		{ "task syz-executor.1.2 died", "task syz-executor died" },
		{ "stall on CPU#1#2", "stall on CPU" },
		{ "in foo+0x1234567/0x2000000", "in foo+ADDR/ADDR" },
		{ "in a+0x1/0x2b+0x3/0x4", "in a+0x1/0x2b" }, /* a name is 2+ bytes */
	};
	char long_title[400];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *t = NULL;

		assert_int_equal(report_normalize_title(cases[i].in, &t), 0);
		assert_string_equal(t, cases[i].out);
	}
	memset(long_title, 'x', sizeof(long_title) - 1);
	long_title[sizeof(long_title) - 1] = 0;
	{
		_cleanup_free_ char *t = NULL;

		assert_int_equal(report_normalize_title(long_title, &t), 0);
		assert_int_equal(strlen(t), 120);
	}
}

static void test_suppressed_and_corrupted(void **state)
{
	static const char oom[] = "[ 1.0] Out of memory: Kill process 123 (syz-fuzzer) score 1\n"
				  "[ 2.0] BUG: unable to handle kernel NULL pointer dereference at 0000000000000000\n";
	static const char cut[] = "[ 2.0] general protection fault: 0000 [#1] SMP KASAN\n"
				  "[ 2.1] Modules linked in:\n";
	_cleanup_(report_freep) struct report *a = parse(oom, sizeof(oom) - 1);
	_cleanup_(report_freep) struct report *b = parse(cut, sizeof(cut) - 1);

	assert_non_null(report_title(a));
	assert_true(report_suppressed(a));
	assert_string_equal(report_title(b), "general protection fault in corrupted");
	assert_true(report_corrupted(b));
	assert_non_null(report_corrupted_reason(b));
}

static void test_families(void **state)
{
	static const struct {
		const char *log, *title, *type;
	} cases[] = {
		/* linux.go has no family of the NMI watchdog's own line: the
		 * panic it causes names the crash */
		{ "[ 1.0] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1\n"
		  "[ 1.0] RIP: 0010:spin_forever+0x1/0x2\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  spin_forever+0x1/0x2\n[ 1.0]  do_ioctl_thing+0x1/0x2\n[ 1.0]  vfs_ioctl+0x1/0x2\n"
		  "[ 1.0] Kernel panic - not syncing: Hard LOCKUP\n",
		  "kernel panic: Hard LOCKUP", "DoS" },
		{ "[ 1.0] unregister_netdevice: waiting for lo to become free. Usage count = 2\n",
		  "unregister_netdevice: waiting for DEV to become free", "DoS" },
		{ "[ 1.0] VFS: Busy inodes after unmount of loop0. Self-destruct in 5 seconds.\n",
		  "VFS: Busy inodes after unmount (use-after-free)", "DoS" },
		{ "2022/10/02 11:34:15 SYZFAIL: negative running\n", "SYZFAIL: negative running", "SYZ_FAILURE" },
		{ "[ 1.0] divide error: 0000 [#1] SMP\n[ 1.0] RIP: 0010:tabledist+0x1/0x2\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  x+0x1/0x2\n[ 1.0]  y+0x1/0x2\n[ 1.0]  z+0x1/0x2\n",
		  "divide error in tabledist", "DoS" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(report_freep) struct report *r = parse(cases[i].log, strlen(cases[i].log));

		assert_non_null(report_title(r));
		assert_string_equal(report_title(r), cases[i].title);
		assert_string_equal(report_type(r), cases[i].type);
	}
}

/* One case per rule class taken from syzkaller's pkg/report tables
 * (linux.go and report.go at 1e72964b0111319984575e60f266d1fa0a98abb5),
 * written here rather than taken from its test data. NULL: no crash. */
static void test_syzkaller_rules(void **state)
{
	static const struct {
		const char *log, *title;
	} cases[] = {
		/* the filesystem and the device are left out of the title */
		{ "[ 1.0] BUG: Dentry 000000001234abcd{i=1,n=/}  still in use (1) [unmount of tmpfs tmpfs]\n",
		  "BUG: Dentry still in use in unmount" },
		/* the page's allocation site, past the page allocator's own frames */
		{ "[ 1.0] BUG: Bad page cache in process x  pfn:1234\n"
		  "[ 1.0] page last allocated via order 0, migratetype Movable\n"
		  "[ 1.0]  get_page_from_freelist+0x1/0x2\n[ 1.0]  __alloc_pages+0x1/0x2\n"
		  "[ 1.0]  __folio_alloc+0x1/0x2\n[ 1.0]  shmem_get_folio_gfp+0x1/0x2\n"
		  "[ 1.0]  shmem_fault+0x1/0x2\n",
		  "BUG: Bad page cache in shmem_get_folio_gfp" },
		{ "[ 1.0] Kernel panic - not syncing: kernel stack overflow\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  bad_stack+0x1/0x2\n[ 1.0]  recurse_me+0x1/0x2\n[ 1.0]  recurse_me+0x1/0x2\n"
		  "[ 1.0]  do_syscall_64+0x1/0x2\n",
		  "kernel stack overflow in recurse_me" },
		{ "[ 1.0] VFS: Close: file count is 0\n", "VFS: Close: file count is zero (use-after-free)" },
		{ "[ 1.0] int3: 0000 [#1] PREEMPT SMP KASAN\n[ 1.0] RIP: 0010:text_poke_me+0x1/0x2\n"
		  "[ 1.0] Call Trace:\n[ 1.0]  caller_one+0x1/0x2\n",
		  "int3 in text_poke_me" },
		/* Go programs' panics and runtime errors */
		{ "panic: something went wrong here\n\ngoroutine 1 [running]:\n", "panic: something went wrong here" },
		{ "panic: Sentry detected 3 stuck task(s):\n", "panic: Sentry detected stuck tasks" },
		{ "fatal error: concurrent map writes\n", "go runtime error" },
		{ "[ 1.0] skb_over_panic: text:ffffffff81234567 len:100\n", NULL },
		{ "[ 1.0] ALSA: fatal error: no card\n", NULL },
		/* notices that are not bugs */
		{ "[ 1.0] WARNING: Unprivileged eBPF is enabled with eIBRS on, data leaks possible\n", NULL },
		{ "[ 1.0] XFS (loop0): WARNING: Reset corrupted AGFL on AG 0.\n", NULL },
		{ "[ 1.0] warning: `syz' uses deprecated v2 capabilities in a way that may be insecure\n", NULL },
		{ "[ 1.0] tmpfs: Unknown parameter 'Booting the kernel.'\n", NULL },
		/* ID allocators and SRCU clean-up are skipped to reach the caller */
		{ "[ 1.0] WARNING: CPU: 0 PID: 1 at lib/idr.c:525 ida_free+0x1/0x2\n"
		  "[ 1.0] RIP: 0010:ida_free+0x1/0x2\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  foo_conn_del+0x1/0x2\n[ 1.0]  foo_close+0x1/0x2\n",
		  "WARNING in foo_conn_del" },
		/* generic encryption code is where KMSAN sees the use, not the bug */
		{ "[ 1.0] BUG: KMSAN: uninit-value in aes_encrypt+0x1/0x2\n"
		  "[ 1.0]  aes_encrypt+0x1/0x2\n[ 1.0]  crypto_cipher_encrypt_one+0x1/0x2\n"
		  "[ 1.0]  myfs_crypt_block+0x1/0x2\n[ 1.0]  myfs_write+0x1/0x2\n",
		  "KMSAN: uninit-value in myfs_crypt_block" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(report_freep) struct report *r = NULL;

		assert_int_equal(report_parse(cases[i].log, strlen(cases[i].log), &r), 0);
		if (!cases[i].title) {
			if (r && report_title(r))
				fail_msg("case %zu: no crash expected, got '%s'", i, report_title(r));
			continue;
		}
		if (!r || !report_title(r))
			fail_msg("case %zu: no crash found, expected '%s'", i, cases[i].title);
		if (strcmp(report_title(r), cases[i].title) != 0)
			fail_msg("case %zu: '%s', expected '%s'", i, report_title(r), cases[i].title);
	}
}

/* Formats of linux.go's table (same commit as above) that kfix lacked or
 * titled otherwise: title, an alternative title the report must also
 * match (or NULL), and whether it is corrupted. */
/* Case i of a table: the log gets this title (and alt as an alternative);
 * returns the report for more checks. */
static struct report *check_title(size_t i, const char *log, const char *title,
				  const char *alt)
{
	struct report *r = parse(log, strlen(log));

	if (!report_title(r))
		fail_msg("case %zu: no crash found, expected '%s'", i, title);
	if (strcmp(report_title(r), title) != 0)
		fail_msg("case %zu: '%s', expected '%s'", i, report_title(r), title);
	if (alt && !report_matches_title(r, alt))
		fail_msg("case %zu: '%s' is not an alternative title", i, alt);
	return r;
}

static void test_syzkaller_formats(void **state)
{
	static const struct {
		const char *log, *title, *alt;
		bool corrupted;
	} cases[] = {
		/* arm64 names the kind of bad access in the title */
		{ "[ 1.0] Unable to handle kernel access to user memory at virtual address 0000000020000000\n"
		  "[ 1.0] pc : foo_ioctl+0x1/0x2\n[ 1.0] lr : foo_ioctl+0x1/0x2\n[ 1.0] Call trace:\n"
		  "[ 1.0]  foo_ioctl+0x1/0x2\n[ 1.0]  vfs_ioctl+0x1/0x2\n[ 1.0]  el0_svc+0x1/0x2\n",
		  "BUG: unable to handle kernel access to user memory in foo_ioctl", "bad-access in foo_ioctl", false },
		/* kinds linux.go has no format for keep their line */
		{ "[ 1.0] Unable to handle kernel execute from non-executable memory at virtual address ffff000012345678\n",
		  "Unable to handle kernel execute from non-executable memory at virtual address ADDR", NULL, false },
		/* a WARNING that prints the failed condition first */
		{ "[ 1.0] WARNING: [!list_empty(&q->list)] fs/foo.c:123 at foo_release+0x1/0x2, CPU#0: syz.0.1/123\n"
		  "[ 1.0] RIP: 0010:foo_release+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n"
		  "[ 1.0]  __fput+0x1/0x2\n[ 1.0]  task_work_run+0x1/0x2\n[ 1.0]  </TASK>\n",
		  "WARNING in foo_release", NULL, false },
		/* the 6.15 WARNING line without a function still names the family */
		{ "[ 1.0] WARNING: lib/kobject.c:123 at 0x0, CPU#0: syz.0.1/123\n"
		  "[ 1.0] RIP: 0010:kobject_add_internal+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n"
		  "[ 1.0]  kobject_add+0x1/0x2\n[ 1.0]  foo_register+0x1/0x2\n[ 1.0]  foo_probe+0x1/0x2\n",
		  "WARNING: kobject bug in foo_register", NULL, false },
		{ "[ 1.0] BUG: spinlock cpu recursion on CPU#0, syz.0.1/123\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  do_raw_spin_lock+0x1/0x2\n[ 1.0]  foo_grab_all+0x1/0x2\n[ 1.0]  foo_ioctl+0x1/0x2\n",
		  "BUG: spinlock cpu recursion in foo_grab_all", NULL, false },
		{ "[ 1.0] BUG: IRQ stack guard page was hit at ffffc90000008ff8 (stack is ffffc90000009000..ffffc9000000c000)\n"
		  "[ 1.0] RIP: 0010:foo_irq+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  foo_irq+0x1/0x2\n"
		  "[ 1.0]  handle_irq_event+0x1/0x2\n[ 1.0]  do_softirq+0x1/0x2\n",
		  "BUG: stack guard page was hit in handle_irq_event", "stack-overflow in handle_irq_event", false },
		/* KMSAN reports share syzbot's bad-access bucket; where the
		 * value was made is a part of their stack: a report without
		 * it, or whose origin stack is not available, is cut */
		{ "[ 1.0] BUG: KMSAN: uninit-value in foo_parse+0x1/0x2\n[ 1.0]  foo_parse+0x1/0x2\n"
		  "[ 1.0]  foo_rcv+0x1/0x2\n[ 1.0]  netif_receive_skb+0x1/0x2\n"
		  "[ 1.0] \n[ 1.0] Uninit was created at:\n[ 1.0]  kmem_cache_alloc+0x1/0x2\n"
		  "[ 1.0]  foo_alloc+0x1/0x2\n",
		  "KMSAN: uninit-value in foo_parse", "bad-access in foo_parse", false },
		{ "[ 1.0] BUG: KMSAN: uninit-value in foo_parse+0x1/0x2\n[ 1.0]  foo_parse+0x1/0x2\n"
		  "[ 1.0]  foo_rcv+0x1/0x2\n[ 1.0]  netif_receive_skb+0x1/0x2\n",
		  "KMSAN: uninit-value in foo_parse", "bad-access in foo_parse", true },
		{ "[ 1.0] BUG: KMSAN: uninit-value in foo_parse+0x1/0x2\n[ 1.0]  foo_parse+0x1/0x2\n"
		  "[ 1.0]  foo_rcv+0x1/0x2\n[ 1.0] \n[ 1.0] Uninit was created at:\n"
		  "[ 1.0] (stack is not available)\n",
		  "KMSAN: uninit-value in foo_parse", "bad-access in foo_parse", true },
		/* an info leak is also known by where the uninit bytes came from */
		{ "[ 1.0] BUG: KMSAN: kernel-usb-infoleak in usb_submit_urb+0x1/0x2\n"
		  "[ 1.0]  usb_submit_urb+0x1/0x2\n[ 1.0]  foo_usb_send+0x1/0x2\n[ 1.0]  foo_work+0x1/0x2\n"
		  "[ 1.0] \n[ 1.0] Uninit was created at:\n[ 1.0]  __kmalloc_node_track_caller+0x1/0x2\n"
		  "[ 1.0]  __alloc_skb+0x1/0x2\n[ 1.0]  foo_connect+0x1/0x2\n[ 1.0]  foo_probe+0x1/0x2\n",
		  "KMSAN: kernel-usb-infoleak in foo_usb_send", "KMSAN origin in foo_connect", false },
		{ "[ 1.0] BUG: KMSAN: kernel-usb-infoleak in usb_submit_urb+0x1/0x2\n"
		  "[ 1.0]  usb_submit_urb+0x1/0x2\n[ 1.0]  foo_usb_send+0x1/0x2\n[ 1.0]  foo_work+0x1/0x2\n"
		  "[ 1.0] \n[ 1.0] Local variable req created at:\n[ 1.0]  foo_ctrl_msg+0x1/0x2\n"
		  "[ 1.0]  foo_probe+0x1/0x2\n",
		  "KMSAN: kernel-usb-infoleak in foo_usb_send", "KMSAN origin in foo_ctrl_msg", false },
		/* KFENCE's free and corruption reports need no call trace */
		{ "[ 1.0] BUG: KFENCE: invalid free in foo_put+0x1/0x2\n",
		  "KFENCE: invalid free in foo_put", "invalid-free in foo_put", false },
		{ "2024/01/01 00:00:00 SYZFATAL: failed to recv rpc\n", "SYZFATAL: failed to recv rpc", "SYZFATAL", false },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(report_freep) struct report *r =
			check_title(i, cases[i].log, cases[i].title, cases[i].alt);

		if (report_corrupted(r) != cases[i].corrupted)
			fail_msg("case %zu: corrupted %d (%s)", i, report_corrupted(r),
				 report_corrupted_reason(r) ? report_corrupted_reason(r) : "");
	}
}

/* Syscall entry points are titled without their prefixes: every prefix of
 * linux.go's stripFramePrefixes (same commit as above), the shortest name
 * left wins, and the name as printed and each single strip stay
 * alternative titles so that bugs titled either way still match. */
static void test_syscall_prefixes(void **state)
{
	static const struct {
		const char *frame, *name;
	} cases[] = {
		{ "SYSC_pause", "pause" },
		{ "SyS_pause", "pause" },
		{ "sys_pause", "pause" },
		{ "__x64_sys_memfd_secret", "sys_memfd_secret" },
		{ "__ia32_sys_memfd_secret", "sys_memfd_secret" },
		{ "__arm64_sys_memfd_secret", "sys_memfd_secret" },
		{ "__ia32_compat_sys_ioctl", "compat_sys_ioctl" },
		{ "____sys_sendmsg", "sendmsg" },
		{ "___sys_sendmsg", "sendmsg" },
		{ "__sys_sendmsg", "sendmsg" },
		{ "__se_sys_sethostname", "sethostname" },
		{ "__se_compat_sys_ioctl", "compat_sys_ioctl" },
		{ "__do_sys_sethostname", "sethostname" },
		{ "__do_compat_sys_ioctl", "__do_compat_sys_ioctl" },
		{ "compat_SYSC_ioctl", "ioctl" },
		{ "compat_SyS_ioctl", "ioctl" },
		{ "ksys_msgctl", "msgctl" },
		{ "do_sys_open", "do_sys_open" },
		{ "msgctl_down", "msgctl_down" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *log = NULL, *title = NULL, *raw = NULL, *rip = NULL, *gpf = NULL;

		assert_true(asprintf(&log,
				     "[ 1.0] BUG: KASAN: use-after-free in %s+0x1/0x2\n"
				     "[ 1.0] Read of size 8 at addr ffff888012345678 by task a/1\n"
				     "[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n[ 1.0]  %s+0x1/0x2\n"
				     "[ 1.0]  do_syscall_64+0x1/0x2\n",
				     cases[i].frame, cases[i].frame) > 0);
		assert_true(asprintf(&title, "KASAN: use-after-free Read in %s", cases[i].name) > 0);
		assert_true(asprintf(&raw, "KASAN: use-after-free Read in %s", cases[i].frame) > 0);
		{
			_cleanup_(report_freep) struct report *r = check_title(i, log, title, raw);

			for (char *const *a = report_alt_titles(r); *a; a++)
				if (streq(*a, title))
					fail_msg("case %zu: the title is also listed as an alternative", i);
		}
		/* the same in a register dump's frame */
		free(log);
		assert_true(asprintf(&log,
				     "[ 1.0] general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1]\n"
				     "[ 1.0] KASAN: null-ptr-deref in range [0x0000000000000008-0x000000000000000f]\n"
				     "[ 1.0] RIP: 0010:%s+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n"
				     "[ 1.0]  do_syscall_64+0x1/0x2\n",
				     cases[i].frame) > 0);
		assert_true(asprintf(&gpf, "general protection fault in %s", cases[i].name) > 0);
		assert_true(asprintf(&rip, "general protection fault in %s", cases[i].frame) > 0);
		{
			_cleanup_(report_freep) struct report *r = check_title(i, log, gpf, rip);
		}
	}
}

/* Stalls find their dispatch anchor among the stripped names: a connect
 * loop is titled by the protocol's function, a plain syscall by its name,
 * and a partly stripped name stays an alternative title. */
static void test_stall_prefixes(void **state)
{
#define STALL(f1, f2) \
	"[ 1.0] rcu: INFO: rcu_preempt self-detected stall on CPU\n" \
	"[ 1.0] rcu: \t0-....: (10500 ticks this GP)\n[ 1.0] Call Trace:\n[ 1.0]  <IRQ>\n" \
	"[ 1.0]  print_cpu_stall+0x1/0x2\n[ 1.0]  rcu_sched_clock_irq+0x1/0x2\n" \
	"[ 1.0]  apic_timer_interrupt+0x1/0x2\n[ 1.0]  </IRQ>\n" \
	"[ 1.0] RIP: 0010:foo_spin+0x1/0x2\n[ 1.0]  " f1 "+0x1/0x2\n[ 1.0]  " f2 "+0x1/0x2\n" \
	"[ 1.0]  do_syscall_64+0x1/0x2\n"
	static const struct {
		const char *log, *title, *alt;
	} cases[] = {
		{ STALL("foo_connect", "SyS_connect"), "INFO: rcu detected stall in foo_connect",
		  "stall in foo_connect" },
		{ STALL("foo_setsockopt", "__sys_setsockopt"), "INFO: rcu detected stall in foo_setsockopt",
		  NULL },
		{ STALL("foo_timer_loop", "__se_sys_timer_create"), "INFO: rcu detected stall in timer_create",
		  "INFO: rcu detected stall in sys_timer_create" },
		{ STALL("foo_timer_loop", "__x64_sys_timer_create"), "INFO: rcu detected stall in sys_timer_create",
		  "stall in __x64_sys_timer_create" },
	};
#undef STALL

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(report_freep) struct report *r =
			check_title(i, cases[i].log, cases[i].title, cases[i].alt);
	}
}

/* Titles compared as syzbot deduplicates: the duplicate counter and the
 * syscall prefixes of the guilty function do not make another crash; any
 * other difference does. */
/* Whether a report names its source lines: the frame shapes syzbot's and
 * kfix's symbolisers write, against the file:line that other report lines
 * carry without being symbolised frames. */
static void test_symbolised(void **state)
{
	static const struct {
		const char *text;
		bool located;
	} cases[] = {
		{ " ksys_msgctl+0x6d4/0x7a0 ipc/msg.c:624\n", true },
		{ " freeque ipc/msg.c:291 [inline]\n", true },
		{ "[   12.3] RIP: 0010:foo_bar.isra.0+0x1/0x20 net/foo/bar.c:12\n", true },
		{ " [<ffffffff81234567>] foo+0x1/0x2 drivers/x/y.c:7\r\n", true },
		{ " __do_sys_x+0x10/0x20 arch/x86/entry/entry_64.S:120\n", true },
		{ " ksys_msgctl+0x6d4/0x7a0\n do_syscall_64+0x3b/0x90\n", false },
		{ "WARNING: CPU: 0 PID: 1 at lib/foo.c:12 foo+0x1/0x2\n", false },
		{ "kernel BUG at mm/slub.c:123!\n", false },
		{ "UBSAN: shift-out-of-bounds in lib/foo.c:12:3\n", false },
		{ "BUG: KASAN: use-after-free in ksys_msgctl+0x6d4/0x7a0\n", false },
		{ "", false },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (report_symbolised(cases[i].text, strlen(cases[i].text)) != cases[i].located)
			fail_msg("%s: expected %s", cases[i].text, cases[i].located ? "located" : "not");
}

static void test_titles_same(void **state)
{
	static const struct {
		const char *a, *b;
		bool same;
	} cases[] = {
		{ "KASAN: use-after-free Read in msgctl", "KASAN: use-after-free Read in msgctl", true },
		{ "KASAN: use-after-free Read in msgctl", "KASAN: use-after-free Read in ksys_msgctl", true },
		{ "KASAN: use-after-free Read in msgctl (2)", "KASAN: use-after-free Read in ksys_msgctl", true },
		{ "general protection fault in sys_clock_gettime", "general protection fault in __x64_sys_clock_gettime", true },
		{ "WARNING in sys_foo (13)", "WARNING in __ia32_sys_foo", true },
		{ "INFO: task hung in foo", "INFO: task hung in foo (3)", true },
		{ "KASAN: use-after-free Read in msgctl", "KASAN: use-after-free Write in msgctl", false },
		{ "KASAN: use-after-free Read in msgctl", "KASAN: use-after-free Read in msgctl_down", false },
		{ "WARNING in sys_foo", "WARNING in foo", true },
		{ "WARNING in do_sys_foo", "WARNING in foo", false },
		{ "WARNING in foo (x)", "WARNING in foo", false },
		{ "WARNING in foo ()", "WARNING in foo", false },
		{ "WARNING in foo(2)", "WARNING in foo", false },
		{ "BUG: corrupted list in foo", "BUG: corrupted list in bar", false },
		{ "no crash", "no crash", true },
		{ "(2)", "", false },
		{ "", "", true },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (report_titles_same(cases[i].a, cases[i].b) != cases[i].same ||
		    report_titles_same(cases[i].b, cases[i].a) != cases[i].same)
			fail_msg("case %zu: '%s' vs '%s' should be %s", i, cases[i].a, cases[i].b,
				 cases[i].same ? "the same" : "different");
	}
	assert_false(report_titles_same(NULL, "x"));
	assert_false(report_titles_same("x", NULL));
}

/* Frame choice and skipped frames as in linux.go (same commit as above). */
static void test_syzkaller_frames(void **state)
{
	static const struct {
		const char *log, *title;
	} cases[] = {
		/* lockdep's lock site is checked, the title names the call trace */
		{ "[ 1.0] WARNING: inconsistent lock state\n[ 1.0] --------------------------------\n"
		  "[ 1.0] inconsistent {SOFTIRQ-ON-W} -> {IN-SOFTIRQ-W} usage.\n"
		  "[ 1.0] syz.0.1/123 [HC0[0]:SC1[1]:HE1:SE0] takes:\n"
		  "[ 1.0] ffff888012345678 (&foo->lock){+.?.}-{2:2}, at: foo_lock_helper+0x1/0x2\n"
		  "[ 1.0] stack backtrace:\n[ 1.0] Call Trace:\n[ 1.0]  <IRQ>\n[ 1.0]  dump_stack_lvl+0x1/0x2\n"
		  "[ 1.0]  lock_acquire+0x1/0x2\n[ 1.0]  _raw_spin_lock+0x1/0x2\n[ 1.0]  foo_timer_fn+0x1/0x2\n"
		  "[ 1.0]  call_timer_fn+0x1/0x2\n",
		  "inconsistent lock state in foo_timer_fn" },
		/* a kmalloc bug names the caller that asked, even an *_alloc_* one */
		{ "[ 1.0] WARNING: CPU: 0 PID: 1 at mm/util.c:600 kvmalloc_node+0x1/0x2\n"
		  "[ 1.0] RIP: 0010:kvmalloc_node+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n"
		  "[ 1.0]  foo_alloc_table+0x1/0x2\n[ 1.0]  foo_ioctl+0x1/0x2\n[ 1.0]  __x64_sys_ioctl+0x1/0x2\n",
		  "WARNING: kmalloc bug in foo_alloc_table" },
		{ "[ 1.0] BUG: Invalid wait context\n[ 1.0] stack backtrace:\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  dump_stack_lvl+0x1/0x2\n[ 1.0]  __lock_acquire+0x1/0x2\n[ 1.0]  lock_acquire+0x1/0x2\n"
		  "[ 1.0]  lock_sock_nested+0x1/0x2\n[ 1.0]  foo_setsockopt+0x1/0x2\n[ 1.0]  do_sock_setsockopt+0x1/0x2\n",
		  "WARNING: locking bug in foo_setsockopt" },
		/* skb helpers BUG_ON their caller's mistakes */
		{ "[ 1.0] kernel BUG at net/core/skbuff.c:123!\n[ 1.0] RIP: 0010:skb_pull_rcsum+0x1/0x2\n"
		  "[ 1.0] Call Trace:\n[ 1.0]  <IRQ>\n[ 1.0]  foo_rcv+0x1/0x2\n[ 1.0]  __netif_receive_skb+0x1/0x2\n"
		  "[ 1.0]  process_backlog+0x1/0x2\n",
		  "kernel BUG in foo_rcv" },
		/* arm64 tag-check fault frames */
		{ "[ 1.0] BUG: KASAN: invalid-access in el1_da+0x1/0x2\n"
		  "[ 1.0] Read at addr f0ff000012345678 by task syz/123\n[ 1.0] Call trace:\n"
		  "[ 1.0]  el1_da+0x1/0x2\n[ 1.0]  foo_read+0x1/0x2\n[ 1.0]  vfs_read+0x1/0x2\n[ 1.0]  el0_svc+0x1/0x2\n",
		  "KASAN: invalid-access Read in foo_read" },
		{ "[ 1.0] WARNING: Nested lock was not taken\n[ 1.0] RIP: 0010:foo_nest+0x1/0x2\n"
		  "[ 1.0] Call Trace:\n[ 1.0]  lock_acquire+0x1/0x2\n[ 1.0]  bar_caller+0x1/0x2\n[ 1.0]  baz+0x1/0x2\n",
		  "WARNING: nested lock was not taken in foo_nest" },
		/* KMSAN's first stack ends where the store stack begins */
		{ "[ 1.0] BUG: KMSAN: uninit-value in netlink_rcv_skb+0x1/0x2\n"
		  "[ 1.0]  netlink_rcv_skb+0x1/0x2\n[ 1.0]  netlink_ack+0x1/0x2\n"
		  "[ 1.0] Uninit was stored to memory at:\n[ 1.0]  foo_store+0x1/0x2\n[ 1.0]  foo_sendmsg+0x1/0x2\n",
		  "KMSAN: uninit-value in corrupted" },
		/* MMIO accessors are skipped */
		{ "[ 1.0] WARNING: CPU: 0 PID: 1 at drivers/foo/foo.c:12 foo_writel+0x1/0x2\n"
		  "[ 1.0] RIP: 0010:foo_writel+0x1/0x2\n[ 1.0] Call Trace:\n[ 1.0]  <TASK>\n"
		  "[ 1.0]  foo_reset+0x1/0x2\n[ 1.0]  foo_probe+0x1/0x2\n[ 1.0]  really_probe+0x1/0x2\n",
		  "WARNING in foo_reset" },
	};
	static const char unwind[] = "Call Trace:\n unwind_next_frame+0x1/0x2 arch/x86/kernel/unwind_orc.c:500\n"
				     " foo_walk+0x1/0x2 fs/foo/walk.c:12\n";
	_cleanup_free_ char *file = NULL;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		report_free(check_title(i, cases[i].log, cases[i].title, NULL));
	/* the unwinder is never the guilty file */
	assert_int_equal(report_guilty_file_of(unwind, sizeof(unwind) - 1, "WARNING in foo_walk", &file), 0);
	assert_non_null(file);
	assert_string_equal(file, "fs/foo/walk.c");
}

/* linux.go's guilty file rules (extractGuiltyFileImpl at the corpus's
 * commit), class by class: every ignored file pattern, the lines whose
 * file never counts, a deeper file below the first one's folder, path
 * cleaning, the first file when all are ignored, and an rcu stall looked
 * at from its interrupt entry. */
static void test_guilty_rules(void **state)
{
	static const char *const ignored[] = {
		"include/linux/list.h", "lib/string.c", "virt/lib/irqbypass.c", "mm/kasan/report.c",
		"mm/kmsan/core.c", "kernel/kcov.c", "mm/slub.c", "mm/slab.c", "mm/filemap.c",
		"mm/folio-compat.c", "mm/truncate.c", "mm/memory.c", "mm/percpu-vm.c", "mm/vmalloc.c",
		"mm/page_alloc.c", "mm/mempool.c", "mm/util.c", "kernel/rcu/tree.c",
		"arch/x86/kernel/traps.c", "arch/x86/kernel/unwind_orc.c", "arch/x86/mm/fault.c",
		"arch/x86/mm/physaddr.c", "arch/x86/kernel/stacktrace.c", "arch/x86/kernel/apic/apic.c",
		"arch/arm64/kernel/entry-common.c", "arch/arm64/kernel/process.c",
		"kernel/locking/lockdep.c", "kernel/panic.c", "kernel/printk/printk.c",
		"kernel/softirq.c", "kernel/kthread.c", "kernel/sched/core.c", "kernel/stacktrace.c",
		"kernel/time/timer.c", "kernel/workqueue.c", "net/core/dev.c", "net/core/sock.c",
		"net/core/skbuff.c", "fs/proc/generic.c", "trusty/trusty.c", "drivers/usb/core/urb.c",
		"arch/x86/lib/crc32-glue.c",
	};
	static const struct {
		const char *text, *title, *file;
	} cases[] = {
		/* lockdep's irq-state and held-lock sites are not the bug's */
		{ "hardirqs last  enabled at (1): foo_irq+0x1/0x2 drivers/foo/irq.c:5\n"
		  "softirqs last disabled at (2): bar_bh+0x1/0x2 net/bar/bh.c:7\n"
		  " #0: ffff8880 (&x->lock){+.+.}-{3:3}, at: baz_lock+0x1/0x2 fs/baz/lock.c:9\n"
		  "1 lock held by t/1:\n held at: qux+0x1/0x2 fs/qux/a.c:3,  at: y fs/y/y.c:1\n"
		  "Register r4 information: slab kmalloc-64 drivers/reg/reg.c:2\n"
		  " real_bug+0x1/0x2 sound/core/pcm.c:11\n", "WARNING in real_bug", "sound/core/pcm.c" },
		/* a file in a subfolder of the first one's folder, further down */
		{ " a+0x1/0x2 net/sched/sch_api.c:1\n b+0x1/0x2 net/sched/act/act_x.c:2\n"
		  " c+0x1/0x2 net/core2/y.c:3\n d+0x1/0x2 net/sched/act/deep/z.c:4\n",
		  "WARNING in a", "net/sched/act/deep/z.c" },
		/* the same folder or a sibling is not deeper */
		{ " a+0x1/0x2 net/sched/sch_api.c:1\n b+0x1/0x2 net/sched/cls_api.c:2\n"
		  " c+0x1/0x2 net/schedx/y/z.c:3\n", "WARNING in a", "net/sched/sch_api.c" },
		/* cleaned as Go's filepath.Clean */
		{ " a+0x1/0x2 ./fs//ext4/../ext4/./inode.c:1\n", "WARNING in a", "fs/ext4/inode.c" },
		/* only helpers: the first file named, as printed */
		{ " a+0x1/0x2 lib/./string.c:1\n b+0x1/0x2 mm/slub.c:2\n", "WARNING in a", "lib/./string.c" },
		/* stalls: from the interrupt's entry on (x86, arm64, arm) */
		{ " x+0x1/0x2 drivers/tty/a.c:1\n apic_timer_interrupt+0x1/0x2 arch/x86/entry/entry_64.S:1\n"
		  " y+0x1/0x2 fs/y/y.c:2\n", "INFO: rcu detected stall in y", "fs/y/y.c" },
		{ " x+0x1/0x2 drivers/clocksource/arm_arch_timer.c:1\n el1h_64_irq+0x1/0x2\n"
		  " y+0x1/0x2 net/core/skmsg.c:2\n", "INFO: rcu detected stall in y", "net/core/skmsg.c" },
		{ " x+0x1/0x2 drivers/irqchip/gic.c:1\nException stack(0x1 to 0x2)\n"
		  " y+0x1/0x2 fs/z/z.c:2\n", "INFO: rcu detected stall in y", "fs/z/z.c" },
		/* not a stall: no such cut */
		{ " x+0x1/0x2 drivers/tty/a.c:1\n apic_timer_interrupt+0x1/0x2\n y+0x1/0x2 fs/y/y.c:2\n",
		  "WARNING in x", "drivers/tty/a.c" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++) {
		_cleanup_free_ char *text = NULL, *file = NULL;

		assert_true(asprintf(&text, " a+0x1/0x2 %s:1\n b+0x1/0x2 sound/core/pcm.c:2\n",
				     ignored[i]) > 0);
		assert_int_equal(report_guilty_file_of(text, strlen(text), "WARNING in a", &file), 0);
		if (!file || !streq(file, "sound/core/pcm.c"))
			fail_msg("%s: guilty %s", ignored[i], file ? file : "(none)");
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *file = NULL;

		assert_int_equal(report_guilty_file_of(cases[i].text, strlen(cases[i].text),
						       cases[i].title, &file), 0);
		if (!file || !streq(file, cases[i].file))
			fail_msg("case %zu: guilty %s, want %s", i, file ? file : "(none)", cases[i].file);
	}
}

/* report.go's corruption rules: a fault-injection stack interleaved with
 * the report ends the part it cuts into and makes the report corrupted
 * though the title keeps the frame found; a call trace needs three lines
 * after its keyword, the final newline's empty rest counted. */
static void test_corruption_rules(void **state)
{
	static const char cut[] =
		"[ 1.0] general protection fault: 0000 [#1] SMP KASAN\n"
		"[ 1.0]  should_fail+0x1/0x2\n"
		"[ 1.0] RIP: 0010:foo_table+0x1/0x2\n"
		"[ 1.0]  should_failslab+0x1/0x2\n"
		"[ 1.0]  kmem_cache_alloc_node+0x1/0x2\n"
		"[ 1.0]  __alloc_skb+0x1/0x2\n"
		"[ 1.0] Call Trace:\n"
		"[ 1.0]  foo_dump+0x1/0x2\n";
	static const char short_ok[] =
		"[ 1.0] WARNING: CPU: 0 PID: 1 at fs/foo.c:1 foo+0x1/0x2\n"
		"[ 1.0] RIP: 0010:foo+0x1/0x2\n"
		"[ 1.0] Call Trace:\n"
		"[ 1.0]  foo_a+0x1/0x2\n"
		"[ 1.0]  foo_b+0x1/0x2\n";
	static const char too_short[] =
		"[ 1.0] WARNING: CPU: 0 PID: 1 at fs/foo.c:1 foo+0x1/0x2\n"
		"[ 1.0] RIP: 0010:foo+0x1/0x2\n"
		"[ 1.0] Call Trace:\n"
		"[ 1.0]  foo_a+0x1/0x2";
	/* more classes of linux.go's rules: a stack that is missing, riscv's
	 * headerless stack, a UBSAN line without " in", a reboot only when
	 * the report starts with it, rcu_tasks stalls */
	static const struct {
		const char *log, *title;
		bool corrupted;
	} more[] = {
		{ "[ 1.0] WARNING: CPU: 0 PID: 1 at fs/foo.c:1 foo+0x1/0x2\n[ 1.0] RIP: 0010:foo+0x1/0x2\n"
		  "[ 1.0] RSP: 0018:ffff8880\n[ 1.0] RAX: 0\n[ 1.0] RBX: 0\n",
		  "WARNING in foo", true },
		{ "[ 1.0] Unable to handle kernel paging request at virtual address 0000000000000008\n"
		  "[ 1.0] epc : foo_rv+0x1/0x2\n"
		  "[ 1.0] status: 0000000200000120 badaddr: 0000000000000008 cause: 000000000000000d\n"
		  "[ 1.0] Call Trace:\n[ 1.0] [<ffffffff80001234>] foo_rv+0x1/0x2\n"
		  "[ 1.0] [<ffffffff80005678>] bar_rv+0x1/0x2\n[ 1.0] [<ffffffff80009abc>] baz_rv+0x1/0x2\n",
		  "BUG: unable to handle kernel paging request in foo_rv", false },
		{ "[ 1.0] UBSAN: shift-out-of-bounds\n[ 1.0] Call Trace:\n[ 1.0]  a+0x1/0x2\n"
		  "[ 1.0]  b+0x1/0x2\n[ 1.0]  c+0x1/0x2\n", "UBSAN: shift-out-of-bounds", true },
		{ "[ 1.0] Unknown parameter 'Booting the kernel.'\n", NULL, false },
		{ "[ 1.0] INFO: rcu_tasks detected stalls on tasks:\n"
		  "[ 1.0] task:syz state:R running task\n[ 1.0] Call Trace:\n"
		  "[ 1.0]  apic_timer_interrupt+0x1/0x2\n[ 1.0]  foo_loop+0x1/0x2\n"
		  "[ 1.0]  __x64_sys_ioctl+0x1/0x2\n[ 1.0]  do_syscall_64+0x1/0x2\n",
		  "INFO: rcu detected stall in foo_loop", false },
	};
	struct report *r;

	(void)state;
	assert_int_equal(report_parse(cut, sizeof(cut) - 1, &r), 0);
	assert_string_equal(report_title(r), "general protection fault in __alloc_skb");
	assert_true(report_corrupted(r));
	report_free(r);
	assert_int_equal(report_parse(short_ok, sizeof(short_ok) - 1, &r), 0);
	assert_string_equal(report_title(r), "WARNING in foo");
	assert_false(report_corrupted(r));
	report_free(r);
	assert_int_equal(report_parse(too_short, sizeof(too_short) - 1, &r), 0);
	assert_string_equal(report_title(r), "WARNING in foo");
	assert_true(report_corrupted(r));
	report_free(r);
	for (size_t i = 0; i < ARRAY_SIZE(more); i++) {
		assert_int_equal(report_parse(more[i].log, strlen(more[i].log), &r), 0);
		if (!streq_ptr(report_title(r), more[i].title) || report_corrupted(r) != more[i].corrupted)
			fail_msg("case %zu: '%s' corrupted %d (%s)", i, report_title(r) ?: "(none)",
				 report_corrupted(r), report_corrupted_reason(r) ?: "");
		report_free(r);
	}
}

/* syzkaller demangles frame names before skipping and titling them
 * (report.go, same commit as above): kernel Rust (v0 and legacy) and C++. */
static void test_demangled_frames(void **state)
{
	static const char rust[] =
		"[ 1.0][ T9] rust_kernel: panicked at drivers/mydrv/card.rs:12:5:\n"
		"[ 1.0][ T9] attempt to subtract with overflow\n"
		"[ 1.0][ T9] CPU: 0 PID: 9 Comm: syz.0.1 Not tainted 6.12.0 #1\n"
		"[ 1.0][ T9] Call Trace:\n[ 1.0][ T9]  <TASK>\n"
		"[ 1.0][ T9]  dump_stack_lvl+0x1/0x2\n"
		"[ 1.0][ T9]  _RNvCsabc_7___rustc17rust_begin_unwind+0x1/0x2\n"
		"[ 1.0][ T9]  _RNvNtCsabc_4core9panicking9panic_fmt+0x1/0x2\n"
		"[ 1.0][ T9]  _RNvMNtCs1234_5mydrv4cardNtB2_4Card5probe+0x1/0x2\n"
		"[ 1.0][ T9]  _ZN5mydrv4card4Card4open17h0123456789abcdefE+0x1/0x2\n"
		"[ 1.0][ T9]  do_dentry_open+0x1/0x2\n";
	_cleanup_(report_freep) struct report *r = parse(rust, sizeof(rust) - 1);
	char *const *frames;

	(void)state;
	assert_string_equal(report_title(r), "attempt to subtract with overflow in <mydrv::card::Card>::probe");
	assert_string_equal(report_frame(r), "<mydrv::card::Card>::probe");
	frames = report_frames(r);
	assert_non_null(frames[0]);
	assert_true(strv_contains(frames, "mydrv::card::Card::open"));
	assert_true(strv_contains(frames, "do_dentry_open"));
}

/* The whole-log suppressions of syzkaller's report.go and linux.go (same
 * commit as above): the crash is found but not worth reporting. */
static void test_syzkaller_suppressions(void **state)
{
	static const char crash[] = "[ 2.0] BUG: unable to handle kernel NULL pointer dereference at 0000000000000000\n";
	static const char *const lines[] = {
		"[ 1.0] Out of memory: Kill process 123 (syz-executor) score 1 or sacrifice child\n",
		"[ 1.0] Killed process 123 (syz-executor) total-vm:1kB, anon-rss:1kB\n",
		"[ 1.0] lowmemorykiller: Killing 'syz-executor' (123), adj 0,\n",
		"*** stack smashing detected ***: terminated\n",
		"fatal error: out of memory\n",
		"fatal error: newosproc\n",
		"panic: failed to mmap: cannot allocate memory\n",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		_cleanup_free_ char *log = NULL;
		_cleanup_(report_freep) struct report *r = NULL;

		assert_true(asprintf(&log, "%s%s", lines[i], crash) > 0);
		r = parse(log, strlen(log));
		assert_non_null(report_title(r));
		if (!report_suppressed(r))
			fail_msg("case %zu: not suppressed", i);
	}
	{
		/* another process killed is not a reason */
		static const char other[] = "[ 1.0] Killed process 123 (syz-executor.0x) total-vm:1kB\n"
					    "[ 2.0] BUG: unable to handle kernel NULL pointer dereference at 0\n";
		_cleanup_(report_freep) struct report *r = parse(other, sizeof(other) - 1);

		assert_false(report_suppressed(r));
	}
	{
		/* a user-space fault the kernel logs is no crash at all */
		static const char user[] = "[ 1.0] traps: syz-executor[123] general protection fault sp:7ffd1234 "
					   "ip:4a1b2c error:0 in syz-executor[400000+1000]\n";
		_cleanup_(report_freep) struct report *r = parse(user, sizeof(user) - 1);

		assert_null(report_title(r));
	}
}

static void test_nuls_and_crs(void **state)
{
	char log[2 * sizeof(kasan_log)];
	_cleanup_(report_freep) struct report *r = NULL;
	size_t n = 0;
	char *p;

	/* CRLF line ends, as serial consoles give them */
	for (const char *q = kasan_log; *q; q++) {
		if (*q == '\n')
			log[n++] = '\r';
		log[n++] = *q;
	}
	p = memmem(log, n, "other task noise", 16);
	assert_non_null(p);
	p[5] = 0; /* a NUL in the noise */
	p = memmem(log, n, "ip6_push_pending_frames", 23);
	assert_non_null(p);
	p[-2] = 0; /* and one inside the report */
	r = parse(log, n);
	assert_string_equal(report_title(r), "KASAN: use-after-free Read in ip6_send_skb");
	assert_non_null(strstr(report_text(r), "rawv6_sendmsg"));
	assert_null(strchr(report_text(r), '\r'));
}

/* Builds len bytes of repeated pattern, NUL-terminated. */
static char *repeat(const char *pattern, size_t len)
{
	size_t n = strlen(pattern);
	char *s = malloc(len + 1);

	assert_non_null(s);
	for (size_t i = 0; i < len; i++)
		s[i] = pattern[i % n];
	s[len] = 0;
	return s;
}

static void test_huge_lines(void **state)
{
	static const char *const patterns[] = {
		"BUG: KASAN: a in f+", "WARNING: at a.c:1 f+", "INFO: task ", "[ 1.0] ", "BUG:",
		"\xff\xfe\x00", "Call Trace:\n", "general protection fault:", " ? x+0x1/0x2",
	};
	const size_t len = 10u << 20;

	for (size_t i = 0; i < ARRAY_SIZE(patterns); i++) {
		_cleanup_free_ char *s = repeat(patterns[i], len);
		_cleanup_(report_freep) struct report *r = parse(s, len);

		if (report_title(r)) {
			assert_true(strlen(report_title(r)) <= 120);
			assert_true(strlen(report_text(r)) <= REPORT_TEXT_MAX);
		}
	}
}

static void test_garbage(void **state)
{
	unsigned seed = 12345;
	const size_t len = 4u << 20;
	_cleanup_free_ char *s = malloc(len);

	assert_non_null(s);
	for (int round = 0; round < 4; round++) {
		_cleanup_(report_freep) struct report *r = NULL;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = (char)(seed >> 16);
			/* sprinkle oops headers and newlines into the noise */
			if ((seed & 0xfff) == 7 && i + 8 < len)
				memcpy(s + i, "\nBUG: ", 6);
		}
		r = parse(s, len);
		if (report_title(r))
			assert_non_null(report_text(r));
	}
}

static void test_from_title(void **state)
{
	static const char log[] = "booting\nsome output\0with a NUL\n";
	_cleanup_(report_freep) struct report *r = NULL;

	assert_int_equal(report_from_title(REPORT_TITLE_LOST_CONNECTION, log, sizeof(log) - 1, &r), 0);
	assert_string_equal(report_title(r), "lost connection to test machine");
	assert_string_equal(report_type(r), "LOST_CONNECTION");
	assert_string_equal(report_text(r), "booting\nsome output?with a NUL\n");
	assert_int_equal(report_end(r), sizeof(log) - 1);
	assert_true(report_matches_title(r, REPORT_TITLE_LOST_CONNECTION));
	report_free(r);
	r = NULL;
	assert_int_equal(report_from_title(REPORT_TITLE_REBOOT, "", 0, &r), 0);
	assert_string_equal(report_type(r), "REBOOT");
	assert_int_equal(report_from_title("", "", 0, &r), -EINVAL);
}

static const char *report_reason_or_empty(const struct report *r)
{
	return report_corrupted_reason(r) ? report_corrupted_reason(r) : "";
}

static void test_unterminated(void **state)
{
	/* cut in the middle of the CPU line: no call trace at all */
	size_t n = strstr(kasan_log, "Not tainted") - kasan_log;
	_cleanup_(report_freep) struct report *r = parse(kasan_log, n);
	/* cut right after the header */
	size_t m = strstr(kasan_log, "Read of size") - kasan_log;
	_cleanup_(report_freep) struct report *h = parse(kasan_log, m);

	assert_string_equal(report_title(r), "KASAN: use-after-free Read in ip6_send_skb");
	assert_true(report_corrupted(r));
	assert_string_equal(report_reason_or_empty(r), "no stack trace in report");
	assert_string_equal(report_title(h), "KASAN: use-after-free in ip6_send_skb");
	assert_true(report_corrupted(h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kasan),
		cmocka_unit_test(test_syzkaller_rules),
		cmocka_unit_test(test_syzkaller_suppressions),
		cmocka_unit_test(test_syzkaller_formats),
		cmocka_unit_test(test_syzkaller_frames),
		cmocka_unit_test(test_demangled_frames),
		cmocka_unit_test(test_no_crash),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_suppressed_and_corrupted),
		cmocka_unit_test(test_nuls_and_crs),
		cmocka_unit_test(test_huge_lines),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_unterminated),
		cmocka_unit_test(test_from_title),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_syscall_prefixes),
		cmocka_unit_test(test_stall_prefixes),
		cmocka_unit_test(test_titles_same),
		cmocka_unit_test(test_symbolised),
		cmocka_unit_test(test_guilty_rules),
		cmocka_unit_test(test_corruption_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
