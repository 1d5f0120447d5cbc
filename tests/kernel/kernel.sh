#!/bin/bash
# kfixctl's verdicts on a real kernel: Debian's linux-source-6.1 with the
# scenarios' injected bugs, KASAN, qemu under software emulation on a VM
# host that is a real sshd on 127.0.0.1.  A known fix is "fixed"; a fix
# that changes what the reproducer sees is "behaviour-changed"; one that
# breaks a selftest or a KUnit suite is "selftest-regression"; a leak is
# "leaked"; a patch that breaks the build is "build-error", one whose
# kernel cannot boot is "boot-error"; bad input gives a clear outcome;
# VM faults are named; nothing is left running.  Each bug reproducing, its
# known fix and a wrong fix are checked by its repair scenario.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup
S=$kt_here/scenarios
started=$(date +%s)

common=(--src "$KT_SRC" --config "$KT_CONFIG")

expect_json() { # python expression over d, expected value, label
	local got
	got=$(kt_json "$1") || kt_fail "$3: no JSON: $(cat "$T/err.txt")"
	[ "$got" = "$2" ] || { cat "$T/out.json" >&2; cat "$T/err.txt" >&2; kt_fail "$3: $1 is '$got', expected '$2'"; }
	kt_log "ok: $3"
}

# --- bad input that fails before any build ---------------------------------
kt_kfixctl reproduce "${common[@]}" --commit v5.4 --repro "$S/msg-uaf/repro.c"
[ $? = 1 ] || kt_fail "unknown commit: exit code"
expect_json 'd["error"]["kind"]' unknown-commit "unknown commit"

# --tree NAME: a commit the tree does not have.
mkdir -p "$T/plain" && echo 'VERSION = 6' > "$T/plain/Makefile"
printf '[tree "plain"]\n\turl = %s\n' "$T/plain" >> "$T/kfix.conf"
kt_kfixctl reproduce --tree plain --commit 0123456789abcdef --config "$KT_CONFIG" --repro "$S/msg-uaf/repro.c"
expect_json 'd["error"]["kind"]' unknown-commit "unknown commit in a tree"

echo 'int main(void) { return syntax error; }' > "$T/bad.c"
kt_kfixctl reproduce "${common[@]}" --repro "$T/bad.c"
expect_json 'd["error"]["kind"]' repro-does-not-compile "reproducer that does not compile"
grep -q 'syntax' "$T/out.json" || kt_fail "the compiler's message is missing"

printf -- '--- a/kernel/no-such-file.c\n+++ b/kernel/no-such-file.c\n@@ -1,1 +1,1 @@\n-old\n+new\n' > "$T/noapply.patch"
kt_kfixctl test-patch "${common[@]}" --repro "$S/msg-uaf/repro.c" --patch "$T/noapply.patch"
expect_json 'd["error"]["kind"]' patch-does-not-apply "patch that does not apply"
[ ! -e "$KT_SRC/.kfix-applied" ] || kt_fail "a patch journal was left in the source"

printf 'CONFIG_64BIT=y\n' > "$T/tiny.config"
kt_kfixctl reproduce --src "$KT_SRC" --config "$T/tiny.config" --repro "$S/msg-uaf/repro.c"
expect_json 'd["error"]["kind"]' config-missing-options "config missing options"
rm -rf "$KT_TOP/build/src--tiny" "$KT_TOP/build/src--tiny.lock"

# The scenarios' titles, for the checks below that name one.  Each bug's
# base reproducing and its known fix validating are checked by its repair
# scenario (repair-*.sh), a wrong fix still crashing too: not again here.
declare -A title=(
	[msg-uaf]="KASAN: use-after-free Read in msgctl"
	[clock-null-deref]="general protection fault in sys_clock_gettime"
)

# --- crash gone is not fixed ---------------------------------------------------
# The reproducer reads the host name back: a patch that stops the overflow
# by cutting the name ends it with status 1, its output kept.
# The fix carries a trace_printk() line, as a developer's probe would: its
# output is read back from the guest's trace buffer.
s=hostname-oob
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/traced-fix.patch" --runs 1
expect_json 'd["verdict"]' fixed "$s: the known fix"
expect_json 'd["patched"]["crashed"]' 0 "$s: patched kernel survived"
expect_json 'd["patched"]["outcomes"][0]["leaks"]' None "$s: kmemleak looked and found no leak"
expect_json '"sethostname: kfix-probe sethostname len=9" in d["patched"]["outcomes"][0]["trace"]' True \
	"$s: trace_printk's line read back from the trace buffer"
