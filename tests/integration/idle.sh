#!/bin/bash
# kfixd is woken by what happens, not by a clock: idle, it sleeps (no
# polling tick, no HTTP tick, no lease renewal); a bug that another
# process (kfixctl) writes to the store is picked up at once, and a job
# process that ends lets the next queued job start at once, not at the
# next safety tick a minute later.  A commit whose fsync is slow (a loaded
# disk), by a writer that keeps the store open, is seen too.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "strace is not installed (scripts/install-deps.sh installs it)"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"
command -v gcc >/dev/null || skip "gcc needed"

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

# The WAL frames are written (inotify tells kfixd) before the commit is
# visible: with synchronous = FULL, SQLite syncs the WAL and its folder in
# between, here 0.6 s each as on a loaded disk.  The writer then keeps the
# store open for 30 s: kfixd must look again after the change and start
# the job long before the writer's close or the safety tick.
cat > "$T/slowsync.c" <<'C'
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
int fsync(int fd) { usleep(600000); return (int)syscall(SYS_fsync, fd); }
int fdatasync(int fd) { usleep(600000); return (int)syscall(SYS_fdatasync, fd); }
C
gcc -shared -fPIC -o "$T/slowsync.so" "$T/slowsync.c" || fail "cannot build the slow-fsync shim"
printf "PRAGMA synchronous = FULL;\nINSERT INTO jobs (bug_id, kind, state, max_attempts, created) SELECT min(id), 'self-test', 'queued', 3, 0 FROM bugs;\n.shell sleep 30\n" |
	LD_PRELOAD="$T/slowsync.so" ASAN_OPTIONS=verify_asan_link_order=0 \
	sqlite3 -cmd ".timeout 5000" "$T/state/kfix.db" > "$T/slow-writer.out" 2>&1 &
writer=$!
started=$SECONDS
# (told by kfixd's log: a process that opens the store wakes kfixd)
picked() { [ "$(grep -c 'started self-test job' "$T/kfixd.log")" = 3 ]; }
until picked || [ $((SECONDS - started)) -ge 12 ]; do sleep 0.2; done
picked || fail "a commit seen late was not looked at again within 12 s: $(ctl jobs)"
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null || true
ok "a commit visible after its WAL write is picked up ($((SECONDS - started)) s)"
stop_kfixd
echo PASS
