#!/bin/bash
# Bisection requests and the bisect job's dead ends, without a kernel
# (tests/kernel/bisect.sh bisects a real one): kfixctl bisect refuses bad
# input; a request becomes one bisect job per bug (a second is ignored
# while one is on its way); the job ends with a reason, not a crash, when
# no good end exists (no release tag), when --good is not below the base,
# and when the good end cannot be tested (the VM host is closed); the
# tree's folder (a git work tree, [tree] path) is back on its branch after
# each, with no local change and no restore marker; a marker left by a
# killed job is acted on by the next job of the tree; a plain folder
# cannot be bisected.  make is tests/integration/fake-make.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"
command -v git >/dev/null || skip "git needed"

mkdir -p "$T/bin" "$T/src/ipc" "$T/plain/ipc"
ln -s "$top_srcdir/tests/integration/fake-make" "$T/bin/make"
export PATH="$T/bin:$PATH" FAKE_MAKE_STEPS=3
g() { git -C "$T/src" -c user.name=Dev -c user.email=dev@example.org "$@"; }
g init -q -b master
# the build's lock file in the source folder (as the kernel tests do)
printf '.kfix*\n' > "$T/src/.git/info/exclude"
for i in 1 2 3 4; do
	printf 'int x = %d;\n' "$i" > "$T/src/ipc/msg.c"
	g add -A && g commit -qm "ipc: step $i" || fail "git commit"
done
HEAD_C=$(g rev-parse HEAD)
printf 'int x;\n' > "$T/plain/ipc/msg.c"
for o in BLK_DEV_INITRD SERIAL_8250_CONSOLE NET INET VIRTIO_NET VIRTIO_PCI PRINTK KASAN; do
	echo "CONFIG_$o=y" >> "$T/kasan.config"
done
printf 'int main(void) { return 0; }\n' > "$T/repro.c"
printf 'BUG: KASAN: use-after-free in ksys_msgctl+0x2c2/0x390 ipc/msg.c:624\n' > "$T/report"
write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
	job-attempts = 1
[tree "git"]
	path = $T/src
	config = $T/kasan.config
	bisect-runs = 1
[tree "plain"]
	path = $T/plain
	config = $T/kasan.config
[build "b"]
	dir = $T/builds
	jobs = 1
	sandbox = none
[vm "closed"]
	ssh-host = 127.0.0.1
	ssh-port = $(free_port)
	ssh-user = nobody
	image = $T/none.cpio.gz
	workdir = $T/vmwork
	boot-timeout = 2s
CONF
db=$T/state/kfix.db
q() { sqlite3 "$db" "$1"; }
submit() { # TREE ID
	ctl submit --tree "$1" --report "$T/report" --repro "$T/repro.c" \
		--title "KASAN: use-after-free Read in ksys_msgctl" --id "$2" | sed 's/^bug \([0-9]*\).*/\1/'
}
bug=$(submit git b1)
plain=$(submit plain b2)

# bad input
status() { local rc=0; ctl "$@" > /dev/null 2>&1 || rc=$?; echo $rc; }
[ "$(status bisect)" = 2 ] || fail "bisect without a bug"
[ "$(status bisect x1)" = 2 ] || fail "bisect of a malformed id"
[ "$(status bisect 99)" = 1 ] || fail "bisect of an unknown bug"
[ "$(status bisect --good -x "$bug")" = 2 ] || fail "a revision starting with -"
[ "$(status bisect --good 'a;b' "$bug")" = 2 ] || fail "a revision with ;"
ctl --help 2>&1 | grep -q "bisect \[--good REV\] BUG" || fail "bisect is not in --help"
ok "kfixctl bisect refuses bad input"

# the folder checked out at the end: on master at its head, clean
at_head() {
	[ "$(g symbolic-ref HEAD)" = refs/heads/master ] && [ "$(g rev-parse HEAD)" = "$HEAD_C" ] &&
		[ -z "$(g status --porcelain)" ] && [ ! -e "$T/state/trees/git.checkout" ]
}
job_result() { q "SELECT result FROM jobs WHERE id = $1" | json_field "$2"; }
wait_job() { # KIND N: the Nth job of that kind ended
	wait_for 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$db' \"SELECT count(*) FROM jobs WHERE kind = '$1' AND state IN ('done', 'failed')\")\" -ge $2 ]"
}

# no good end: no release tag below the base, none configured
ctl bisect "$bug" | grep -q "bisection requested" || fail "kfixctl bisect"
ctl bisect "$bug" > /dev/null || fail "second request"
start_kfixd
wait_job bisect 1 || fail "no bisect job ended: $(ctl jobs) $(tail -20 "$T/kfixd.log")"
[ "$(q "SELECT count(*) FROM jobs WHERE kind = 'bisect'")" = 1 ] || fail "two bisect jobs for two requests"
q "SELECT detail FROM events WHERE kind = 'request.ignored'" | grep -q "bisection of this bug is on its way" ||
	fail "the second request was not ignored: $(q "SELECT kind, detail FROM events")"
