/* The Linux oops table: which console lines start a crash report and how
 * each kind of report is titled.  Formats and titles follow syzkaller
 * (pkg/report/linux.go) because syzbot deduplicates bugs by these titles;
 * this table is kfix's own rendering of those facts.
 *
 * Regex macros: {{PC}} a "[<ffffffff81234567>]" address, {{FUNC}} a
 * function name followed by "+" or "." (capture 1 is the name), {{SRC}} a
 * "path/file.c:123" location, {{ADDR}} a 0x-number. */
#include "config.h"

#include "report-internal.h"

/* x86/arm64 "Call Trace:"/"Call trace:", arm "Backtrace:". */
#define CALL_TRACE "(?:Call [Tt]race:|Backtrace:)"

/* x86 "RIP: 0010:func+0x1/0x2", powerpc "NIP", arm64 "pc : func+", arm
 * "PC is at func+": the faulting function of register dumps. */
const char *const report_rip_frame =
	"(?:N?IP|pc |PC is at):? (?:(?:[0-9]+:)?(?:{{PC}} +){0,2}{{FUNC}}|(?:[0-9]+:)?0x[0-9a-f]+"
	"|(?:[0-9]+:)?{{PC}} +\\[< *\\(null\\)>\\] +\\(null\\)|[0-9]+: +\\(null\\))";
#define RIP_FRAME \
	"(?:N?IP|pc |PC is at):? (?:(?:[0-9]+:)?(?:{{PC}} +){0,2}{{FUNC}}|(?:[0-9]+:)?0x[0-9a-f]+" \
	"|(?:[0-9]+:)?{{PC}} +\\[< *\\(null\\)>\\] +\\(null\\)|[0-9]+: +\\(null\\))"

/* Stack shapes shared by many formats. */
static const struct stack_fmt call_trace = {
	.parts = { CALL_TRACE, STACK_TRACE },
};
static const struct stack_fmt rip_then_trace = {
	.parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE },
};
/* arm/arm64: "PC is at" / "pc : " then "Call trace:" or "Backtrace:". */
static const struct stack_fmt arm_stack = {
	.parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE },
};
static const struct stack_fmt rip_only = {
	.parts = { RIP_FRAME },
};
/* A WARNING traps: newer kernels print the RIP then the stack, older
 * kernels only the stack. */
#define WARNING_STACK(...) (&(const struct stack_fmt){                        \
	.parts = { "(?:" RIP_FRAME "|--- interrupt: [0-9]+ at {{FUNC}})", STACK_TRACE }, \
	.parts2 = { CALL_TRACE, STACK_TRACE },                              \
	.skip = { __VA_ARGS__ } })
#define TRACE_SKIP(...) (&(const struct stack_fmt){                           \
	.parts = { CALL_TRACE, STACK_TRACE }, .skip = { __VA_ARGS__ } })

/* lockdep's "is trying to release lock ... at:" names the site on the
 * next line, "[<pc>] func+0x"; the call trace follows. */
static const struct stack_fmt unlock_stack = {
	.parts = { "{{PC}} +{{FUNC}}", CALL_TRACE, STACK_TRACE },
};

static const struct stack_fmt stall_stack = {
	.parts = { "apic_timer_interrupt", RIP_FRAME, STACK_TRACE },
	.parts2 = { "(?:apic_timer_interrupt|Exception stack|el1h_64_irq)", STACK_TRACE },
	.skip = { "apic_timer_interrupt", "rcu" },
	.picker = PICK_STALL,
};

static const struct stack_fmt kfence_stack = {
	.parts = { "BUG: KFENCE: (?:[a-z\\- ]+) in {{FUNC}}", STACK_TRACE },
};

