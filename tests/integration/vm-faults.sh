#!/bin/bash
# Faults of the VM host and the guest, without a kernel: a real sshd on
# 127.0.0.1 is the VM host and the "kernel" is a tiny multiboot image that
# halts, so no guest ever answers.  Each fault must end as a clear outcome
# with a message saying what went wrong, and leave no qemu (nor anything
# else started for it) running.  The same faults with a real kernel are in
# tests/kernel/kernel.sh; this one also runs under the sanitizers.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
. "$here/../kernel/lib.sh"

kt_halting_vm_host vmfaults
echo 'int main(void) { return 0; }' > "$T/repro.c"

cat > "$T/kfix.conf" <<CFG
[kfix]
	state-dir = $T/state
	cache-dir = $T/cache
CFG
vm() { # name, then key = value lines that differ from a working VM host
	local name=$1; shift
	{
		echo "[vm \"$name\"]"
		declare -A kv=(
			[ssh-host]=127.0.0.1 [ssh-port]=$SSHD_PORT [ssh-user]=$(id -un)
			[ssh-key]=$T/id [known-hosts]=$T/known_hosts [image]=$T/image
			[guest-key]=$T/id [guest-known-hosts]=$T/known_hosts
			[workdir]=$T/vmwork [memory]=128 [cpus]=1 [boot-timeout]=6s
			[run-timeout]=10s
		)
		for a in "$@"; do kv[${a%%=*}]=${a#*=}; done
		for k in "${!kv[@]}"; do echo "	$k = ${kv[$k]}"; done
	} >> "$T/kfix.conf"
}
ssh-keygen -q -t ed25519 -N '' -f "$T/other"
echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/wrong_known_hosts"
vm unreachable "ssh-port=$(kt_free_port)"
vm badauth "ssh-key=$T/other"
vm badhostkey "known-hosts=$T/wrong_known_hosts"
vm unknownhost "known-hosts=$T/empty_known_hosts"
vm noqemu "qemu=/nonexistent/qemu-system-x86_64"
vm noguest
: > "$T/empty_known_hosts"

# Processes still running for this test other than its sshd.
leftovers() {
	pgrep -af "qemu-system-x86_64.*$T" || true
	pgrep -af "timeout .*$T" || true
}

for v in unreachable:"Connection refused" badauth:"authentication failed" \
	 badhostkey:"HOST KEY MISMATCH" unknownhost:"not in known_hosts" \
	 noqemu:"nonexistent" noguest:"guest SSH never answered"; do
	name=${v%%:*} msg=${v#*:}
	"$KFIXCTL" -c "$T/kfix.conf" --json reproduce --kernel "$T/halt.img" --repro "$T/repro" \
		--runs 1 --attempts 1 --vm "$name" > "$T/out.json" 2> "$T/err.txt"
	[ $? = 1 ] || kt_fail "$name: exit code"
	verdict=$(kt_json 'd["verdict"]') || { cat "$T/err.txt"; kt_fail "$name: no JSON"; }
	[ "$verdict" = infra-error ] || { cat "$T/out.json"; kt_fail "$name: verdict $verdict"; }
	[ "$(kt_json 'd["base"]["outcomes"][0]["outcome"]')" = infra-error ] || kt_fail "$name: outcome"
	grep -q "$msg" "$T/out.json" || { cat "$T/out.json"; kt_fail "$name: no '$msg' in the message"; }
	left=$(leftovers)
	[ -z "$left" ] || { echo "$left"; kt_fail "$name: left running"; }
	[ -z "$(ls -A "$T/vmwork" 2>/dev/null)" ] || { ls -la "$T/vmwork"; kt_fail "$name: VM files left on the VM host"; }
	kt_log "ok: $name: infra-error, '$msg', nothing left"
done