# syzkaller titles a syscall by its name, whichever wrapper holds the bug
expect_json '__import__("re").fullmatch("KASAN: slab-out-of-bounds Write in (sys_)?sethostname", d["base"]["title"]) is not None' \
	True "$s: the base title is the syscall's name"
expect_json 'd["patched"]["outcomes"][0]["exit_status"]' 0 "$s: the reproducer succeeds on the fix"
expect_json '"kfix-test" in d["patched"]["outcomes"][0]["output"]' True "$s: its output is kept"
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/breaking-fix.patch" --runs 1
[ $? = 1 ] || kt_fail "$s: a fix that changes behaviour exits 0"
expect_json 'd["verdict"]' behaviour-changed "$s: the crash is gone, the host name is cut"
# the base kernel of the call before, kept aside, is not built again
expect_json 'd["base"]["build"]["kept"]' True "the base kernel kept from the last build"
expect_json 'd["patched"]["build"]["kept"]' False "a patched kernel is built"
expect_json 'd["patched"]["crashed"]' 0 "$s: no crash on the breaking fix"
expect_json '"read back \"kfix-tes\"" in d["patched"]["outcomes"][0]["output"]' True \
	"$s: the reproducer says what changed"

# --- the kernel's own tests --------------------------------------------------
# The fix plus a "simplification" that makes relative sleeps on the
# monotonic clocks return at once: the reproducer is happy, the
# timers:nanosleep kselftest, which passes on the base, fails.
s=clock-null-deref
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/breaking-fix.patch" \
	--title "${title[$s]}" --runs 1 --selftests timers:nanosleep
[ $? = 1 ] || kt_fail "$s: a fix that breaks a selftest exits 0"
expect_json 'd["verdict"]' selftest-regression "$s: the crash is gone, a selftest fails"
expect_json 'd["patched"]["crashed"]' 0 "$s: no crash on the breaking fix"
expect_json '[t["status"] for t in d["selftests"]["base"]["tests"]]' "['pass']" "$s: nanosleep passes on the base"
expect_json '[t["status"] for t in d["selftests"]["patched"]["tests"]]' "['fail']" "$s: and fails on the patch"
expect_json '"not ok 2 CLOCK_MONOTONIC" in d["selftests"]["regression_report"]' True \
	"$s: the regression report carries the test's own output"
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/fix.patch" \
	--runs 1 --selftests 'timers:../../x'
expect_json 'd["error"]["kind"]' bad-selftests "$s: a selftest name that walks out of the tree"

# A KUnit suite, built into the kernel and run at boot: the fix plus a
# sysctl "hardening" that refuses negative numbers.  kernel/'s sysctl
# suite passes on the base and fails on the patch; a suite the config
# does not build is found missing on the base and not run again.
s=hostname-oob
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/kunit-breaking-fix.patch" \
	--runs 1 --selftests 'kunit:sysctl_test kunit:time_test_cases'
[ $? = 1 ] || kt_fail "$s: a fix that breaks a KUnit suite exits 0"
expect_json 'd["verdict"]' selftest-regression "$s: the crash is gone, a KUnit suite fails"
expect_json '{t["name"]: t["status"] for t in d["selftests"]["base"]["tests"]}' \
	"{'kunit:sysctl_test': 'pass', 'kunit:time_test_cases': 'not-run'}" "$s: the suite passes on the base"
expect_json '{t["name"]: t["status"] for t in d["selftests"]["patched"]["tests"]}' \
	"{'kunit:sysctl_test': 'fail'}" "$s: and fails on the patch, alone"
expect_json '__import__("re").search(r"not ok \d+ sysctl_test_dointvec_write_happy_single_negative", d["selftests"]["regression_report"]) is not None' \
	True "$s: the regression report names the failed case"
expect_json '"kunit:time_test_cases: not in the base kernel" in d["selftests"]["unbuilt"]' True \
	"$s: the suite the kernel lacks is named"

# A leak instead of a fix: the integrity gate rejects it, and without the
# gates validation's kmemleak scan finds the messages freeque() no longer
# frees (the reproducer runs again before the scan: the last message can
# stay reachable through a stale pointer)
s=msg-uaf
"$KFIXCTL" -c "$T/kfix.conf" check-patch --no-checkpatch --src "$KT_SRC" --report "$S/$s/report.txt" \
	--patch "$S/$s/leak-fix.patch" --json > "$T/out.json" 2> "$T/err.txt"
