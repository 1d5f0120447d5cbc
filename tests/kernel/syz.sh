#!/bin/bash
# syz reproducers in a real guest.  First with a stand-in for syzkaller
# (no syzkaller can be built here): its "syz-execprog" is a script that
# runs the scenario's C reproducer, shipped as "syz-executor", only when
# kfix copied all three files to the guest and called it with exactly the
# arguments the program's repro options ask for; so "reproduced" proves
# the copy and the command line.  Then, when KFIX_SYZKALLER_DIR names a
# syzkaller build, the scenario's .syz program with the real tools; without
# it that part is skipped, loudly, and the test reports SKIP.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# the O= directory as a base build: it is used as it is
KT_BASE_BUILD=full
kt_setup
S=$kt_here/scenarios
title="KASAN: use-after-free Read in msgctl"
kernel=$KT_TOP/build/src--kasan/arch/x86/boot/bzImage
[ -r "$kernel" ] || kt_fail "no base kernel at $kernel"

expect_json() { # python expression over d, expected value, label
	local got
	got=$(kt_json "$1") || { cat "$T/err.txt" >&2; kt_fail "$3: no JSON"; }
	[ "$got" = "$2" ] || { cat "$T/out.json" "$T/err.txt" >&2; kt_fail "$3: $1 is '$got', expected '$2'"; }
	kt_log "ok: $3"
}

fake=$T/fake-syzkaller/bin/linux_amd64
mkdir -p "$fake"
gcc -static -pthread -O1 -w -o "$fake/syz-executor" "$S/msg-uaf/repro.c" || kt_fail "cannot compile"
cat > "$fake/syz-execprog" <<'SH'
#!/bin/sh
want="-executor=/tmp/syz-executor -arch=amd64 -sandbox=setuid -procs=2 -repeat=0 -threaded=true -collide=false kfix-repro.syz"
if [ "$*" != "$want" ] || ! grep -q '^msgctl' kfix-repro.syz; then
	echo "stand-in syz-execprog: unexpected call: $*" >/dev/kmsg
	exit 1
fi
exec /tmp/syz-executor
SH
chmod +x "$fake/syz-execprog"
printf '\tsyzkaller = %s\n' "$T/fake-syzkaller" >> "$T/kfix.conf"
printf '# {"threaded":false,"repeat":true,"procs":2,"sandbox":"setuid"}\nr0 = msgget$private(0x0, 0x380)\nmsgctl$IPC_RMID(r0, 0x0)\n' \
	> "$T/standin.syz"

kt_kfixctl reproduce --kernel "$kernel" --repro "$T/standin.syz" --runs 1 --title "$title"
expect_json 'd["verdict"]' reproduced "stand-in syz-execprog called as the options ask"
expect_json 'd["base"]["title"]' "$title" "stand-in: the crash title"

# Other options, other arguments: the stand-in refuses to run.
kt_kfixctl reproduce --kernel "$kernel" --repro-syz "$T/standin.syz" --runs 1 --title "$title" \
	--repro-opts <(echo '{"threaded":true,"repeat":true,"procs":1,"sandbox":"none"}')
expect_json 'd["verdict"]' not-reproduced "--repro-opts override the program's own options"
kt_no_leaks

if [ -z "${KFIX_SYZKALLER_DIR:-}" ]; then
	kt_log "stand-in part passed"
	kt_skip "the real syz-execprog part did not run: set KFIX_SYZKALLER_DIR to a syzkaller build"
fi
[ -x "$KFIX_SYZKALLER_DIR/bin/linux_amd64/syz-execprog" ] ||
	kt_fail "KFIX_SYZKALLER_DIR=$KFIX_SYZKALLER_DIR has no bin/linux_amd64/syz-execprog"
sed -i "s|^\tsyzkaller = .*|\tsyzkaller = $KFIX_SYZKALLER_DIR|" "$T/kfix.conf"
kt_kfixctl reproduce --kernel "$kernel" --repro "$S/msg-uaf/repro.syz" --runs 1 --title "$title"
expect_json 'd["verdict"]' reproduced "syz-execprog reproduces msg-uaf"
kt_no_leaks
kill "$SSHD_PID" && wait "$SSHD_PID" 2>/dev/null
KT_PIDS=()
kt_log "all syz tests passed"
