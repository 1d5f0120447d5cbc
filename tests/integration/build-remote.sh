#!/bin/bash
# Builds on a build host over SSH, without a kernel: a real sshd on
# 127.0.0.1 is the build host and a small make-based tree with the
# kernel's make interface (O=, olddefconfig, bzImage, kbuild's quiet
# lines) is the source.  The first build sends the whole tree, the second
# only the changed file and compiles only that; the artifacts come back;
# compiler errors name the file in the tree; the compile-only check works
# remotely; faults of the build host (unreachable, refused key, unknown or
# different host key) are infra-errors that say why; a killed build leaves
# nothing running on the build host.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
. "$here/../kernel/lib.sh"

for t in /usr/sbin/sshd ssh-keygen gcc make tar flock setsid python3 patch; do
	command -v "$t" >/dev/null 2>&1 || kt_skip "$t is not installed"
done
T=$(mktemp -d "${TMPDIR:-/tmp}/kfix-buildremote.XXXXXX")
KT_PIDS=()
trap kt_cleanup EXIT
kt_start_sshd
(exec 3<>/dev/tcp/127.0.0.1/$SSHD_PORT) 2>/dev/null || kt_skip "sshd does not start here: $(cat "$T/sshd.log")"
fail() { kt_fail "$@"; }

