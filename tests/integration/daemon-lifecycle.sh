#!/bin/bash
# kfixd under a (test) service manager: READY only after start-up, STATUS
# with queue figures, watchdog pings, reload keeps a good config and
# rejects a bad one, clean stop on SIGTERM, socket activation; a job that
# crashes or hangs is recorded and the daemon lives on.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 needed"

write_config "	self-test-jobs = yes" "	job-attempts = 2"
port=$(free_port)
WATCHDOG_USEC=400000 python3 "$top_srcdir/tests/integration/notify.py" "$T/notify.log" \
	--listen "$port" -- "$KFIXD" -c "$T/kfix.conf" --log-target stderr 2>"$T/kfixd.log" &
PIDS="$PIDS $!"
NOTIFY_PID=$!
wait_for 20 grep -q '^READY=1' "$T/notify.log" || fail "no READY=1: $(cat "$T/kfixd.log")"
pid=$(sed -n 's/^PID=//p' "$T/notify.log")
grep -q "listening on 127.0.0.1:$port" "$T/kfixd.log" || fail "LISTEN_FDS ignored"
if command -v curl >/dev/null; then
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null || fail "the passed socket is not served"
fi
ls -l "/proc/$pid/fd/3" | grep -q socket || fail "fd 3 not held"
wait_for 10 grep -q '^STATUS=.*jobs queued' "$T/notify.log" || fail "no STATUS with figures"
wait_for 5 grep -q '^WATCHDOG=1' "$T/notify.log" || fail "no watchdog pings"
ok "ready, status, watchdog, socket held"

# reload with a broken file: kept running with the old one
cp "$T/kfix.conf" "$T/good.conf"
printf '[kfix]\n\tbogus = 1\n' >> "$T/kfix.conf"
kill -HUP "$pid"
wait_for 10 grep -q "reload failed, keeping the old configuration" "$T/kfixd.log" || fail "bad reload not refused"
# a build host that could never be reached is refused too
cp "$T/good.conf" "$T/kfix.conf"
printf '[build "far"]\n\thost = ssh://me@builder:port\n' >> "$T/kfix.conf"
kill -HUP "$pid"
wait_for 10 grep -q 'keeping the old configuration: .*/kfix.conf: \[build "far"\] host = ssh://me@builder:port' "$T/kfixd.log" ||
	fail "reload with a bad build host not refused"
cp "$T/good.conf" "$T/kfix.conf"
printf '\tworkers = 1\n' >> "$T/kfix.conf"
kill -HUP "$pid"
wait_for 10 grep -q "configuration reloaded" "$T/kfixd.log" || fail "good reload not taken"
kill -0 "$pid" || fail "kfixd died on reload"
ok "reload"

# a job process that is killed: recorded, retried, daemon alive
printf '\tself-test-step = 1s\n' >> "$T/kfix.conf"
kill -HUP "$pid"
reloads() { wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '$T/kfixd.log') -ge $1 ]"; }
reloads 2 || fail "step change not reloaded"
ctl submit --title "WARNING in crashy" --id crash1 >/dev/null
wait_for 20 pgrep -f -- "[-]-config $T/kfix.conf --run-job" || fail "job process never started"
pkill -9 -f -- "[-]-config $T/kfix.conf --run-job 1 " || fail "could not kill the job process"
wait_for 20 grep -q "job process killed by signal" "$T/kfixd.log" || fail "job crash not recorded"
wait_for 30 sh -c "'$KFIXCTL' -c '$T/kfix.conf' job 1 | grep -q 'State: *done'" ||
	fail "job not retried to completion: $(ctl job 1)"
ctl job 1 | grep -q "Attempts: *2 of 2" || fail "attempts: $(ctl job 1)"
kill -0 "$pid" || fail "kfixd died with its job"
ok "job crash survived and retried"

# a job that hangs past its time limit is killed and fails for good
printf '\tjob-timeout = 1s\n\tself-test-step = 5s\n' >> "$T/kfix.conf"
kill -HUP "$pid"
reloads 3 || fail "time limit not reloaded"
ctl submit --title "INFO: task hung in hang" --id hang1 >/dev/null
wait_for 40 sh -c "'$KFIXCTL' -c '$T/kfix.conf' job 2 | grep -q 'State: *failed'" ||
	fail "hung job not failed: $(ctl job 2)"
ctl job 2 | grep -q "killed after the job time limit" || fail "reason: $(ctl job 2)"
pgrep -f -- "[-]-config $T/kfix.conf --run-job 2 " && fail "hung job process left behind"
ok "job time limit"

kill -TERM "$pid"
wait "$NOTIFY_PID" || true
grep -q '^STOPPING=1' "$T/notify.log" || fail "no STOPPING=1"
grep -q '^EXIT=0' "$T/notify.log" || fail "unclean exit: $(tail -3 "$T/notify.log")"
pgrep -f -- "kfixd -c $T/kfix.conf" && fail "processes left after stop"
ok "clean stop"