/* ---- "BUG:" ---------------------------------------------------------- */
static const struct oops_format bug_formats[] = {
	/* KASAN: the access kind and size come two lines below the header. */
	{ .title = "BUG: KASAN: ([a-z\\-]+) in {{FUNC}}(?:.*\\n)+?.*(Read|Write) (?:of size|at addr) (?:[0-9a-f]+)",
	  .fmt = "KASAN: {1} {3} in {frame}", .alt = "bad-access in {frame}",
	  .stack = &(const struct stack_fmt){
		  .parts = { "BUG: KASAN: (?:[a-z\\-]+) in {{FUNC}}", CALL_TRACE, STACK_TRACE },
		  /* arm64 tag-check faults (KASAN_HW_TAGS) */
		  .skip = { "kernel_fault", "tag_check", "mem_abort", "^el1_", "^el1h_" } } },
	{ .title = "BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in {{FUNC}}",
	  .fmt = "KASAN: invalid-free in {frame}", .alt = "invalid-free in {frame}",
	  .stack = &(const struct stack_fmt){
		  .parts = { "BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in {{FUNC}}",
			     CALL_TRACE, STACK_TRACE },
		  .skip = { "slab_", "kfree", "vunmap", "vfree" } } },
	{ .title = "BUG: KASAN: ([a-z\\-]+) on address(?:.*\\n)+?.*(Read|Write) of size ([0-9]+)",
	  .fmt = "KASAN: {1} {2}" },
	{ .title = "BUG: KASAN: (.*)", .fmt = "KASAN: {1}", .corrupted = true },
	/* where the uninit value was made: a local variable or an allocation */
#define KMSAN_ORIGIN "(?:Local variable .* created at:|Uninit was created at:)"
	{ .title = "BUG: KMSAN: kernel-usb-infoleak",
	  .report = "BUG: KMSAN: kernel-usb-infoleak in {{FUNC}}",
	  .fmt = "KMSAN: kernel-usb-infoleak in {frame}", .alt = "KMSAN origin in {origin}",
	  .stack = &(const struct stack_fmt){ .parts = { STACK_TRACE },
		  .skip = { "alloc_skb", "usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg",
			    "usb_interrupt_msg", "usb_control_msg" } },
	  .origin = KMSAN_ORIGIN, .no_stack_trace = true },
	{ .title = "BUG: KMSAN:", .report = "BUG: KMSAN: ([a-z\\-]+) in {{FUNC}}",
	  .fmt = "KMSAN: {1} in {frame}", .alt = "bad-access in {frame}",
	  /* newer KMSAN prints the stack right below the header; generic
	   * encryption code is where the uninit value is used, not its bug */
	  .stack = &(const struct stack_fmt){ .parts = { STACK_TRACE },
					      .skip = { "alloc_skb", "netlink_ack", "netlink_rcv_skb", "_encrypt$",
							"^(?:crypto|cipher|drbg|rng)_" } },
	  .origin = KMSAN_ORIGIN, .no_stack_trace = true },
	{ .title = "BUG: KCSAN: data-race", .report = "BUG: KCSAN: (.*)", .fmt = "KCSAN: {1}",
	  .no_stack_trace = true },
	{ .title = "BUG: KCSAN:", .report = "BUG: KCSAN: (.*)", .fmt = "KCSAN: {1}", .no_stack_trace = true },
	{ .title = "BUG: KFENCE: (use-after-free|out-of-bounds) (read|write) in {{FUNC}}",
	  .fmt = "KFENCE: {1} {2} in {frame}", .alt = "bad-access in {frame}",
	  .stack = &kfence_stack },
	{ .title = "BUG: KFENCE: invalid (read|write) in {{FUNC}}",
	  .fmt = "KFENCE: invalid {1} in {frame}", .alt = "bad-access in {frame}",
	  .stack = &kfence_stack },
	{ .title = "BUG: KFENCE: invalid free in {{FUNC}}",
	  .fmt = "KFENCE: invalid free in {frame}", .alt = "invalid-free in {frame}", .no_stack_trace = true,
	  .stack = &kfence_stack },
	{ .title = "BUG: KFENCE: memory corruption in {{FUNC}}",
	  .fmt = "KFENCE: memory corruption in {frame}", .no_stack_trace = true,
	  .stack = &kfence_stack },
	{ .title = "BUG: (?:unable to handle kernel paging request|unable to handle page fault for address|Unable to handle kernel data access)",
	  .fmt = "BUG: unable to handle kernel paging request in {frame}", .alt = "bad-access in {frame}",
	  .stack = &rip_then_trace },
	{ .title = "BUG: (?:unable to handle kernel NULL pointer dereference|kernel NULL pointer dereference|Kernel NULL pointer dereference)",
	  .fmt = "BUG: unable to handle kernel NULL pointer dereference in {frame}", .alt = "bad-access in {frame}",
	  .stack = &rip_then_trace },
	/* The second half of the header is a separate printk and may be lost. */
	{ .title = "BUG: (?:unable to handle kernel|Unable to handle kernel)",
	  .fmt = "BUG: unable to handle kernel", .corrupted = true },
	{ .title = "BUG: (spinlock|rwlock) (lockup suspected|already unlocked|recursion|cpu recursion|bad magic|wrong owner|wrong CPU|trylock failure on UP)",
	  .fmt = "BUG: {1} {2} in {frame}", .stack = TRACE_SKIP("spin_", "_lock", "_unlock") },
	{ .title = "BUG: soft lockup", .fmt = "BUG: soft lockup in {frame}", .alt = "stall in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE },
					      .picker = PICK_STALL } },
	{ .title = "BUG: .*still has locks held!",
	  .report = "BUG: .*still has locks held!(?:.*\\n)+?.*{{PC}} +{{FUNC}}",
	  .fmt = "BUG: still has locks held in {1}" },
	{ .title = "BUG: lock held when returning to user space",
	  .report = "BUG: lock held when returning to user space(?:.*\\n)+?.*leaving the kernel with locks still held(?:.*\\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
	  .fmt = "BUG: lock held when returning to user space in {1}", .no_stack_trace = true },
	{ .title = "BUG: bad unlock balance detected!", .fmt = "BUG: bad unlock balance in {frame}",
	  .stack = &unlock_stack },
	{ .title = "BUG: held lock freed!", .report = "BUG: held lock freed!(?:.*\\n)+?.*{{PC}} +{{FUNC}}",
	  .fmt = "BUG: held lock freed in {1}" },
	/* arm64 words lockdep's wait-context report differently; the x86
	 * title keeps one bug one title. */
	{ .title = "BUG: Invalid wait context", .fmt = "WARNING: locking bug in {frame}",
	  .stack = TRACE_SKIP("lock_sock", "release_sock") },
	{ .title = "BUG: Bad rss-counter state", .fmt = "BUG: Bad rss-counter state", .no_stack_trace = true },
	{ .title = "BUG: non-zero nr_ptes on freeing mm", .fmt = "BUG: non-zero nr_ptes on freeing mm", .no_stack_trace = true },
	{ .title = "BUG: non-zero nr_pmds on freeing mm", .fmt = "BUG: non-zero nr_pmds on freeing mm", .no_stack_trace = true },
	/* the filesystem and device in the message only split one bug */
	{ .title = "BUG: Dentry .* still in use",
	  .report = "BUG: Dentry .* still in use \\([0-9]+\\) \\[(unmount) of ([^\\]]+)\\]",
	  .fmt = "BUG: Dentry still in use in {1}", .alt = "BUG: Dentry still in use [{1} of {2}]" },
	/* the page's allocation site, not where the bad state was seen (an
	 * arm64 report without it is corrupted, as syzkaller has it) */
	{ .title = "BUG: Bad page (state|cache)", .fmt = "BUG: Bad page {1} in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { "page last allocated", STACK_TRACE },
		  .skip = { "(free|put|get|update|release)_page", "free_unref", "^_*folio",
			    "truncate_inode_pages", "page_frag_free", "alloc", "vmap", "page_owner" } } },
	{ .title = "BUG: Bad page map", .fmt = "BUG: Bad page map" },
	{ .title = "BUG: workqueue lockup", .fmt = "BUG: workqueue lockup", .no_stack_trace = true },
	{ .title = "BUG: sleeping function called from invalid context at (.*)",
	  .fmt = "BUG: sleeping function called from invalid context in {frame}", .stack = &call_trace },
	{ .title = "BUG: using ([a-z_]+)\\(\\) in preemptible",
	  .fmt = "BUG: using {1}() in preemptible code in {frame}",
	  .stack = TRACE_SKIP("dump_stack", "preemption", "preempt", "debug_", "processor_id", "this_cpu") },
	{ .title = "BUG: workqueue leaked lock or atomic",
	  .report = "BUG: workqueue leaked lock or atomic(?:.*\\n)+?.*last function: ([a-zA-Z0-9_]+)\\n",
	  .fmt = "BUG: workqueue leaked lock or atomic in {1}", .no_stack_trace = true },
	{ .title = "BUG: scheduling while atomic", .fmt = "BUG: scheduling while atomic in {frame}",
	  .stack = TRACE_SKIP("schedule") },
	{ .title = "BUG: memory leak", .fmt = "memory leak in {frame}",
	  .stack = &(const struct stack_fmt){
		  .parts = { "backtrace(?: \\(crc [[:xdigit:]]*\\))?:", STACK_TRACE },
		  .skip = { "kmemleak", "mmap", "kmem", "slab", "alloc", "create_object", "idr_get",
			    "list_lru_init", "kasprintf", "kvasprintf", "pcpu_create", "strdup",
			    "strndup", "memdup" } } },
	/* The overflow is deep below the code that recursed: name the
	 * frame that entered it, as for stalls. */
	{ .title = "BUG: .*stack guard page was hit at", .fmt = "BUG: stack guard page was hit in {frame}",
	  .alt = "stack-overflow in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE },
					      .picker = PICK_STALL } },
	{ .title = "BUG: MAX_STACK_TRACE_ENTRIES too low!", .fmt = "BUG: MAX_STACK_TRACE_ENTRIES too low!",
	  .no_stack_trace = true },
	{ .title = "BUG:[[:space:]]*(?:\\n|$)", .fmt = "BUG: corrupted", .corrupted = true },
	{ 0 }
};
static const char *const bug_suppressions[] = {
	"ODEBUG:",                               /* CONFIG_DEBUG_OBJECTS chatter */
	"Boot_DEBUG:", "xlog_status:", "DEBUG:", /* Android boot output */
	"BUG: no syscalls can create resource",  /* syzkaller host checks */
	NULL
};

