#!/bin/bash
# kfixd is woken by what happens, not by a clock: idle, it sleeps (no
# polling tick, no HTTP tick, no lease renewal); a bug that another
# process (kfixctl) writes to the store is picked up at once, and a job
# process that ends lets the next queued job start at once, not at the
# next safety tick a minute later.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "strace is not installed (scripts/install-deps.sh installs it)"

port=$(free_port)
write_config "	self-test-jobs = yes" "	self-test-step = 1s" "	workers = 1" \
	"[http]" "	listen = 127.0.0.1:$port"
start_kfixd
wait_for 10 grep -q 'kfixd .* started' "$T/kfixd.log" || fail "kfixd did not start"
sleep 1

wakeups() { # SECONDS: epoll_wait returns of kfixd's loop with events
	timeout "$1" strace -p "$KFIXD_PID" -e trace=epoll_wait -o "$T/trace" 2>"$T/strace.err" || true
	[ -s "$T/trace" ] || skip "strace cannot attach to kfixd: $(cat "$T/strace.err")"
	grep -c '^epoll_wait(.*) = [1-9]' "$T/trace" || true
}

n=$(wakeups 8)
[ "$n" -le 2 ] || fail "an idle kfixd woke up $n times in 8 s: $(head -5 "$T/trace")"
ok "idle: $n wake-up(s) in 8 s"

# two bugs, one worker slot: the first job starts on the store commit,
# the second when the first one's process ends
ctl submit --title "WARNING in a" --id a >/dev/null
ctl submit --title "WARNING in b" --id b >/dev/null
wait_for 5 sh -c "'$KFIXCTL' -c '$T/kfix.conf' jobs | grep -q 'self-test *running'" ||
	fail "a bug written by kfixctl was not picked up within 5 s: $(ctl jobs)"
ok "a bug from kfixctl starts at once"
wait_for 25 sh -c "[ \$('$KFIXCTL' -c '$T/kfix.conf' jobs | grep -c 'self-test *done') = 2 ]" ||
	fail "the second job did not follow the first: $(ctl jobs)"
ok "the next job starts when a job process ends"

sleep 1
n=$(wakeups 6)
[ "$n" -le 2 ] || fail "kfixd kept waking up after its work: $n times in 6 s"
ok "idle again: $n wake-up(s) in 6 s"
stop_kfixd
echo PASS