expect_json '[g["gate"] for g in d["gates"] if g["verdict"] == "reject"][0]' resources "$s: the gate sees the leak"
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/$s/leak-fix.patch" --runs 1
expect_json 'd["verdict"]' leaked "$s: kmemleak sees the leak the gate saw"
expect_json '"load_msg" in d["patched"]["outcomes"][0]["leaks"]' True "$s: the leak report names the allocation"

s=clock-null-deref
kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/break-build.patch" \
	--title "${title[$s]}" --runs 1
expect_json 'd["verdict"]' build-error "a patch that breaks the build"
expect_json 'd["patched"]["build"]["errors"][0]["file"]' kernel/time/posix-timers.c "build error location"

kt_kfixctl test-patch "${common[@]}" --repro "$S/$s/repro.c" --patch "$S/break-boot.patch" \
	--title "${title[$s]}" --runs 1
expect_json 'd["verdict"]' boot-error "a kernel that cannot boot"
# the crash that stopped the boot, by its report, from the console
expect_json '"the kernel crashed while booting: kernel panic: kfix test: this kernel refuses to start init; its report: " in d["patched"]["outcomes"][0]["message"]' \
	True "the boot error names the panic"
expect_json '"\\nKernel panic - not syncing: kfix test: this kernel refuses to start init\\n" in d["patched"]["outcomes"][0]["message"]' \
	True "the boot error shows the panic's report"
expect_json '"Call Trace:" in d["patched"]["outcomes"][0]["message"]' True "the panic's trace"

# Several counted runs in parallel across the pool.
kt_kfixctl reproduce "${common[@]}" --repro "$S/msg-uaf/repro.c" --runs 2
expect_json 'd["base"]["crashed"]' 2 "two runs in parallel both crash"
expect_json 'd["verdict"]' reproduced "reproduce verdict"

# --- faults of the VM host and the guest ------------------------------------
vm_variant() { # name, then key=value lines replacing the [vm "test"] ones
	local name=$1; shift
	{ echo "[vm \"$name\"]"; sed -n '/^\[vm "test"\]/,/^\[/p' "$T/kfix.conf" | grep '^	' |
		while IFS= read -r line; do
			k=$(echo "$line" | sed 's/^	\([a-z-]*\) =.*/\1/')
			skip=0
			for kv in "$@"; do [ "${kv%%=*}" = "$k" ] && skip=1; done
			[ $skip = 0 ] && echo "$line"
		done
	  for kv in "$@"; do echo "	${kv%%=*} = ${kv#*=}"; done; } >> "$T/kfix.conf"
}
ssh-keygen -q -t ed25519 -N '' -f "$T/other"
echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/wrong_known_hosts"
vm_variant unreachable "ssh-port=$(kt_free_port)"
vm_variant badauth "ssh-key=$T/other"
vm_variant badhostkey "known-hosts=$T/wrong_known_hosts"
vm_variant noqemu "qemu=/nonexistent/qemu-system-x86_64"
cp -a "$T/initramfs" "$T/noguest" && rm -f "$T/noguest/sbin/dropbear"
(cd "$T/noguest" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$T/noguest.cpio.gz"
vm_variant noguest "image=$T/noguest.cpio.gz" "boot-timeout=30s"

for v in unreachable:infra-error:"Connection refused" badauth:infra-error:"authentication failed" \
	 badhostkey:infra-error:"MISMATCH" noqemu:infra-error:"nonexistent" \
	 noguest:boot-error:"never answered"; do
	IFS=: read -r name verdict msg <<<"$v"
	# The base kernel the previous step built; no build needed.
	kt_kfixctl reproduce --kernel "$KT_TOP/build/src--kasan/arch/x86/boot/bzImage" \
		--repro "$S/msg-uaf/repro.c" --runs 1 --vm "$name"
	expect_json 'd["verdict"]' "$verdict" "VM fault $name"
	grep -q "$msg" "$T/out.json" || { cat "$T/out.json" >&2; kt_fail "VM fault $name: no '$msg' in the message"; }
done

kt_no_leaks
kill "$SSHD_PID" && wait "$SSHD_PID" 2>/dev/null
KT_PIDS=()
pgrep -f "sshd.*$T" >/dev/null && kt_fail "sshd was left running"
kt_log "all kernel tests passed in $(( $(date +%s) - started ))s"
