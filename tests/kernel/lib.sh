# Shared pieces of the kernel tests: a real OpenSSH server on 127.0.0.1 as
# the VM host, an initramfs with busybox and dropbear as the guest, the
# shared base kernel from prepare.sh, and a kfix config tying them together.
# Sourced by the test scripts; everything lives in $T (mktemp) and every
# process started here is stopped by kt_cleanup.  What the integration
# tests share with these is in tests/lib-common.sh; the kt_ names stay,
# since callers such as scripts/demo.sh redefine kt_skip.

kt_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$kt_here/../lib-common.sh"
# minutes-long tests: every message carries the time
TEST_LOG_TIME=1
KFIXCTL=${top_builddir:-.}/daemon/kfixctl
[ -x "$KFIXCTL" ] || KFIXCTL=${top_builddir:-.}/kfixctl

kt_log() { test_log "$@"; }
kt_fail() { test_fail "$@"; }
kt_skip() { test_skip "$@"; }

kt_require() {
	[ "${KFIX_SKIP_KERNEL:-0}" = 1 ] && kt_skip "KFIX_SKIP_KERNEL=1"
	local t
	for t in qemu-system-x86_64 /usr/sbin/sshd ssh-keygen busybox dropbear dropbearkey \
		gcc make patch cpio gzip flock timeout bc bison flex; do
		command -v "$t" >/dev/null 2>&1 || kt_skip "$t is not installed"
	done
	[ -r /usr/src/linux-source-6.1.tar.xz ] || kt_skip "linux-source-6.1 is not installed"
	file -L "$(command -v busybox)" 2>/dev/null | grep -q static ||
		kt_skip "busybox is not statically linked (install busybox-static)"
	echo 'int main(void){return 0;}' > "$T/static.c"
	gcc -static -o "$T/static" "$T/static.c" 2>/dev/null || kt_skip "gcc cannot link statically"
}

kt_setup_tmp() {
	T=$(test_tmp_make kfix-kernel)
	KT_PIDS=()
	trap kt_cleanup EXIT
}

# KFIX_KEEP_TMP=1 keeps $T to look at after a failure.
kt_cleanup() {
	[ -z "${KT_GIT:-}" ] || rm -f "$KT_SRC/.git"
	test_cleanup TERM "${KFIX_KEEP_TMP:-}" "${KT_PIDS[@]}"
}

kt_free_port() { free_port; }

