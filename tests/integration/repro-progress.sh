#!/bin/bash
# kfixctl reproduce/build on a terminal: build progress (stage, percentage
# against the previous build of the same O= directory, runs done) on a
# line rewritten in place; --json stays pure JSON.  A full disk during the
# build is an infrastructure error, not a compile error blamed on the code.
# make is a stand-in (tests/integration/fake-make) and the VM host is a
# closed port, so no kernel is needed.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/bin" "$T/src"
ln -s "$top_srcdir/tests/integration/fake-make" "$T/bin/make"
export PATH="$T/bin:$PATH"
printf '# test\n' > "$T/test.config"
for o in BLK_DEV_INITRD SERIAL_8250_CONSOLE NET INET VIRTIO_NET VIRTIO_PCI PRINTK; do
	echo "CONFIG_$o=y" >> "$T/test.config"
done
port=$(free_port)
write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[build "b"]
	dir = $T/builds
	jobs = 1
	# make is a stand-in script from this test's folder
	sandbox = none
[vm "closed"]
	ssh-host = 127.0.0.1
	ssh-port = $port
	ssh-user = nobody
	image = $T/none.cpio.gz
	workdir = $T/vmwork
CONF
cp /bin/true "$T/repro"

# on_tty OUT CMD...: runs CMD with stdin, stdout and stderr on a pty.
on_tty() {
	local out=$1; shift
	python3 - "$out" "$@" <<'PY'
import os, pty, sys
out = open(sys.argv[1], "wb")
def read(fd):
    data = os.read(fd, 65536)
    out.write(data)
    return data
status = pty.spawn(sys.argv[2:], read)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

args=(--src "$T/src" --config "$T/test.config" --repro "$T/repro" --runs 1 --attempts 1)
export FAKE_MAKE_DELAY=0.01
# An edit before each build, so that make runs: the same source again
# would get the base kernel kept from the last build.
edit() { date +%s%N > "$T/src/edited.c"; }

# The first build of the directory has nothing to compare with.
on_tty "$T/tty1" "$KFIXCTL" -c "$T/kfix.conf" reproduce "${args[@]}" && fail "reproduce succeeded"
grep -q 'base: build compile (20 steps, no estimate yet)' "$T/tty1" || { cat -v "$T/tty1"; fail "no step count on the first build"; }
grep -q '%' "$T/tty1" && fail "a percentage without an estimate"
ok "first build: steps without a percentage"

# Two incremental builds: the second is measured against the first.
edit; on_tty "$T/tty2" "$KFIXCTL" -c "$T/kfix.conf" reproduce "${args[@]}" || true
edit; on_tty "$T/tty3" "$KFIXCTL" -c "$T/kfix.conf" reproduce "${args[@]}" || true
# One line per redraw: carriage returns and "erase line" split them.
tr '\r' '\n' < "$T/tty3" | sed 's/^\x1b\[K//' > "$T/lines3"
grep -q '^base: build compile 2% (1/36 steps) kernel/f1.o, runs 0/1$' "$T/lines3" ||
	{ cat -v "$T/tty3"; fail "no percentage on an incremental build"; }
grep -q '^base: build link 9[0-9]% (3[0-9]/36 steps) vmlinux, runs 0/1$' "$T/lines3" ||
	{ cat -v "$T/tty3"; fail "no link stage"; }
grep -q '^base: runs 0/1 done, 1 attempt$' "$T/lines3" || { cat -v "$T/tty3"; fail "no runs line"; }
grep -q 'base run 1: infra-error' "$T/lines3" || { cat -v "$T/tty3"; fail "no run result line"; }
grep -q 'verdict: infra-error' "$T/lines3" || { cat -v "$T/tty3"; fail "no verdict"; }
# Percentages only go up and stay below 100 while make runs.
prev=-1
for p in $(grep -o ' [0-9]*% ' "$T/lines3" | tr -d ' %'); do
	[ "$p" -ge "$prev" ] && [ "$p" -le 99 ] || fail "percentage $p after $prev"
	prev=$p
done
ok "incremental build: percentage, stage, runs done"

# --json on a terminal: nothing but the JSON document.
on_tty "$T/tty4" "$KFIXCTL" -c "$T/kfix.conf" --json reproduce "${args[@]}" || true
tr -d '\r' < "$T/tty4" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["verdict"]=="infra-error", d' ||
	{ cat -v "$T/tty4"; fail "--json output is not pure JSON"; }
ok "--json is unaffected"

# Not a terminal: no progress line either.
ctl reproduce "${args[@]}" >"$T/plain.out" 2>"$T/plain.err" || true
grep -q 'steps' "$T/plain.err" && fail "progress written to a non-terminal"
ok "no progress off a terminal"

# kfixctl build shows the same progress.
edit
on_tty "$T/tty5" "$KFIXCTL" -c "$T/kfix.conf" build --src "$T/src" --config "$T/test.config" ||
	{ cat -v "$T/tty5"; fail "build failed"; }
grep -q 'build: build compile [0-9]*% ([0-9]*/36 steps)' "$T/tty5" || { cat -v "$T/tty5"; fail "no progress in kfixctl build"; }
ok "kfixctl build progress"

# The disk fills up: infra-error, "no space", no compiler error listed.
edit
FAKE_MAKE_FAIL=nospace ctl --json reproduce "${args[@]}" >"$T/full.json" 2>"$T/full.err" &&
	fail "reproduce succeeded on a full disk"
python3 - "$T/full.json" <<'PY' || { cat "$T/full.json"; fail "disk full not reported as such"; }
import json, sys
d = json.load(open(sys.argv[1]))
b = d["base"]["build"]
assert d["verdict"] == "infra-error", d["verdict"]
assert b["status"] == "infra-error", b
assert "no space left on device" in b["message"], b["message"]
assert b["errors"] == [], b["errors"]
assert d["base"]["outcomes"] == ["infra-error"], d["base"]["outcomes"]
PY
FAKE_MAKE_FAIL=nospace ctl reproduce "${args[@]}" >"$T/full.out" 2>&1 && fail "reproduce succeeded"
grep -q 'message .*no space left on device' "$T/full.out" || { cat "$T/full.out"; fail "no message on the terminal"; }
ok "disk full: infra-error, not the code's fault"

# reproduce builds no patch: --patch is refused, not ignored
rc=0
ctl reproduce "${args[@]}" --patch "$T/test.config" >"$T/p.out" 2>"$T/p.err" || rc=$?
[ $rc = 2 ] && grep -q -- '--patch is for test-patch' "$T/p.err" ||
	fail "reproduce --patch: exit $rc, $(cat "$T/p.err")"
ok "reproduce refuses --patch"

pgrep -f "$T" >/dev/null && { pgrep -af "$T"; fail "processes left running"; }
ok "nothing left running"
