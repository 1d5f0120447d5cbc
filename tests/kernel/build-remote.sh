#!/bin/bash
# The real kernel built on a build host over SSH (a real sshd on
# 127.0.0.1), incrementally: kfix sends the whole source once, the O=
# directory on the build host is seeded from the shared base build (so
# that no full build is needed: its .cmd files name the build host's copy
# of the source instead of the cache's), a one-file patch then compiles
# one file and relinks, the artifacts come back, and the kernel built
# there boots and reproduces the bug with the VM host.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# the O= directory as a base build: it is used as it is
KT_BASE_BUILD=full
kt_setup
S=$kt_here/scenarios
command -v tar >/dev/null && command -v setsid >/dev/null || kt_skip "tar or setsid missing"
R=$T/remote
cat >> "$T/kfix.conf" <<CFG
[build "remote"]
	host = ssh://$(id -un)@127.0.0.1:$SSHD_PORT
	ssh-key = $T/id
	known-hosts = $T/known_hosts
	remote-dir = $R
	dir = $T/builds
	jobs = ${KFIX_TEST_JOBS:-2}
	# A seeding that failed would rebuild everything: stop early.
	timeout = 300s
CFG
name=$(basename "$KT_SRC")--$(basename "$KT_CONFIG" .config)
rsrc=$R/$name.src
robj=$R/$name

kt_log "seeding the build host's O= directory from the base build"
mkdir -p "$R"
cp -a "$KT_TOP/build/src--kasan" "$robj" || kt_fail "cannot copy the base build"
# kbuild's objects are named relative to the O= directory, but tools/
# (objtool) uses absolute paths: both folders are renamed.
find "$robj" \( -name '*.cmd' -o -name '*.d' \) -print0 |
	xargs -0 sed -i -e "s|$KT_TOP/build/src--kasan|$robj|g" -e "s|$KT_SRC|$rsrc|g"
rm -rf "$robj/.kfix-"* "$robj/kfix-build.log"

build() { # JSON in $T/out.json
	"$KFIXCTL" -c "$T/kfix.conf" --json build --build remote --src "$KT_SRC" \
		--config "$KT_CONFIG" "$@" > "$T/out.json" 2> "$T/err.txt"
	kt_log "build: $(kt_json 'd["build"]["status"]') in $(kt_json 'd["build"]["ms"]') ms"
}
steps() { grep -cE '^  (CC|LD|AR|AS|KSYMS|OBJCOPY|BUILD|GEN|CALL|UPD)' "$(kt_json 'd["build"]["log"]')" || true; }

t0=$(date +%s)
build || kt_fail "first remote build: $(cat "$T/out.json" "$T/err.txt")"
t1=$(date +%s)
[ "$(kt_json 'd["build"]["status"]')" = ok ] || kt_fail "first remote build: $(cat "$T/out.json")"
kt_log "first remote build (whole source sent, seeded O=): $((t1 - t0)) s, $(steps) steps"
grep -q '^  CC ' "$(kt_json 'd["build"]["log"]')" &&
	kt_log "note: the seeded build compiled: $(grep '^  CC ' "$(kt_json 'd["build"]["log"]')" | head -5)"
[ "$(grep -c '^  CC ' "$(kt_json 'd["build"]["log"]')")" -lt 20 ] ||
	kt_fail "the seeded O= directory rebuilt everything"
cmp -s "$(kt_json 'd["bzImage"]')" "$robj/arch/x86/boot/bzImage" || kt_fail "bzImage not fetched back"
[ -s "$T/builds/$name/vmlinux" ] && [ -s "$T/builds/$name/System.map" ] ||
	kt_fail "vmlinux or System.map not fetched back"

t0=$(date +%s)
build --patch "$S/msg-uaf/fix.patch" || kt_fail "patched remote build: $(cat "$T/out.json" "$T/err.txt")"
t1=$(date +%s)
cc=$(grep -c '^  CC ' "$(kt_json 'd["build"]["log"]')")
kt_log "one-file patch on the build host: $((t1 - t0)) s, $cc files compiled"
[ "$cc" -ge 1 ] && [ "$cc" -le 5 ] || kt_fail "the patched build compiled $cc files"
grep -q "$(sed -n 's/^+[^+]//p' "$S/msg-uaf/fix.patch" | head -1 | sed 's/[][\.*^$]/./g')" \
	"$rsrc/$(sed -n 's|^+++ b/||p' "$S/msg-uaf/fix.patch" | head -1)" ||
	kt_fail "the patched file did not reach the build host"

# Back to the base, built there (reproduce builds it), then booted with
# the VM host.
kt_kfixctl reproduce --build remote --src "$KT_SRC" --config "$KT_CONFIG" \
	--repro "$S/msg-uaf/repro.c" --runs 1
[ "$(kt_json 'd["base"]["crashed"]')" = 1 ] ||
	kt_fail "the kernel built on the build host did not reproduce: $(cat "$T/out.json" "$T/err.txt")"
kt_log "ok: the kernel built on the build host reproduces: $(kt_json 'd["base"]["title"]')"
kt_no_leaks
echo PASS