# The tree: one object per kernel/*.c, linked into "vmlinux"; bzImage is
# a copy; System.map lists the objects.  SLOW=1 in the config makes the
# link sleep (for the kill test).
S=$T/src
mkdir -p "$S/kernel"
cat > "$S/Makefile" <<'MK'
srctree := $(CURDIR)
O ?= .
objs := $(patsubst $(srctree)/%.c,$(O)/%.o,$(wildcard $(srctree)/kernel/*.c))
.PHONY: olddefconfig bzImage
.SUFFIXES:
olddefconfig:
	@echo "  HOSTCC  scripts/kconfig/conf.o"
	@grep -q '^CONFIG_PRINTK=y' $(O)/.config || echo CONFIG_PRINTK=y >> $(O)/.config
kernel/%.o: $(O)/kernel/%.o ;
$(O)/%.o: $(srctree)/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $*.o"
	@gcc -c -o $@ $<
$(O)/vmlinux: $(objs)
	@echo "  LD      vmlinux"
	@if grep -q '^SLOW=1' $(O)/.config; then sleep 600; fi
	@if grep -q '^FILL=1' $(O)/.config; then head -c 4M /dev/zero > $@.fill; fi
	@cat $^ > $@
bzImage: $(O)/vmlinux
	@mkdir -p $(O)/arch/x86/boot
	@echo "  BUILD   arch/x86/boot/bzImage"
	@cp $< $(O)/arch/x86/boot/bzImage
	@ls $(objs) > $(O)/System.map
MK
for i in 1 2 3 4 5 6; do printf 'int f%d(void) { return %d; }\n' $i $i > "$S/kernel/f$i.c"; done
cat > "$T/tiny.config" <<'CFG'
# tiny
CONFIG_BLK_DEV_INITRD=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_NET=y
CONFIG_INET=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_PCI=y
CFG
cp "$T/tiny.config" "$T/slow.config"; echo SLOW=1 >> "$T/slow.config"
cp "$T/tiny.config" "$T/fill.config"; echo FILL=1 >> "$T/fill.config"
head -c 200000 /dev/urandom > "$S/firmware.bin"

ssh-keygen -q -t ed25519 -N '' -f "$T/other"
echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/wrong_known_hosts"
: > "$T/empty_known_hosts"
R=$T/remote
{
	echo "[kfix]"
	echo "	state-dir = $T/state"
	echo "	cache-dir = $T/cache"
	b() { # name, then key = value lines that differ from a working build host
		local name=$1; shift
		declare -A kv=(
			[host]="ssh://$(id -un)@127.0.0.1:$SSHD_PORT" [ssh-key]=$T/id
			[known-hosts]=$T/known_hosts [remote-dir]=$R [dir]=$T/builds
			[jobs]=2 [timeout]=60s
		)
		for a in "$@"; do kv[${a%%=*}]=${a#*=}; done
		echo "[build \"$name\"]"
		for k in "${!kv[@]}"; do echo "	$k = ${kv[$k]}"; done
	}
	b remote
	b unreachable "host=ssh://$(id -un)@127.0.0.1:$(kt_free_port)"
	b badauth "ssh-key=$T/other"
	b badhostkey "known-hosts=$T/wrong_known_hosts"
	b unknownhost "known-hosts=$T/empty_known_hosts"
	b slow "timeout=8s"
	b local host=local "dir=$T/local-builds"
	b small "remote-dir=$T/small"
	b tiny "remote-dir=$T/tiny"
} > "$T/kfix.conf"

build() { # build NAME [kfixctl build options]: JSON in $T/out.json
	local name=$1; shift
	local rc=0
	"$KFIXCTL" -c "$T/kfix.conf" --json build --build "$name" --src "$S" "$@" \
		> "$T/out.json" 2> "$T/err.txt" || rc=$?
	# a failure's reason is on stderr: keep it in the test's log
	[ "$rc" = 0 ] || { echo "kfixctl build exited $rc:"; cat "$T/err.txt"; } >&2
	return "$rc"
}
j() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$T/out.json" "$1"; }
cc_lines() { grep -c '^  CC ' "$(j 'd["build"]["log"]')" || true; }

# First build: the whole tree goes over, everything compiles.
build remote --config "$T/tiny.config" || fail "first remote build: $(cat "$T/out.json" "$T/err.txt")"
[ "$(j 'd["build"]["status"]')" = ok ] || fail "first build: $(cat "$T/out.json")"
[ "$(cc_lines)" = 6 ] || fail "first build compiled $(cc_lines) files, not 6"
obj=$(dirname "$(j 'd["bzImage"]')")/../../..
obj=$(cd "$obj" && pwd)
case $obj in "$T/builds/"*) ;; *) fail "artifacts not in the local build folder: $obj" ;; esac
remote_obj=$R/$(basename "$obj")
for f in arch/x86/boot/bzImage vmlinux System.map; do
	cmp -s "$obj/$f" "$remote_obj/$f" || fail "$f was not fetched back"
done
[ -f "$R/$(basename "$obj").src/kernel/f3.c" ] || fail "the source is not on the build host"
[ "$(stat -c %Y "$S/kernel/f3.c")" = "$(stat -c %Y "$R/$(basename "$obj").src/kernel/f3.c")" ] ||
	fail "mtimes of the whole tree not kept on the build host"
kt_log "ok: first remote build, artifacts back"

# Nothing changed: nothing is sent, nothing compiles.
build remote --config "$T/tiny.config" || fail "no-op build: $(cat "$T/out.json")"
[ "$(cc_lines)" = 0 ] || fail "a no-op build compiled $(cc_lines) files"

# One file changed, one removed, one added: only those travel.  No pause
# after the last build: tar keeps whole seconds only, and changed files
# must still count as newer than the objects built a moment ago.
echo 'int f2(void) { return 22; }' > "$S/kernel/f2.c"
rm "$S/kernel/f6.c"
echo 'int f7(void) { return 7; }' > "$S/kernel/f7.c"
build remote --config "$T/tiny.config" || fail "incremental build: $(cat "$T/out.json")"
[ "$(cc_lines)" = 2 ] || fail "the incremental build compiled $(cc_lines) files, not 2"
grep -q 22 "$R/$(basename "$obj").src/kernel/f2.c" || fail "the changed file did not reach the build host"
[ ! -e "$R/$(basename "$obj").src/kernel/f6.c" ] || fail "a removed file stayed on the build host"
grep -q f7.o "$obj/System.map" || fail "System.map was not fetched again"
grep -q f6.o "$obj/System.map" && fail "System.map still lists the removed object"
kt_log "ok: incremental remote build (2 of 7 files)"

# A patch: applied here, sent, built there, reverted here (and the
# revert is sent with the next build).
cat > "$T/break.patch" <<'P'
--- a/kernel/f3.c
+++ b/kernel/f3.c
@@ -1 +1 @@
-int f3(void) { return 3; }
+int f3(void) { return undefined_thing; }
P
build remote --config "$T/tiny.config" --patch "$T/break.patch"
[ "$(j 'd["build"]["status"]')" = build-error ] || fail "broken patch: $(cat "$T/out.json")"
[ "$(j 'd["build"]["errors"][0]["file"]')" = kernel/f3.c ] ||
	fail "the error does not name kernel/f3.c: $(j 'd["build"]["errors"]')"
[ "$(j 'd["build"]["errors"][0]["line"]')" = 1 ] || fail "wrong error line"
grep -q 'return 3' "$S/kernel/f3.c" || fail "the patch was not reverted locally"
build remote --config "$T/tiny.config" || fail "build after the broken patch: $(cat "$T/out.json")"
[ "$(cc_lines)" = 1 ] || fail "the reverted file did not rebuild alone ($(cc_lines))"
kt_log "ok: compiler errors from the build host name the tree's file"

# The compile-only check of the touched files, on the build host: the
# broken file alone is compiled, and its error comes back parsed.
build remote --config "$T/tiny.config" --patch "$T/break.patch" --compile-only
[ "$(j 'd["build"]["status"]')" = build-error ] || fail "compile-only: $(cat "$T/out.json")"
[ "$(j 'd["build"]["errors"][0]["file"]')" = kernel/f3.c ] || fail "compile-only error file"
[ "$(cc_lines)" = 1 ] || fail "compile-only compiled $(cc_lines) files, not 1"
grep -q 'LD ' "$(j 'd["build"]["log"]')" && fail "compile-only linked"
cat > "$T/fix.patch" <<'P'
--- a/kernel/f4.c
+++ b/kernel/f4.c
@@ -1 +1 @@
-int f4(void) { return 4; }
+int f4(void) { return 44; }
P
build remote --config "$T/tiny.config" --patch "$T/fix.patch" --compile-only ||
	fail "compile-only of a good patch: $(cat "$T/out.json")"
[ "$(cc_lines)" = 1 ] || fail "compile-only compiled $(cc_lines) files, not 1"
kt_log "ok: compile-only check on the build host"

# Faults: each an infra-error naming the cause, no build started.
fault() { # name, expected words
	build "$1" --config "$T/tiny.config"
	[ "$(j 'd["build"]["status"]')" = infra-error ] || fail "$1: $(cat "$T/out.json" "$T/err.txt")"
	j 'd["build"]["message"]' | grep -qi "$2" || fail "$1: message lacks '$2': $(j 'd["build"]["message"]')"
	kt_log "ok: $1 -> $(j 'd["build"]["message"]')"
}
fault unreachable "refused"
fault badauth "authentication failed"
fault badhostkey "MISMATCH"
fault unknownhost "not in known_hosts"

# A build that outlives its time limit: stopped on the build host, and so
# is one whose kfixctl is killed.
build slow --config "$T/slow.config"
[ "$(j 'd["build"]["status"]')" = infra-error ] || fail "timed-out build: $(cat "$T/out.json")"
j 'd["build"]["message"]' | grep -q "timed out" || fail "time-out message: $(j 'd["build"]["message"]')"
wait_gone() { for _ in $(seq 50); do pgrep -f "sleep 600" -u "$(id -u)" >/dev/null || return 0; sleep 0.2; done; return 1; }
wait_gone || fail "the timed-out build still runs on the build host: $(pgrep -af 'sleep 600')"
"$KFIXCTL" -c "$T/kfix.conf" --json build --build slow --src "$S" --config "$T/slow.config" \
	>/dev/null 2>&1 &
k=$!
for _ in $(seq 100); do pgrep -f "sleep 600" -u "$(id -u)" >/dev/null && break; sleep 0.2; done
pgrep -f "sleep 600" -u "$(id -u)" >/dev/null || fail "the slow build never started"
kill -9 "$k"; wait "$k" 2>/dev/null
wait_gone || fail "the killed build still runs on the build host: $(pgrep -af 'sleep 600')"
kt_log "ok: time-out and kill -9 leave nothing running on the build host"

# A full disk on the build host, while sending the source or while
# building: an infra-error that says so (needs a small tmpfs: root).
if [ "$(id -u)" = 0 ] && mkdir -p "$T/small" "$T/tiny" &&
	mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
	mount -t tmpfs -o size=64k tmpfs "$T/tiny" || fail "cannot mount a second tmpfs"
	trap 'umount "$T/small" "$T/tiny"; kt_cleanup' EXIT
	build tiny --config "$T/tiny.config"
	[ "$(j 'd["build"]["status"]')" = infra-error ] || fail "full disk (sync): $(cat "$T/out.json")"
	j 'd["build"]["message"]' | grep -q "no space left" || fail "sync full: $(j 'd["build"]["message"]')"
	kt_log "ok: full disk while sending -> $(j 'd["build"]["message"]')"
	build small --config "$T/fill.config"
	[ "$(j 'd["build"]["status"]')" = infra-error ] || fail "full disk (make): $(cat "$T/out.json")"
	j 'd["build"]["message"]' | grep -q "no space left" || fail "make full: $(j 'd["build"]["message"]')"
	kt_log "ok: full disk while building -> $(j 'd["build"]["message"]')"
else
	echo "SKIP (part): the full-disk cases need root to mount a small tmpfs" >&2
fi

# The same tree builds locally too, through the same code.
build local --config "$T/tiny.config" || fail "local build: $(cat "$T/out.json")"
[ "$(cc_lines)" = 6 ] || fail "local build compiled $(cc_lines)"
kt_log "ok: local backend"
echo "PASS"