j1=$(q "SELECT id FROM jobs WHERE kind = 'bisect'")
[ "$(job_result "$j1" 'j["result"]')" = failed ] || fail "result: $(q "SELECT result, error FROM jobs WHERE id = $j1")"
job_result "$j1" 'j["why"]' | grep -q "no good revision: no release below" || fail "why: $(job_result "$j1" 'j["why"]')"
[ "$(job_result "$j1" 'len(j["tests"])')" = 0 ] || fail "something was tested"
q "SELECT detail FROM events WHERE kind = 'bisect.done'" | grep -q '"result": *"failed"' ||
	fail "no bisect.done event"
at_head || fail "the folder moved: $(g status)"
ok "no good end: a result that says so, nothing built"

# --good that is not below the base
other=$(g commit-tree "$(g rev-parse HEAD^{tree})" -m "elsewhere")
ctl bisect --good "$other" "$bug" > /dev/null || fail "bisect --good"
wait_job bisect 2 || fail "second bisect job"
j2=$(q "SELECT max(id) FROM jobs WHERE kind = 'bisect'")
job_result "$j2" 'j["why"]' | grep -q "is not an ancestor of the base" || fail "why: $(job_result "$j2" 'j["why"]')"
at_head || fail "the folder moved"
ok "--good not below the base"

# a good end that cannot be tested (the VM host is closed): the folder
# was checked out there, is put back, and the build folder rebuilt
ctl bisect --good HEAD~3 "$bug" > /dev/null || fail "bisect --good HEAD~3"
wait_job bisect 3 || fail "third bisect job"
j3=$(q "SELECT max(id) FROM jobs WHERE kind = 'bisect'")
job_result "$j3" 'j["why"]' | grep -q "the good revision HEAD~3 is untestable" ||
	fail "why: $(q "SELECT result, error FROM jobs WHERE id = $j3")"
[ "$(job_result "$j3" 'j["tests"][0]["verdict"]')" = skip ] || fail "the good end's verdict"
job_result "$j3" 'j["tests"][0]["why"]' | grep -q "could not be tested" || fail "the skip's reason"
[ "$(job_result "$j3" 'j["builds"]')" = 1 ] || fail "builds: $(job_result "$j3" 'j["builds"]')"
at_head || fail "the folder is not back at master: $(g status; g log --oneline -1)"
ok "an untestable good end; the folder back on master"

# a restore marker left by a killed job: the next job of the tree puts
# the folder back first
stop_kfixd
g checkout -q --detach HEAD~2
printf '{"commit": "%s", "ref": "refs/heads/master"}' "$HEAD_C" > "$T/state/trees/git.checkout"
ctl bisect "$bug" > /dev/null || fail "bisect"
start_kfixd
wait_job bisect 4 || fail "fourth bisect job"
at_head || fail "the marker was not acted on: $(g status | head -3)"
# a hand edit is never overwritten: the move refuses
printf 'int x = 99;\n' > "$T/src/ipc/msg.c"
ctl bisect --good HEAD~3 "$bug" > /dev/null || fail "bisect"
wait_job bisect 5 || fail "fifth bisect job"
j5=$(q "SELECT max(id) FROM jobs WHERE kind = 'bisect'")
[ "$(q "SELECT state FROM jobs WHERE id = $j5")" = failed ] || fail "a move over a hand edit"
q "SELECT error FROM jobs WHERE id = $j5" | grep -q "local changes" ||
	fail "error: $(q "SELECT error FROM jobs WHERE id = $j5")"
grep -q 'int x = 99;' "$T/src/ipc/msg.c" || fail "the hand edit was overwritten"
[ "$(g symbolic-ref HEAD)" = refs/heads/master ] || fail "HEAD left the branch"
g checkout -q -- ipc/msg.c
ok "a marker left behind is acted on; a hand edit is not overwritten"

# a plain folder has no history
ctl bisect "$plain" > /dev/null || fail "bisect of the plain tree's bug"
wait_job bisect 6 || fail "sixth bisect job"
j6=$(q "SELECT max(id) FROM jobs WHERE kind = 'bisect'")
q "SELECT error FROM jobs WHERE id = $j6" | grep -q "plain folder: no history to bisect" ||
	fail "plain: $(q "SELECT state, error FROM jobs WHERE id = $j6")"
stop_kfixd
ok "a plain folder cannot be bisected"
