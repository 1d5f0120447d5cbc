#!/bin/bash
# A kfix killed while its VM starts or runs leaves nothing behind on the
# VM host: no qemu, no process started with it, no VM folder.  A real sshd
# on 127.0.0.1 is the VM host; the "kernel" is a multiboot image that
# halts, so the guest never answers and the VM runs until kfix goes.
#  - a process the VM left in its process group dies with the VM, even
#    when the process kfix watches (timeout, then qemu) has exited: what a
#    signal reaching timeout while it forks leaves behind;
#  - kfixctl killed with SIGKILL at points around the VM's start, many
#    times: every VM it started is stopped and its folder removed;
#  - folders of VMs that never started are swept once they are older than
#    any VM can live, and only those.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
. "$here/../kernel/lib.sh"

kt_halting_vm_host vmkill
# the stand-in for qemu that leaves a process in its group and exits
cp "$(command -v sleep)" "$T/lingering"
cat > "$T/leaky-qemu" <<SH
#!/bin/sh
"$T/lingering" 600 </dev/null >/dev/null 2>&1 &
exit 0
SH
chmod +x "$T/leaky-qemu"

cat > "$T/kfix.conf" <<CFG
[kfix]
	state-dir = $T/state
	cache-dir = $T/cache
CFG
for v in "halting qemu-system-x86_64" "leaky $T/leaky-qemu"; do
	cat >> "$T/kfix.conf" <<CFG
[vm "${v%% *}"]
	ssh-host = 127.0.0.1
	ssh-port = $SSHD_PORT
	ssh-user = $(id -un)
	ssh-key = $T/id
	known-hosts = $T/known_hosts
	image = $T/image
	guest-key = $T/id
	guest-known-hosts = $T/known_hosts
	workdir = $T/vmwork
	qemu = ${v#* }
	memory = 128
	cpus = 1
	boot-timeout = 60s
	run-timeout = 10s
CFG
done
mkdir -p "$T/vmwork"

# (exec: in the background, $! must be kfixctl itself)
reproduce() { # VM
	exec "$KFIXCTL" -c "$T/kfix.conf" --json reproduce --kernel "$T/halt.img" --repro "$T/repro" \
		--runs 1 --attempts 1 --vm "$1"
}
# What is left of VMs: processes whose command line names the VM's folder
# or initramfs (the VM host's shells, timeout, qemu) or the lingering
# stand-in, and folders of VMs that started (qemu.out is their first
# file).
left_procs() { pgrep -af "$T/(vmwork|image|lingering)" | grep -v pgrep || true; }
left_dirs() { find "$T/vmwork" -mindepth 2 -maxdepth 2 -name qemu.out 2>/dev/null; }
nothing_left() { [ -z "$(left_procs)" ] && [ -z "$(left_dirs)" ]; }

# ---- sweeping: a folder older than any VM goes, a young one stays ----
mkdir -p "$T/vmwork/vm-1-00000000" "$T/vmwork/vm-2-00000000" "$T/vmwork/other"
echo x > "$T/vmwork/vm-1-00000000/bzImage"
touch -d '3 hours ago' "$T/vmwork/vm-1-00000000" "$T/vmwork/other"
touch -d '20 minutes ago' "$T/vmwork/vm-2-00000000"

# ---- a process left in the VM's group dies with the VM ----
(reproduce leaky) > "$T/out.json" 2> "$T/err.txt"
grep -q "qemu exited 0" "$T/out.json" || { cat "$T/out.json" "$T/err.txt"; kt_fail "leaky: the stand-in qemu did not run"; }
wait_for 20 nothing_left || { left_procs; left_dirs; kt_fail "leaky: the VM's process group outlived it"; }
kt_log "ok: what the VM left in its process group was stopped with it"
[ ! -e "$T/vmwork/vm-1-00000000" ] || kt_fail "a VM folder 3 hours old was not swept"
[ -d "$T/vmwork/vm-2-00000000" ] || kt_fail "a VM folder 20 minutes old was swept"
[ -d "$T/vmwork/other" ] || kt_fail "a folder not named like a VM's was swept"
rm -rf "$T/vmwork/vm-2-00000000" "$T/vmwork/other"
kt_log "ok: only the VM folders older than any VM were swept"

# ---- kfixctl killed around the VM's start ----
# The kill comes a random delay after a point of the VM's start: in odd
# rounds after the VM folder appears (the kernel is copied, the script
# about to start), in even rounds after qemu.out appears (the script is
# starting timeout and qemu).  Those are where the signal races qemu's
# start; waiting for qemu.out in half the rounds keeps the second race
# covered however slow the VM host is.
N=${KFIX_VMKILL_ROUNDS:-20}
started=0
for i in $(seq "$N"); do
	before=$(ls "$T/vmwork")
	reproduce halting > "$T/round.log" 2>&1 &
	p=$!
	for _ in $(seq 1200); do
		if [ $((i % 2)) = 1 ]; then
			[ "$(ls "$T/vmwork")" != "$before" ] && break
		else
			[ -n "$(left_dirs)" ] && break
		fi
		kill -0 "$p" 2>/dev/null || { cat "$T/round.log"; kt_fail "round $i: kfixctl ended before its VM started"; }
		sleep 0.025
	done
	sleep "$(python3 -c 'import random; print(random.uniform(0, 0.6))')"
	[ -n "$(left_dirs)" ] && started=$((started + 1))
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	wait_for 30 nothing_left || { left_procs; left_dirs; kt_fail "round $i: a VM of the killed kfixctl was left"; }
done
# folders of VMs that never started (killed while the kernel was copied)
# stay until they are old enough to be swept
never=$(find "$T/vmwork" -mindepth 1 -maxdepth 1 | wc -l)
[ "$started" -ge $((N / 2)) ] || kt_fail "only $started of $N rounds killed kfixctl after its VM started"
kt_log "ok: $N kills of kfixctl ($started after its VM started, $never before): nothing left running, no folder of a started VM left"
