#!/bin/bash
# Kernel toolstack figures (make bench): incremental build after a one-file
# patch as a ratio to the full build, the agent's compile check of the same
# patch beside it, boot-to-SSH, one reproducer run, and
# kfix's overhead over the raw make + qemu + ssh steps for the same work.
# The full build time is the cold build prepare.sh recorded in the cache
# (KFIX_BENCH_FULL=1 measures a fresh one into a temporary O= directory).
set -uo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/kernel/lib.sh"
kt_setup
S=$kt_here/scenarios
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.1f}')"; }

if [ "${KFIX_BENCH_FULL:-0}" = 1 ]; then
	o="$T/full-obj"; mkdir -p "$o"; cp "$KT_CONFIG" "$o/.config"
	t0=$(now)
	make -s -C "$KT_SRC" O="$o" olddefconfig >/dev/null && make -s -C "$KT_SRC" O="$o" -j2 bzImage >/dev/null 2>&1
	full=$(secs "$t0" "$(now)")
else
	full=$(cat "$KT_TOP/full-build.seconds" 2>/dev/null || echo "")
fi

# A no-op build first, so that the incremental figure is one file only.
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" >/dev/null
t0=$(now)
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" >/dev/null
noop=$(secs "$t0" "$(now)")
t0=$(now)
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" --patch "$S/msg-uaf/fix.patch" >/dev/null
incr=$(secs "$t0" "$(now)")
# And back to the base (the reverted file rebuilds again).
t0=$(now)
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" >/dev/null
back=$(secs "$t0" "$(now)")
# The agent's compile check of the same patch: its objects only, no link.
t0=$(now)
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" --patch "$S/msg-uaf/fix.patch" \
	--compile-only >/dev/null
check=$(secs "$t0" "$(now)")
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" >/dev/null

# kfix: a no-op build, one VM, one reproducer run.
kfix_round() {
	local t0
	t0=$(now)
	kt_kfixctl reproduce --src "$KT_SRC" --config "$KT_CONFIG" --repro "$S/msg-uaf/repro.c" --runs 1
	secs "$t0" "$(now)"
}

# The same work by hand: make, gcc, qemu, ssh until the guest answers,
# copy and run the reproducer, read the console.
raw_round() {
	local t0 port qpid sshg
	t0=$(now)
	make -s -C "$KT_SRC" O="$KT_TOP/build/src--kasan" -j2 bzImage >/dev/null 2>&1
	gcc -static -pthread -O1 -w -o "$T/repro" "$S/msg-uaf/repro.c"
	port=$(kt_free_port)
	qemu-system-x86_64 -m 512 -smp 1 -display none -monitor none -no-reboot \
		-kernel "$KT_TOP/build/src--kasan/arch/x86/boot/bzImage" -initrd "$T/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1" \
		-netdev user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22 -device virtio-net-pci,netdev=n0 \
		-serial file:"$T/raw-console.log" </dev/null >/dev/null 2>&1 &
	qpid=$!; KT_PIDS+=("$qpid")
	sed 's/^\* /[127.0.0.1]:'"$port"' /' "$T/guest_known_hosts" > "$T/gkh"
	sshg=(ssh -q -p "$port" -i "$T/id" -o UserKnownHostsFile="$T/gkh" \
		-o StrictHostKeyChecking=yes -o ConnectTimeout=5 root@127.0.0.1)
	until "${sshg[@]}" true 2>/dev/null; do sleep 0.2; done
	"${sshg[@]}" 'cat > /tmp/r && chmod +x /tmp/r' < "$T/repro"
	"${sshg[@]}" 'cd /tmp && ./r' 2>/dev/null
	wait "$qpid"
	grep -q 'BUG: KASAN' "$T/raw-console.log" || echo "warning: the raw run did not crash" >&2
	secs "$t0" "$(now)"
}

# Side by side, alternating, ${KFIX_BENCH_ROUNDS:-3} rounds: the medians.
kfix_all=() raw_all=()
for _ in $(seq "${KFIX_BENCH_ROUNDS:-3}"); do
	kfix_all+=("$(kfix_round)")
	raw_all+=("$(raw_round)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
kfix_total=$(median "${kfix_all[@]}")
raw_total=$(median "${raw_all[@]}")
echo "kfix rounds: ${kfix_all[*]} s; raw rounds: ${raw_all[*]} s" >&2
boot=$(kt_json 'round(d["base"]["outcomes"][0]["boot_ms"] / 1000, 1)')
run=$(kt_json 'round(d["base"]["outcomes"][0]["run_ms"] / 1000, 1)')

python3 - "$full" "$noop" "$incr" "$back" "$boot" "$run" "$kfix_total" "$raw_total" "$check" <<'PY'
import sys
full, noop, incr, back, boot, run, kfix, raw, check = sys.argv[1:]
f = lambda s: float(s) if s else None
print("kernel toolstack (linux-source-6.1, tinyconfig+KASAN, make -j2, qemu TCG):")
print(f"  full build               {full or 'n/a'} s (cold build recorded by prepare.sh)")
print(f"  no-op build (kfix)       {noop} s")
print(f"  one-file patch build     {incr} s", end="")
print(f"  ratio to full {f(incr)/f(full):.3f}" if f(full) else "")
print(f"  back to base             {back} s")
print(f"  compile check, same patch {check} s  ratio to the one-file build {f(check)/f(incr):.3f}")
print(f"  boot to guest SSH        {boot} s")
print(f"  reproducer run           {run} s (copy+run until the crash)")
print(f"  kfix reproduce, 1 run    {kfix} s (median)")
print(f"  raw make+qemu+ssh        {raw} s (median)")
print(f"  kfix overhead            {(f(kfix)-f(raw))/f(raw)*100:+.1f} %")
PY
