#!/bin/bash
# Faults of a real kernel build that need no full build: the disk holding
# the build directory fills up.  The build directory is a small tmpfs (the
# test runs as root; without the right to mount it skips loudly).  The
# build must end as an infrastructure error that says "no space", never as
# compiler errors blamed on the patch being built; the patch is reverted
# from the source and nothing is left running.  The other faults of the
# issue (unknown commit, a patch that does not apply, missing options, a
# reproducer that does not compile, VM host and guest faults) are in
# kernel.sh and tests/integration/repro-progress.sh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup_tmp
kt_require
S=$kt_here/scenarios
started=$(date +%s)

small="$T/small"
mkdir -p "$small"
mount -t tmpfs -o size=6m,mode=0755 kfix-test-full "$small" 2>"$T/mount.err" ||
	kt_skip "cannot mount a tmpfs ($(cat "$T/mount.err")): the disk-full test needs root"
trap 'umount "$small" 2>/dev/null || umount -l "$small"; kt_cleanup' EXIT

# Only the source is needed: no build of the shared cache.
kt_lock_kernel
KT_TOP=$(KFIX_TEST_TMP="$T/cache" "$kt_here/prepare.sh" --no-build | tail -1) ||
	kt_fail "prepare.sh failed"
KT_SRC=$KT_TOP/src
KT_CONFIG=$KT_TOP/kasan.config
cat > "$T/kfix.conf" <<CFG
[kfix]
	state-dir = $T/state
	cache-dir = $T/cache
[build "small"]
	dir = $small
	jobs = ${KFIX_TEST_JOBS:-2}
[vm "unused"]
	ssh-host = 127.0.0.1
	ssh-port = $(kt_free_port)
	ssh-user = nobody
	image = $T/none.cpio.gz
	workdir = $T/vmwork
CFG

# Processes of this test still running: their folder or arguments in $T.
leftovers() {
	python3 - "$T" <<'PY'
import os, sys
t, me, bad = sys.argv[1], os.getpid(), []
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) in (me, os.getppid()):
        continue
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    if cwd.startswith(t) or t in cmd:
        bad.append(f"{pid} cwd={cwd} {cmd}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

no_space_json() { # label
	python3 - "$T/out.json" "$1" <<'PY' || { cat "$T/out.json" "$T/err.txt" >&2; kt_fail "$1: not reported as a full disk"; }
import json, sys
d = json.load(open(sys.argv[1]))
side = d.get("base", d)
b = side["build"]
assert b["status"] == "infra-error", b
assert "no space left on device" in b["message"], b["message"]
assert b["errors"] == [], b["errors"]
assert side["outcomes"] == ["infra-error"], side["outcomes"]
if "verdict" in d:
    assert d["verdict"] == "infra-error", d["verdict"]
PY
	kt_log "ok: $1"
}

# A fresh build directory on the small disk: it fills up while building.
kt_kfixctl reproduce --src "$KT_SRC" --config "$KT_CONFIG" --repro "$S/msg-uaf/repro.c" \
	--build small --runs 1
[ $? = 1 ] || kt_fail "disk full: exit code"
no_space_json "disk full during a build"
grep -q 'No space left on device' "$small/src--kasan/kfix-build.log" ||
	kt_log "note: the log itself could not hold the message (the disk was full)"

# Building a patch on the full disk: the patch is not blamed and is
# reverted.
kt_kfixctl build --src "$KT_SRC" --config "$KT_CONFIG" --build small \
	--patch "$S/msg-uaf/fix.patch"
[ $? = 1 ] || kt_fail "disk full with a patch: exit code"
no_space_json "disk full while building a patch"
[ ! -e "$KT_SRC/.kfix-applied" ] || kt_fail "the patch journal was left in the source"
patch -s -p1 --dry-run -d "$KT_SRC" -i "$S/msg-uaf/fix.patch" >/dev/null ||
	kt_fail "the patch was left applied in the source"

out=$(leftovers) || { echo "$out" >&2; kt_fail "processes were left running"; }
kt_log "ok: nothing left running"
kt_log "all fault tests passed in $(( $(date +%s) - started ))s"