# The VM host: sshd on 127.0.0.1 running as the current user, its own host
# key, our key authorized.
kt_start_sshd() {
	ssh-keygen -q -t ed25519 -N '' -f "$T/id" -C kfix-test
	ssh-keygen -q -t ed25519 -N '' -f "$T/sshd_host_key"
	cp "$T/id.pub" "$T/authorized_keys"
	chmod 600 "$T/authorized_keys"
	SSHD_PORT=$(kt_free_port)
	cat > "$T/sshd_config" <<CFG
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $T/sshd_host_key
AuthorizedKeysFile $T/authorized_keys
PidFile $T/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
CFG
	[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
	/usr/sbin/sshd -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
	SSHD_PID=$!
	KT_PIDS+=("$SSHD_PID")
	# a test that needs the host sees it refuse; others go on
	wait_for 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' sshd-probe "$SSHD_PORT" || true
	echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/sshd_host_key.pub")" > "$T/known_hosts"
}

# The VM host of the tests of VM faults, without a kernel: $T (named
# kfix-NAME), a real sshd on 127.0.0.1, and $T/halt.img, a multiboot
# image (QEMU loads it with -kernel) whose code halts for good (cli; hlt;
# jmp back to hlt), so no guest ever answers; $T/image stands for the
# initramfs and $T/repro for the reproducer.
kt_halting_vm_host() { # NAME
	local t
	for t in /usr/sbin/sshd ssh-keygen qemu-system-x86_64 timeout python3; do
		command -v "$t" >/dev/null 2>&1 || kt_skip "$t is not installed"
	done
	T=$(mktemp -d "${TMPDIR:-/tmp}/kfix-$1.XXXXXX")
	KT_PIDS=()
	trap kt_cleanup EXIT
	kt_start_sshd
	(exec 3<>"/dev/tcp/127.0.0.1/$SSHD_PORT") 2>/dev/null ||
		kt_skip "sshd does not start here: $(cat "$T/sshd.log")"
	python3 - "$T/halt.img" <<'PY'
import struct, sys
magic, flags, load = 0x1BADB002, 0x00010000, 0x100000
head = struct.pack("<8I", magic, flags, (-(magic + flags)) & 0xffffffff,
                   load, load, 0, 0, load + 32)
open(sys.argv[1], "wb").write(head + b"\xfa\xf4\xeb\xfd")
PY
	echo image > "$T/image"
	cp /bin/true "$T/repro"
}

# The guest: busybox, dropbear and its libraries, our key for root.
kt_make_initramfs() {
	local r="$T/initramfs" lib
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,root/.ssh,etc/dropbear,lib,lib64,usr/bin,usr/sbin,var/log}
	cp "$(command -v busybox)" "$r/bin/busybox"
	for lib in $(ldd "$(command -v dropbear)" | grep -o '/[^ ]*'); do
		cp -L "$lib" "$r$lib" 2>/dev/null || { mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"; }
	done
	cp "$(command -v dropbear)" "$r/sbin/dropbear"
	dropbearkey -t ed25519 -f "$r/etc/dropbear/dropbear_ed25519_host_key" >/dev/null 2>&1
	echo "* $(dropbearkey -y -f "$r/etc/dropbear/dropbear_ed25519_host_key" | grep '^ssh-' | cut -d' ' -f1,2)" \
		> "$T/guest_known_hosts"
	cp "$T/id.pub" "$r/root/.ssh/authorized_keys"
	chmod 700 "$r/root/.ssh"; chmod 600 "$r/root/.ssh/authorized_keys"
	echo 'root:x:0:0:root:/root:/bin/sh' > "$r/etc/passwd"
	echo 'root::0:0:99999:7:::' > "$r/etc/shadow"
	echo 'root:x:0:' > "$r/etc/group"
	echo '/bin/sh' > "$r/etc/shells"
	cat > "$r/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
echo "kfix-guest: starting dropbear"
# Only the pinned key: -R would make (and offer) keys of other types.
dropbear -E -p 22 -r /etc/dropbear/dropbear_ed25519_host_key
exec sh -c 'while :; do sleep 3600; done'
INIT
	chmod +x "$r/init"
	(cd "$r" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$T/initramfs.cpio.gz"
}

# The shared source folder is patched in place by builds (and reverted):
# one kernel test at a time uses it, whatever make -j runs in parallel.
# The lock is held until the test's shell exits.
kt_lock_kernel() {
	local cache=${KFIX_TEST_CACHE:-/var/cache/kfix-tests}
	mkdir -p "$cache" 2>/dev/null || return 0
	exec 8>>"$cache/.kernel-tests.lock" || return 0
	if ! flock -n 8; then
		kt_log "waiting for another kernel test to finish"
		flock 8
	fi
}

# The base kernel: built once into the cache by prepare.sh.  With
# --if-cold, only when the O= directory was never built: the test's kfix
# builds the base itself before it uses it.
kt_prepare_kernel() {
	kt_lock_kernel
	KT_TOP=$(KFIX_TEST_TMP="$T/cache" "$kt_here/prepare.sh" "$@" | tail -1) ||
		kt_fail "prepare.sh failed"
	KT_SRC=$KT_TOP/src
	KT_CONFIG=$KT_TOP/kasan.config
}

# The prepared source as a git checkout, for a base commit, blame and
# history: the history lives beside the cache (made once per prepared
# source); the source folder points at it only while the test runs (under
# the kernel lock).  Sets KT_GIT and KT_BASE.
kt_git_source() {
	command -v git >/dev/null || kt_skip "git is not installed"
	local g=$KT_TOP/git
	if [ "$(cat "$g.stamp" 2>/dev/null)" != "$(cat "$KT_TOP/stamp")" ] || [ ! -d "$g" ]; then
		kt_log "committing the prepared source to $g (once per source)"
		rm -rf "$g"
		git -C "$KT_SRC" --git-dir="$g" --work-tree="$KT_SRC" init -q -b master || kt_fail "git init"
		printf '.kfix*\n' > "$g/info/exclude"
		# -f: Debian's top-level .gitignore ignores everything
		git -C "$KT_SRC" --git-dir="$g" --work-tree="$KT_SRC" add -A -f . || kt_fail "git add"
		git -C "$KT_SRC" --git-dir="$g" --work-tree="$KT_SRC" rm -r -q --cached --ignore-unmatch '.kfix*' ||
			kt_fail "git rm"
		git -C "$KT_SRC" --git-dir="$g" --work-tree="$KT_SRC" -c user.name=kfix-test \
			-c user.email=test@kfix.invalid \
			commit -q -m "Linux 6.1 (Debian) with the kfix test scenarios" || kt_fail "git commit"
		cp "$KT_TOP/stamp" "$g.stamp"
	fi
	KT_GIT=$g
	echo "gitdir: $g" > "$KT_SRC/.git"
	# a git checkout would make kbuild append "+" to the release: not here
	export LOCALVERSION=
	KT_BASE=$(git --git-dir="$g" rev-parse HEAD) || kt_fail "no base commit"
}

# kt_repair_settings: the [agent] settings the repair tests' cassettes
# were recorded with, the fewest runs that still count: one on the base,
# two per patch.
kt_repair_settings() {
	cat >> "$T/kfix.conf" <<CFG
[agent]
	base-runs = 1
	validate-runs = 2
	locations = 2
CFG
}

kt_write_config() {
	cat > "$T/kfix.conf" <<CFG
[kfix]
	state-dir = $T/state
	cache-dir = $T/cache
[agent]
	# the symbol index of the prepared source, made once for all tests
	index-dir = $KT_TOP/index
	# the tests that want kselftests name them: "auto" would run every
	# test of a touched subsystem, minutes each under emulation
	selftests = none
[build "local"]
	dir = $KT_TOP/build
	jobs = ${KFIX_TEST_JOBS:-2}
[vm "test"]
	ssh-host = 127.0.0.1
	ssh-port = $SSHD_PORT
	ssh-user = $(id -un)
	ssh-key = $T/id
	known-hosts = $T/known_hosts
	image = $T/initramfs.cpio.gz
	guest-key = $T/id
	guest-known-hosts = $T/guest_known_hosts
	workdir = $T/vmwork
	count = 2
	cpus = 1
	memory = 512
	boot-timeout = ${KT_BOOT_TIMEOUT:-180s}
	run-timeout = 30s
CFG
}

kt_setup() {
	kt_setup_tmp
	kt_require
	kt_start_sshd
	kt_make_initramfs
	# KT_BASE_BUILD=full: the test uses the O= directory's base kernel
	# as it is, not through a kfix build
	if [ "${KT_BASE_BUILD:-}" = full ]; then kt_prepare_kernel; else kt_prepare_kernel --if-cold; fi
	kt_write_config
}

# Runs kfixctl with the test config; JSON on stdout into $T/out.json.
kt_kfixctl() {
	ctl --json "$@" > "$T/out.json" 2> "$T/err.txt"
}

kt_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$T/out.json" "$1"; }

kt_no_leaks() {
	# Only VMs started from this test's folder count: other developers'
	# VMs may be running on the same machine.
	if pgrep -f "qemu-system-x86_64.*$T" >/dev/null; then
		pgrep -af "qemu-system-x86_64.*$T" >&2
		kt_fail "a qemu process was left running"
	fi
}
