#!/bin/bash
# syz reproducers in a real guest.  First with a stand-in for syzkaller
# (no syzkaller can be built here): its "syz-execprog" is a script that
# runs the scenario's C reproducer, shipped as "syz-executor", only when
# kfix copied all three files to the guest and called it with exactly the
# arguments the program's repro options ask for; so "reproduced" proves
# the copy and the command line.  Then, when KFIX_SYZKALLER_DIR names a
# syzkaller build, the scenario's .syz program with the real tools; without
# it that part is skipped, loudly, and the test reports SKIP.  Between
# the two, kfixd takes a bug with only a syz program through the same
# stand-in (needs-syzkaller first, reproduced after a reload).
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

# kfixd with a bug that has only a syz program: it waits in needs-syzkaller
# while no [vm] section names a syzkaller build, and once a reload names
# the stand-in, the reproduce job replays the program with it
KFIXD=${top_builddir:-.}/kfixd
[ -x "$KFIXD" ] || KFIXD=${top_builddir:-.}/daemon/kfixd
sed '/^\tsyzkaller = /d' "$T/kfix.conf" > "$T/kfixd.conf"
cat >> "$T/kfixd.conf" <<CFG
[kfix]
	job-attempts = 1
	job-timeout = 1h
	retry-delay = 1s
[tree "msg"]
	path = $KT_SRC
	config = $KT_CONFIG
[agent]
	base-runs = 1
CFG
dbq() { sqlite3 -cmd '.timeout 5000' "$T/state/kfix.db" "$1"; }
"$KFIXCTL" -c "$T/kfixd.conf" submit --source syzbot --id 5a5a5a5a5a5a5a5a5a5a --title "$title" \
	--tree msg --report "$S/msg-uaf/report.txt" --repro-syz "$T/standin.syz" >/dev/null || kt_fail "submit"
"$KFIXD" -c "$T/kfixd.conf" --log-target stderr 2> "$T/kfixd.log" &
KFIXD_PID=$!
KT_PIDS+=("$KFIXD_PID")
for i in $(seq 300); do
	[ "$(dbq 'SELECT state FROM bugs WHERE id = 1')" = needs-syzkaller ] && break
	sleep 0.1
done
[ "$(dbq 'SELECT state FROM bugs WHERE id = 1')" = needs-syzkaller ] ||
	kt_fail "the syz-only bug is $(dbq 'SELECT state FROM bugs WHERE id = 1'), not needs-syzkaller"
"$KFIXCTL" -c "$T/kfixd.conf" status | grep -q 'needs-syzkaller' ||
	kt_fail "kfixctl status does not show the waiting bug: $("$KFIXCTL" -c "$T/kfixd.conf" status)"
[ "$(dbq 'SELECT count(*) FROM jobs')" = 0 ] || kt_fail "a job for a bug that cannot run"
kt_log "ok: a syz-only bug waits in needs-syzkaller without syzkaller's tools"
printf '[vm "test"]\n\tsyzkaller = %s\n' "$T/fake-syzkaller" >> "$T/kfixd.conf"
kill -HUP "$KFIXD_PID"
for i in $(seq 1800); do
	case "$(dbq "SELECT state FROM jobs WHERE kind = 'reproduce'")" in done|failed) break ;; esac
	kill -0 "$KFIXD_PID" 2>/dev/null || break
	sleep 0.5
done
res=$(dbq "SELECT result FROM jobs WHERE kind = 'reproduce' AND state = 'done'")
case "$res" in
*'"result":"reproduced"'*) ;;
*) tail -30 "$T/kfixd.log" >&2; kt_fail "reproduce job: $(dbq "SELECT state, error, result FROM jobs WHERE kind = 'reproduce'")" ;;
esac
[ -s "$T/state/jobs/$(dbq "SELECT id FROM jobs WHERE kind = 'reproduce'")/repro.syz" ] ||
	kt_fail "the job did not keep the syz program"
dbq "SELECT detail FROM events WHERE kind = 'bug.state'" | grep -q '^needs-syzkaller -> reproducing' ||
	kt_fail "states: $(dbq "SELECT detail FROM events WHERE kind = 'bug.state'")"
kill "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null
kt_log "ok: after a reload naming syzkaller, kfixd reproduced the syz-only bug with syz-execprog"

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