/* ---- "WARNING:" ------------------------------------------------------ */
static const struct oops_format warning_formats[] = {
	{ .title = "WARNING: .*lib/debugobjects\\.c.* (?:debug_print|debug_check|at)",
	  .fmt = "WARNING: ODEBUG bug in {frame}",
	  .stack = WARNING_STACK("debug_", "rcu", "hrtimer_", "timer_", "work_", "percpu_", "vunmap",
				 "vfree", "__free_", "debug_check", "kobject_") },
	{ .title = "WARNING: .*mm/usercopy\\.c.* (?:usercopy_warn|at)", .fmt = "WARNING: bad usercopy in {frame}",
	  .stack = WARNING_STACK("usercopy", "__check") },
	{ .title = "WARNING: .*lib/kobject\\.c.* (?:kobject_|at)", .fmt = "WARNING: kobject bug in {frame}",
	  .stack = WARNING_STACK("kobject_") },
	{ .title = "WARNING: .*fs/proc/generic\\.c.* (?:proc_register|at)", .fmt = "WARNING: proc registration bug in {frame}",
	  .stack = WARNING_STACK("proc_") },
	{ .title = "WARNING: .*lib/refcount\\.c.* (?:refcount_|at)", .fmt = "WARNING: refcount bug in {frame}",
	  .stack = WARNING_STACK("refcount", "kobject_") },
	{ .title = "WARNING: .*kernel/locking/lockdep\\.c.*lock_", .fmt = "WARNING: locking bug in {frame}",
	  .stack = WARNING_STACK("lock_sock", "release_sock") },
	{ .title = "WARNING: lock held when returning to user space",
	  .report = "WARNING: lock held when returning to user space(?:.*\\n)+?.*leaving the kernel with locks still held(?:.*\\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
	  .fmt = "WARNING: lock held when returning to user space in {1}", .no_stack_trace = true },
	{ .title = "WARNING: .*mm/vmalloc.c.*__vmalloc_node", .fmt = "WARNING: zero-size vmalloc in {frame}",
	  .stack = WARNING_STACK() },
	{ .title = "WARNING: .*mm/.*\\.c.* k?.?malloc", .fmt = "WARNING: kmalloc bug in {frame}",
	  .stack = WARNING_STACK("kmalloc", "krealloc", "slab", "kmem") },
	{ .title = "WARNING: .* usb_submit_urb", .fmt = "WARNING in {frame}/usb_submit_urb",
	  .stack = WARNING_STACK("usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg",
				 "usb_interrupt_msg", "usb_control_msg") },
	{ .title = "WARNING: .* at {{SRC}} {{FUNC}}", .fmt = "WARNING in {frame}", .stack = WARNING_STACK() },
	/* since 6.15: "WARNING: fs/x.c:12 at func+0x1/0x2, CPU#0: task/1" */
	{ .title = "WARNING: {{SRC}} at ", .fmt = "WARNING in {frame}", .stack = WARNING_STACK() },
	/* ... and with the failed condition first:
	 * "WARNING: [!list_empty(&x)] fs/x.c:12 at func+0x1/0x2, CPU#0: task/1" */
	{ .title = "WARNING: \\[.*\\] {{SRC}} at {{FUNC}}", .fmt = "WARNING in {frame}", .stack = WARNING_STACK() },
	{ .title = "WARNING: possible circular locking dependency detected",
	  .report = "WARNING: possible circular locking dependency detected(?:.*\\n)+?.*is trying to acquire lock",
	  .fmt = "possible deadlock in {frame}",
	  .stack = &(const struct stack_fmt){
		  .parts = { "at: (?:{{PC}} +)?{{FUNC}}", "at: (?:{{PC}} +)?{{FUNC}}", STACK_TRACE },
		  /* Work items take locks of their own: such deadlocks belong to
		   * the workqueue user, not to these helpers. */
		  .skip = { "process_one_work", "flush_workqueue", "drain_workqueue", "destroy_workqueue" } } },
	{ .title = "WARNING: possible irq lock inversion dependency detected",
	  .report = "WARNING: possible irq lock inversion dependency detected(?:.*\\n)+?.*just changed the state of lock(?:.*\\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	/* Blame where the irq-safe lock is taken from interrupt context. */
	{ .title = "WARNING: .*-safe -> .*-unsafe lock order detected", .fmt = "possible deadlock in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { "which became (?:.*) at:", STACK_TRACE } } },
	{ .title = "WARNING: possible recursive locking detected",
	  .report = "WARNING: possible recursive locking detected(?:.*\\n)+?.*is trying to acquire lock(?:.*\\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	/* the lock site after "takes:" must be there, but the title names
	 * the code that took the lock in the wrong state: the call trace */
	{ .title = "WARNING: inconsistent lock state",
	  .report = "WARNING: inconsistent lock state(?:.*\\n)+?.*takes(?:.*\\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
	  .fmt = "inconsistent lock state in {frame}", .stack = &call_trace },
	{ .title = "WARNING: suspicious RCU usage", .report = "WARNING: suspicious RCU usage(?:.*\\n)+?.*?{{SRC}}",
	  .fmt = "WARNING: suspicious RCU usage in {frame}",
	  .stack = TRACE_SKIP("rcu", "kmem", "slab") },
	{ .title = "WARNING: kernel stack regs at [0-9a-f]+ in [^ ]* has bad '([^']+)' value",
	  .fmt = "WARNING: kernel stack regs has bad '{1}' value", .no_stack_trace = true },
	{ .title = "WARNING: kernel stack frame pointer at [0-9a-f]+ in [^ ]* has bad value",
	  .fmt = "WARNING: kernel stack frame pointer has bad value", .no_stack_trace = true },
	{ .title = "WARNING: bad unlock balance detected!", .fmt = "WARNING: bad unlock balance in {frame}",
	  .stack = &unlock_stack },
	{ .title = "WARNING: held lock freed!",
	  .report = "WARNING: held lock freed!(?:.*\\n)+?.*at:(?: {{PC}})? +{{FUNC}}",
	  .fmt = "WARNING: held lock freed in {1}" },
	{ .title = "WARNING: kernel stack regs .* has bad 'bp' value", .fmt = "WARNING: kernel stack regs has bad value",
	  .no_stack_trace = true },
	{ .title = "WARNING: kernel stack frame pointer .* has bad value", .fmt = "WARNING: kernel stack regs has bad value",
	  .no_stack_trace = true },
	{ .title = "WARNING: .*still has locks held!",
	  .report = "WARNING: .*still has locks held!(?:.*\\n)+?.*at: {{FUNC}}",
	  .fmt = "WARNING: still has locks held in {1}" },
	{ .title = "WARNING: Nested lock was not taken", .fmt = "WARNING: nested lock was not taken in {frame}",
	  .stack = WARNING_STACK() },
	{ .title = "WARNING:[[:space:]]*(?:\\n|$)", .fmt = "WARNING: corrupted", .corrupted = true },
	{ 0 }
};
static const char *const warning_suppressions[] = {
	"WARNING: /etc/ssh/moduli does not exist, using fixed modulus", /* sshd */
	"WARNING: workqueue cpumask: online intersect > possible intersect",
	"WARNING: [Tt]he mand mount option",
	"WARNING: Unsupported flag value\\(s\\) of 0x%x in DT_FLAGS_1", /* printed by ld.so */
	/* kfix's own, beyond linux.go at 1e72964b0: boot notices of newer
	 * kernels (mitigations printed over two lines) that are not crashes */
	"WARNING: [0-9]+ bad .* reported",
	"WARNING: See https://kernel.org/doc/html/latest/admin-guide/hw-vuln/",
	"Speculative Return Stack Overflow: WARNING",
	/* linux.go's */
	"WARNING: fbcon: Driver '(.*)' missed to adjust virtual screen size (\\((?:\\d+)x(?:\\d+) vs\\. (?:\\d+)x(?:\\d+)\\))",
	"WARNING: Unprivileged eBPF is enabled with eIBRS",
	"WARNING: See https.* for mitigation options.",
	"WARNING: kernel not compiled with CPU_SRSO",
	"EXT4-[Ff][Ss](?: \\(.*\\))?:", /* __ext4_msg */
	"(?i)warning: .* uses (deprecated v2 capabilities|wireless extensions)",
	"XFS \\(\\w+\\): WARNING",
	NULL
};

/* ---- "INFO:" --------------------------------------------------------- */
static const struct oops_format info_formats[] = {
	{ .title = "INFO: possible circular locking dependency detected",
	  .report = "INFO: possible circular locking dependency detected \\](?:.*\\n)+?.*is trying to acquire lock(?:.*\\n)+?.*at: {{PC}} +{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	{ .title = "INFO: possible irq lock inversion dependency detected",
	  .report = "INFO: possible irq lock inversion dependency detected \\](?:.*\\n)+?.*just changed the state of lock(?:.*\\n)+?.*at: {{PC}} +{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	{ .title = "INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected",
	  .report = "INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected \\](?:.*\\n)+?.*is trying to acquire(?:.*\\n)+?.*at: {{PC}} +{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	{ .title = "INFO: possible recursive locking detected",
	  .report = "INFO: possible recursive locking detected \\](?:.*\\n)+?.*is trying to acquire lock(?:.*\\n)+?.*at: {{PC}} +{{FUNC}}",
	  .fmt = "possible deadlock in {1}" },
	{ .title = "INFO: inconsistent lock state",
	  .report = "INFO: inconsistent lock state \\](?:.*\\n)+?.*takes(?:.*\\n)+?.*at: {{PC}} +{{FUNC}}",
	  .fmt = "inconsistent lock state in {1}" },
	{ .title = "INFO: rcu_(?:preempt|sched|bh|tasks) (?:self-)?detected(?: expedited)? stall",
	  .fmt = "INFO: rcu detected stall in {frame}", .alt = "stall in {frame}", .stack = &stall_stack },
	{ .title = "INFO: trying to register non-static key",
	  .fmt = "INFO: trying to register non-static key in {frame}",
	  .stack = TRACE_SKIP("stack", "lock", "IRQ") },
	{ .title = "INFO: suspicious RCU usage", .report = "INFO: suspicious RCU usage(?:.*\\n)+?.*?{{SRC}}",
	  .fmt = "INFO: suspicious RCU usage in {frame}",
	  .stack = TRACE_SKIP("rcu", "kmem", "slab") },
	{ .title = "INFO: task {{TASK}} blocked (?:in I/O wait )?for more than [0-9]+ seconds", .fmt = "INFO: task hung in {frame}",
	  .alt = "hang in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { CALL_TRACE, STACK_TRACE }, .picker = PICK_HUNG_TASK } },
	{ .title = "INFO: task {{TASK}} can't die for more than .* seconds", .fmt = "INFO: task can't die in {frame}",
	  .alt = "hang in {frame}", .stack = TRACE_SKIP("schedule") },
	/* Corrupted old-style KASAN reports end up here. */
	{ .title = "INFO: (Freed|Allocated) in (.*)", .fmt = "INFO: {1} in {2}", .corrupted = true },
	{ .title = "INFO:[[:space:]]*(?:\\n|$)", .fmt = "INFO: corrupted", .corrupted = true },
	{ 0 }
};
static const char *const info_suppressions[] = {
	"INFO: lockdep is turned off",
	"INFO: Stall ended before state dump start",
	"INFO: NMI handler",
	"INFO: CAM-ISP:", /* Android camera driver chatter */
	"[A-Z]_INFO:",                                   /* Android drivers' log levels */
	"INFO: sys_.* is not present in /proc/kallsyms", /* syzkaller host checks */
	"INFO: no syscalls can create resource",
	"INFO: recovery required on readonly filesystem",
	"(handler|interrupt).*took too long",
	"[^ \\t\\]]INFO:", /* "CAM_INFO:", "rmt_storage:INFO:": a driver's log level */
	"INFO: task .* blocked for more than [0-9]+ seconds.*\\n?.*Not tainted", /* never matches alone */
	NULL
};

/* ---- the rest --------------------------------------------------------- */
static const struct oops_format paging_formats[] = {
	/* arm64 names the kind of access; kinds without a format here
	 * ("execute from non-executable memory", "write to read-only
	 * memory") are titled by their line, as syzbot titles them */
	{ .title = "Unable to handle kernel (paging request|NULL pointer dereference|access to user memory)",
	  .fmt = "BUG: unable to handle kernel {1} in {frame}", .alt = "bad-access in {frame}",
	  .stack = &arm_stack },
	{ 0 }
};
static const struct oops_format gpf_formats[] = {
	{ .title = "general protection fault.*:", .fmt = "general protection fault in {frame}",
	  .alt = "bad-access in {frame}", .stack = &rip_then_trace },
	{ 0 }
};
static const struct oops_format stack_segment_formats[] = {
	{ .title = "stack segment: ", .fmt = "stack segment fault in {frame}", .stack = &rip_then_trace },
	{ 0 }
};
static const struct oops_format panic_formats[] = {
	/* The kernel may fail to print or unwind a corrupted stack. */
	{ .title = "Kernel panic - not syncing: stack-protector:",
	  .report = "Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: {{FUNC}}",
	  .fmt = "kernel panic: stack is corrupted in {1}", .no_stack_trace = true },
	{ .title = "Kernel panic - not syncing: stack-protector:",
	  .report = "Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: [a-f0-9]+",
	  .fmt = "kernel panic: stack is corrupted in {frame}", .stack = TRACE_SKIP("stack_chk") },
	{ .title = "Kernel panic - not syncing: corrupted stack end",
	  .report = "Kernel panic - not syncing: corrupted stack end detected inside scheduler",
	  .fmt = "kernel panic: corrupted stack end in {frame}", .alt = "stack-overflow in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { CALL_TRACE, STACK_TRACE },
					      .skip = { "schedule", "retint_kernel" }, .picker = PICK_STALL } },
	{ .title = "Kernel panic - not syncing: kernel stack overflow", .fmt = "kernel stack overflow in {frame}",
	  .alt = "stack-overflow in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { CALL_TRACE, STACK_TRACE },
					      .skip = { "bad_stack" }, .picker = PICK_STALL } },
	{ .title = "Kernel panic - not syncing: Attempted to kill init!", .fmt = "kernel panic: Attempted to kill init!" },
	{ .title = "Kernel panic - not syncing: Couldn't open N_TTY ldisc for [^ ]+ --- error -[0-9]+",
	  .fmt = "kernel panic: Couldn't open N_TTY ldisc" },
	/* These follow another report: seeing them first means the report
	 * above was lost. */
	{ .title = "Kernel panic - not syncing: Fatal exception", .fmt = "kernel panic: Fatal exception", .corrupted = true },
	{ .title = "Kernel panic - not syncing: panic_on_warn set", .fmt = "kernel panic: panic_on_warn set", .corrupted = true },
	{ .title = "Kernel panic - not syncing: hung_task: blocked tasks", .fmt = "kernel panic: hung_task: blocked tasks", .corrupted = true },
	{ .title = "Kernel panic - not syncing: (.*)", .fmt = "kernel panic: {1}" },
	{ 0 }
};
static const struct oops_format double_fault_formats[] = {
	{ .title = "PANIC: double fault", .fmt = "PANIC: double fault in {frame}", .stack = &rip_only },
	{ 0 }
};
static const struct oops_format kernel_bug_formats[] = {
	{ .title = "kernel BUG at mm/usercopy.c", .fmt = "BUG: bad usercopy in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { CALL_TRACE, STACK_TRACE }, .skip = { "usercopy", "__check" } } },
	{ .title = "kernel BUG at lib/list_debug.c", .fmt = "BUG: corrupted list in {frame}", .alt = "bad-access in {frame}",
	  .stack = &call_trace },
	/* many skb helpers BUG_ON their caller's mistakes */
	{ .title = "kernel BUG at (.*)", .fmt = "kernel BUG in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE },
					      .skip = { "^skb_" } } },
	{ 0 }
};
static const struct oops_format kernel_bug2_formats[] = {
	{ .title = "Kernel BUG (.*)", .fmt = "kernel BUG {1}" },
	{ 0 }
};
static const struct oops_format object_free_formats[] = {
	{ .title = "BUG kmalloc-.*: Object already free", .fmt = "BUG: Object already free" },
	{ 0 }
};
static const struct oops_format divide_formats[] = {
	{ .title = "divide[ _]error: ", .fmt = "divide error in {frame}", .stack = &rip_only },
	{ 0 }
};
static const struct oops_format invalid_op_formats[] = {
	{ .title = "invalid opcode: ", .fmt = "invalid opcode in {frame}", .stack = &rip_only },
	{ 0 }
};
static const struct oops_format ubsan_formats[] = {
	{ .title = "UBSAN:", .report = "UBSAN: Undefined behaviour in",
	  .fmt = "UBSAN: undefined-behaviour in {frame}", .stack = TRACE_SKIP("ubsan", "overflow") },
	{ .title = "UBSAN: array-index-out-of-bounds in", .fmt = "UBSAN: array-index-out-of-bounds in {frame}",
	  .alt = "bad-access in {frame}", .stack = TRACE_SKIP("ubsan", "overflow") },
	{ .title = "UBSAN:", .report = "UBSAN: (.*?) in", .fmt = "UBSAN: {1} in {frame}",
	  .stack = TRACE_SKIP("ubsan", "overflow") },
	{ 0 }
};
static const struct oops_format reboot_formats[] = {
	{ .title = "^Booting the kernel", .fmt = "unexpected kernel reboot", .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format netdev_formats[] = {
	{ .title = "unregister_netdevice: waiting for (?:.*) to become free",
	  .fmt = "unregister_netdevice: waiting for DEV to become free", .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format busy_inodes_formats[] = {
	{ .title = "VFS: Busy inodes after unmount", .fmt = "VFS: Busy inodes after unmount (use-after-free)",
	  .no_stack_trace = true },
	{ 0 }
};
/* Older kernels' own use-after-free message for struct file. */
static const struct oops_format file_count_formats[] = {
	{ .title = "VFS: Close: file count is 0", .fmt = "VFS: Close: file count is zero (use-after-free)",
	  .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format int3_formats[] = {
	{ .title = "int3: ", .fmt = "int3 in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { RIP_FRAME, CALL_TRACE, STACK_TRACE } } },
	{ 0 }
};
static const struct oops_format internal_error_formats[] = {
	{ .title = "Internal error:", .fmt = "Internal error in {frame}", .alt = "bad-access in {frame}",
	  .stack = &arm_stack },
	{ 0 }
};
static const struct oops_format unhandled_fault_formats[] = {
	{ .title = "Unhandled fault:", .fmt = "Unhandled fault in {frame}", .alt = "bad-access in {frame}",
	  .stack = &arm_stack },
	{ 0 }
};
static const struct oops_format alignment_formats[] = {
	{ .title = "Alignment trap:", .fmt = "Alignment trap in {frame}",
	  .stack = &arm_stack },
	{ 0 }
};
static const struct oops_format trusty_formats[] = {
	{ .title = "trusty: panic.* ASSERT FAILED",
	  .report = "trusty: panic \\(.*?\\):(?: DEBUG)? ASSERT FAILED at \\(.*?\\): (.+)",
	  .fmt = "trusty: ASSERT FAILED: {1}", .no_stack_trace = true },
	{ .title = "trusty: panic.* ASSERT FAILED.*: *(.*)", .fmt = "trusty: ASSERT FAILED: {1}", .corrupted = true },
	{ .title = "trusty: panic", .report = "trusty: panic \\(.*?\\): (.+)", .fmt = "trusty: panic: {1}",
	  .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format rust_formats[] = {
	/* the line after "panicked at FILE:LINE:COL:" is the panic message */
	{ .title = "rust_kernel: panicked", .report = "rust_kernel: panicked at [^\\n]*?\\n(.+?)\\n",
	  .fmt = "{1} in {frame}",
	  .stack = &(const struct stack_fmt){ .parts = { CALL_TRACE, STACK_TRACE },
					      .skip = { "__rustc::rust_begin_unwind" } } },
	{ 0 }
};
/* syz-executor and the Go runtime of the fuzzer report their own failures. */
static const struct oops_format syzfail_formats[] = {
	{ .title = "SYZFAIL:(.*)", .fmt = "SYZFAIL:{1}", .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format syzfatal_formats[] = {
	{ .title = "SYZFATAL:(.*)", .fmt = "SYZFATAL:{1}", .alt = "SYZFATAL", .no_stack_trace = true },
	{ 0 }
};
static const struct oops_format go_formats[] = {
	{ .title = "fatal error:", .fmt = "go runtime error", .no_stack_trace = true },
	{ 0 }
};
/* A Go program's panic (the fuzzer's, the executor's, gVisor's). */
static const struct oops_format panic_go_formats[] = {
	{ .title = "panic: Sentry detected .* stuck task", .fmt = "panic: Sentry detected stuck tasks",
	  .no_stack_trace = true },
	{ .title = "panic:(.*)", .fmt = "panic:{1}", .no_stack_trace = true },
	{ 0 }
};

static const char *const no_suppressions[] = { NULL };
/* Only a Go runtime's own "fatal error:" line counts, not a driver's. */
static const char *const go_suppressions[] = { "ALSA", "fatal error: cannot create timer", NULL };
/* kernel functions named *_panic and boot-time notices */
static const char *const panic_go_suppressions[] = {
	"_panic:", "xlog_status:", "ddb\\.onpanic:", "evtlog_status:", NULL
};
/* A user-space fault the kernel merely logs. */
static const char *const gpf_suppressions[] = {
	"general protection fault ip:", "general protection fault .* error:[0-9]+ in ", NULL
};
/* The phrase quoted inside another message is not a reboot. */
static const char *const reboot_suppressions[] = {
	"'.*Booting the kernel",
	/* boot messages read back from the console and echoed as bad mount options */
	"Parsing ELF|Decompressing Linux|Unknown parameter '", NULL
};

/* linux.go linuxOopses then report.go commonOopses, in their order: on a
 * line that two headers share, the earlier family wins. */
const struct oops report_oopses[] = {
	{ "BUG:", bug_formats, bug_suppressions },
	{ "WARNING:", warning_formats, warning_suppressions },
	{ "INFO:", info_formats, info_suppressions },
	{ "Unable to handle kernel", paging_formats, no_suppressions },
	{ "general protection fault", gpf_formats, gpf_suppressions },
	{ "stack segment: ", stack_segment_formats, no_suppressions },
	{ "Kernel panic", panic_formats, no_suppressions },
	{ "PANIC: double fault", double_fault_formats, no_suppressions },
	{ "rust_kernel: panicked", rust_formats, no_suppressions },
	{ "kernel BUG", kernel_bug_formats, no_suppressions },
	{ "Kernel BUG", kernel_bug2_formats, no_suppressions },
	{ "BUG kmalloc-", object_free_formats, no_suppressions },
	{ "divide error:", divide_formats, no_suppressions },
	{ "divide_error:", divide_formats, no_suppressions },
	{ "invalid opcode:", invalid_op_formats, no_suppressions },
	{ "int3:", int3_formats, no_suppressions },
	{ "UBSAN:", ubsan_formats, no_suppressions },
	{ "Booting the kernel.", reboot_formats, reboot_suppressions },
	{ "unregister_netdevice: waiting for", netdev_formats, no_suppressions },
	{ "VFS: Close: file count is 0", file_count_formats, no_suppressions },
	{ "VFS: Busy inodes after unmount", busy_inodes_formats, no_suppressions },
	{ "Internal error:", internal_error_formats, no_suppressions },
	{ "Unhandled fault:", unhandled_fault_formats, no_suppressions },
	{ "Alignment trap:", alignment_formats, no_suppressions },
	{ "trusty: panic", trusty_formats, no_suppressions },
	{ "fatal error:", go_formats, go_suppressions },
	{ "SYZFAIL:", syzfail_formats, no_suppressions },
	{ "SYZFATAL:", syzfatal_formats, no_suppressions },
	{ "panic:", panic_go_formats, panic_go_suppressions },
};
const size_t report_n_oopses = ARRAY_SIZE(report_oopses);

/* report_frames(): the first call trace of the report (or, for reports
 * that print frames right under the header, those). */
const struct stack_fmt report_trace_fmt = {
	.parts = { "(?:" CALL_TRACE "|[^k] backtrace(?: \\(crc [[:xdigit:]]*\\))?:)", STACK_TRACE },
	.parts2 = { STACK_TRACE },
};

/* riscv's show_regs() ends with this line and prints the stack without a
 * header: a start that may legitimately be followed by no frame. */
const char report_riscv_stack_start[] =
	"status: [0-9a-f]{16} badaddr: [0-9a-f]{16} cause: [0-9a-f]{16}";

/* Lines that start a call trace (and end the previous one): linux.go
 * stackStartRes ("stack backtrace:" excluded, a kmemleak crc allowed). */
const char *const report_stack_starts[] = {
	"Call (?:T|t)race", "Allocated:", "Allocated by task [0-9]+:", "Freed:", "Freed by task [0-9]+:",
	"[^k] backtrace(?: \\(crc [[:xdigit:]]*\\))?:", "Backtrace:", "Uninit was stored to memory at",
	report_riscv_stack_start, NULL
};
/* A frame line: "[<addr>] func+0x1/0x2" or " func+0x1/0x2 file.c:1". */
const char *const report_frame_res[] = {
	"^ *(?:{{PC}} ){0,2}{{FUNC}}",
	/* arm: "[<c0123>] (callee) from [<c0456>] (caller+0x1/0x2)" */
	"^ *{{PC}} \\(([a-zA-Z0-9_.]+)\\) from {{PC}} \\({{FUNC}}",
	"^ *(?:{{PC}} ){0,2}([a-zA-Z0-9_.]+) (?:[a-zA-Z0-9-_/.]+\\.[a-z]+:[0-9]+)(?: \\[inline\\])?",
	NULL
};
/* Fault injection stacks get mixed into reports. */
const char *const report_corrupted_lines[] = {
	"^( \\[\\<?(?:0x)?[0-9a-f]+\\>?\\])? should_fail(slab)?(_ex)?(\\.[a-z0-9.]+)?\\+0x",
	NULL
};

/* Generic helpers never taken as the guilty function: linux.go
 * linuxStackParams.skipPatterns whole, in its order (unanchored regexes
 * unless written with ^/$). */
const char *const report_skip_frames[] = {
	"__sanitizer", "__asan", "kasan", "hwasan", "__msan", "kmsan", "kcsan_setup_watchpoint",
	"check_memory_region", "check_heap_object", "check_object", "read_word_at_a_time",
	"(read|write)_once_.*nocheck", "print_address_description", "panic", "invalid_op",
	"report_bug", "fixup_bug", "print_report", "print_usage_bug", "do_error", "invalid_op",
	"_trap$|do_trap", "show_stack", "dump_stack", "walk_stack", "dump_backtrace", "warn_slowpath",
	"warn_alloc", "warn_bogus", "__warn", "alloc_page", "k?v?(?:m|z|c)alloc", "krealloc",
	"kmem_cache", "allocate_slab", "__alloc_frozen_pages_noprof", "folio_(?:alloc|unlock)",
	"filemap_alloc_folio", "__filemap_get_folio", "find_or_create_page", "do_read_cache_folio",
	"read_cache_page", "pagecache_get_page", "grab_cache_page_write_begin", "slab_",
	"debug_object", "timer_is_static_object", "work_is_static_object", "__might_fault",
	"print_unlock", "imbalance_bug", "lockdep", "bh_enable", "bh_disable", "perf_trace",
	"lock_acquire", "lock_release", "lock_class", "mark_lock", "(reacquire|mark)_held_locks",
	"raw_spin_rq", "spin_lock", "spin_trylock", "spin_unlock", "read_lock", "read_trylock",
	"write_lock", "write_trylock", "read_unlock", "write_unlock", "^down$", "down_read",
	"down_write", "down_read_trylock", "down_write_trylock", "down_trylock", "up_read",
	"up_write", "^mutex_", "^__mutex_", "^rt_mutex_", "owner_on_cpu", "osq_lock", "osq_unlock",
	"atomic(64)?_(dec|inc|read|set|or|xor|and|add|sub|fetch|xchg|cmpxchg|try)",
	"(set|clear|change|test)_bit", "__wake_up", "^refcount_", "^kref_", "ref_tracker",
	"seqprop_assert", "memcpy", "memcmp", "memset", "memchr", "memmove", "memdup", "strcmp",
	"strncmp", "strcpy", "strlcpy", "strncpy", "strscpy", "strlen", "strstr", "strnstr",
	"strnlen", "strchr", "strdup", "strndup", "copy_to_user", "copy_from_user", "copy_to_iter",
	"copy_from_iter", "copy_page_to_iter", "copy_page_from_iter", "copy_folio_to_iter",
	"^copyin$", "^copyout$", "put_user", "get_user", "might_fault", "might_sleep", "list_add",
	"list_del", "list_replace", "list_move", "list_splice", "^rb_", "^__rb_", "_indirect_thunk_",
	"string", "pointer", "snprintf", "scnprintf", "kasprintf", "kvasprintf", "printk",
	"va_format", "dev_info", "dev_notice", "dev_warn", "dev_err", "dev_alert", "dev_crit",
	"dev_emerg", "program_check_exception", "program_check_common", "del_timer", "flush_work",
	"__cancel_work_timer", "cancel_work_sync", "try_to_grab_pending", "flush_workqueue",
	"drain_workqueue", "destroy_workqueue", "queue_work", "finish_wait", "kthread_stop",
	"kobject_", "add_uevent_var", "get_device_parent", "device_add", "device_del",
	"device_unregister", "device_destroy", "device_release", "devres_release_all",
	"hwrng_unregister", "i2c_del_adapter", "__unregister_client", "device_for_each_child",
	"rollback_registered", "unregister_netdev", "sysfs_remove", "device_remove_file",
	"tty_unregister_device", "dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs",
	"usb_control_msg", "usb_hcd_submit_urb", "usb_submit_urb", "^complete$",
	"wait_for_completion", "^kv?free$", "kfree_skb", "readb$", "readw$", "readl$", "readq$",
	"writeb$", "writew$", "writel$", "writeq$", "logic_in", "logic_out", "^crc\\d+", "crc_itu_t",
	"__might_resched", "assertfail", "^iput$", "^iput_final$", "^ihold$", "hex_dump_to_buffer",
	"print_hex_dump", "^klist_", "(trace|lockdep)_(hard|soft)irq", "^(un)?lock_page",
	"stack_trace_consume_entry", "arch_stack_walk", "stack_trace_save", "insert_work",
	"__queue_delayed_work", "queue_delayed_work_on", "ida_free", "do_(kernel|translation)_fault",
	"do_mem_abort", "el1_abort", "el1h_64_sync(?:_handler)?", "print_tainted",
	"xas_(?:start|load|find)", "find_lock_entries", "truncate_inode_pages_range", "__phys_addr",
	"__fortify_report", "cleanup_srcu_struct", "rhashtable_lookup", "extract_(user|iter)_to_sg",
	"drop_nlink", "^get_taint$", "^put_device$", "lock_timer_base", "__timer_delete_sync",
	"sk_stop_timer_sync", "__mod_timer", "fast_dput", "dput", "mark_buffer_dirty",
	NULL
};

/* Functions that dispatch work: in a stall, the frame just above one of
 * these names the looping code better than the top of the stack. */
const char *const report_stall_anchors[] = {
	/* generic dispatchers of work, and some of their callers */
	"process_one_work", "do_syscall_", "do_fast_syscall_", "sysenter_dispatch",
	"tracesys_phase2", "el0_svc_handler", "invoke_syscall", "ret_fast_syscall",
	"netif_receive_skb", "do_softirq", "call_timer_fn", "_run_timers", "run_timer_softirq",
	"hrtimer_run", "run_ksoftirqd", "smpboot_thread_fn", "^kthread$", "start_secondary",
	"cpu_startup_entry", "ret_from_fork",
	/* syscalls that dispatch further (file, block and socket operations) */
	"vfs_write", "vfs_read", "vfs_iter_read", "vfs_iter_write", "do_iter_read",
	"do_iter_write", "call_read_iter", "call_write_iter", "new_sync_read", "new_sync_write",
	"vfs_ioctl", "ksys_ioctl", "compat_ioctl", "compat_sys_ioctl", "blkdev_driver_ioctl",
	"blkdev_ioctl", "^call_read_iter", "^call_write_iter", "do_iter_readv_writev",
	"^call_mmap", "mmap_region", "do_mmap", "do_dentry_open", "vfs_open",
	"^sock_sendmsg", "^sock_recvmsg", "^sock_release", "^__sock_release", "^setsockopt$",
	"kernel_setsockopt", "sock_common_setsockopt", "^listen$", "kernel_listen",
	"sk_common_release", "^sock_mmap", "^accept$", "kernel_accept", "^sock_do_ioctl",
	"^sock_ioctl", "^compat_sock_ioctl", "^nfnetlink_rcv_msg", "^rtnetlink_rcv_msg",
	"^netlink_dump", "^(sys_)?(socketpair|connect|ioctl)",
	/* page faults */
	"__do_fault", "do_page_fault", "^page_fault$",
	/* work done on the way back to user space */
	"__fput", "task_work_run", "exit_to_usermode", "smp_call_function", "tasklet_action",
	"tasklet_hi_action",
	NULL
};

/* Prefixes the syscall machinery of each architecture and kernel version
 * puts before a syscall's name; a frame is titled by the shortest name
 * one of them leaves (linux.go stripFramePrefixes). */
const char *const report_strip_prefixes[] = {
	"SYSC_", "SyS_", "sys_", "__x64_", "__ia32_", "__arm64_", "____sys_", "___sys_", "__sys_",
	"__se_", "__se_sys_", "__do_sys_", "compat_SYSC_", "compat_SyS_", "ksys_",
	NULL
};

/* Files that are never guilty: headers, generic libraries and the
 * reporting machinery itself (linux.go guiltyFileIgnores, whole and as
 * written there: unescaped dots match any character). */
const char *const report_guilty_ignores[] = {
	".*\\.h", "^lib/.*", "^virt/lib/.*", "^mm/kasan/.*", "^mm/kmsan/.*", "^kernel/kcov.c",
	"^mm/sl.b.c", "^mm/filemap.c", "^mm/folio-compat.c", "^mm/truncate.c", "^mm/memory.c",
	"^mm/percpu.*", "^mm/vmalloc.c", "^mm/page_alloc.c", "^mm/mempool.c", "^mm/util.c",
	"^kernel/rcu/.*", "^arch/.*/kernel/traps.c", "^arch/.*/kernel/unwind.*.c",
	"^arch/.*/mm/fault.c", "^arch/.*/mm/physaddr.c", "^arch/.*/kernel/stacktrace.c",
	"^arch/.*/kernel/apic/apic.c", "^arch/arm64/kernel/entry.*.c", "^arch/arm64/kernel/process\\.c",
	"^kernel/locking/.*", "^kernel/panic.c", "^kernel/printk/printk.*.c", "^kernel/softirq.c",
	"^kernel/kthread.c", "^kernel/sched/.*.c", "^kernel/stacktrace.c", "^kernel/time/timer.c",
	"^kernel/workqueue.c", "^net/core/dev.c", "^net/core/sock.c", "^net/core/skbuff.c",
	"^fs/proc/generic.c", "^trusty/", "^drivers/usb/core/urb.c", "^arch/.*/lib/crc.*",
	NULL
};

/* Lines whose file is not the guilty one even when the file could be: the
 * irq-state and held-lock sites lockdep prints, register dumps
 * (linux.go guiltyLineIgnore). */
const char *const report_guilty_line_ignores[] = {
	"(hardirqs|softirqs)\\s+last\\s+(enabled|disabled)", ",\\s+at:\\s+", "^\\s*#\\d+:",
	"^Register r\\d+ information", NULL
};

/* Where an rcu stall's interrupt entered: the guilty file is looked for
 * after it first (linux.go extractGuiltyFileRaw). */
const char *const report_stall_irq_entries[] = {
	"apic_timer_interrupt+0x", "el1h_64_irq+0x", "Exception stack", NULL
};

/* Whole-log patterns that mark a crash as not worth reporting: the VM ran
 * out of memory or the fuzzer's own processes died. */
const struct line_pattern report_log_suppressions[] = {
	{ "fatal error: runtime: out of memory", NULL },
	{ "runtime: out of memory", NULL },
	{ "fatal error: runtime: cannot allocate memory", NULL },
	{ "fatal error: out of memory", NULL },
	{ "fatal error: newosproc", NULL }, /* the Go runtime could not start a thread */
	{ "panic: ", "panic: .*cannot allocate memory" },
	{ "panic: failed to start executor binary", NULL },
	{ "panic: executor failed: pthread_create failed", NULL },
	{ "panic: failed to create temp dir", NULL },
	{ "fatal error: unexpected signal during runtime execution", NULL }, /* OOM as SIGBUS */
	{ "signal SIGBUS: bus error", NULL },
	{ "SYZFAIL: SIGBUS", NULL },
	/* the OOM killer took a process of the fuzzing harness (syz-fuzzer
	 * in older syzkaller, syz-executor now) or sshd */
	{ "Out of memory: Kill process", "Out of memory: Kill process .* \\((?:syz-fuzzer|syz-executor|sshd)\\)" },
	{ "Killed process", "Killed process .* \\((?:syz-fuzzer|syz-executor|sshd)\\)" },
	{ "lowmemorykiller: Killing 'syz-fuzzer'", NULL },
	{ "lowmemorykiller: Killing 'syz-executor'", NULL },
	{ "lowmemorykiller: Killing 'sshd'", NULL },
	{ "INIT: PANIC: segmentation violation!", NULL },
	/* glibc's canary check in a user-space program, not a kernel bug */
	{ "*** stack smashing detected ***: terminated", NULL },
	{ NULL, NULL }
};

/* Headers that may appear inside another report without starting a new
 * one. */
const char *const report_start_ignores[] = {
	"invalid opcode: 0000", "Kernel panic - not syncing", "unregister_netdevice: waiting for",
	"PANIC: double fault", /* can come from the fault handling itself */
	"Internal error:", /* arm prints it below the fault it reports */
	NULL
};
/* Messages with a stack that are not bugs: seen inside a report they
 * mean another stack got mixed in. */
const char *const report_info_with_stack[] = {
	"vmalloc: allocation failure:", "FAULT_INJECTION: forcing a failure",
	"FAULT_FLAG_ALLOW_RETRY missing", NULL
};
