#!/bin/bash
# A bug whose base kernel does not build: the reproduce job fails for good
# with the compiler's first error and the path of the build log it kept,
# and the bug gives up with the same words.  make is a stand-in
# (tests/integration/fake-make) that reports a compiler error.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"

mkdir -p "$T/bin" "$T/src/ipc"
ln -s "$top_srcdir/tests/integration/fake-make" "$T/bin/make"
export PATH="$T/bin:$PATH" FAKE_MAKE_FAIL=error
printf 'int x;\n' > "$T/src/ipc/msg.c"
for o in BLK_DEV_INITRD SERIAL_8250_CONSOLE NET INET VIRTIO_NET VIRTIO_PCI PRINTK KASAN; do
	echo "CONFIG_$o=y" >> "$T/kasan.config"
done
printf 'int main(void) { return 0; }\n' > "$T/repro.c"
printf 'BUG: KASAN: use-after-free in ksys_msgctl+0x2c2/0x390 ipc/msg.c:624\n' > "$T/report"
write_config "	retry-delay = 0"
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[tree "local"]
	path = $T/src
	config = $T/kasan.config
[build "b"]
	dir = $T/builds
	jobs = 1
	# make is a stand-in script from this test's folder
	sandbox = none
[vm "closed"]
	ssh-host = 127.0.0.1
	ssh-port = $(free_port)
	ssh-user = nobody
	image = $T/none.cpio.gz
	workdir = $T/vmwork
CONF
db=$T/state/kfix.db
bug=$(ctl submit --tree local --report "$T/report" --repro "$T/repro.c" \
	--title "KASAN: use-after-free Read in ksys_msgctl" --id b1 | sed 's/^bug \([0-9]*\).*/\1/')
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$db' \"SELECT state FROM jobs WHERE bug_id = $bug AND kind = 'reproduce'\")\" = failed ]" ||
	fail "the reproduce job did not fail: $(ctl jobs) $(tail -20 "$T/kfixd.log")"
err=$(sqlite3 "$db" "SELECT error FROM jobs WHERE bug_id = $bug AND kind = 'reproduce'")
case "$err" in
"the base kernel does not build: kernel/f1.c:7"*"error: 'nosuch' undeclared"*"(build log: "*"/base-build.log)") ;;
*) fail "the job's error: $err" ;;
esac
[ "$(sqlite3 "$db" "SELECT attempts FROM jobs WHERE bug_id = $bug AND kind = 'reproduce'")" = 1 ] ||
	fail "a compiler error was retried"
log=$(echo "$err" | sed 's/.*(build log: \(.*\))$/\1/')
grep -q "error: 'nosuch' undeclared" "$log" || fail "the build log $log lacks the error"
ctl bug "$bug" | grep -q "State: *gave-up" || fail "bug: $(ctl bug "$bug")"
sqlite3 "$db" "SELECT detail FROM events WHERE bug_id = $bug AND kind = 'bug.state'" |
	grep -q "does not build: kernel/f1.c:7" || fail "the bug's event lacks the error"
ok "a base that does not build: the first error and the log"
