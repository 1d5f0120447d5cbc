#!/bin/bash
# Builds kfix and runs the whole test suite: unit, integration and
# real-kernel tests with -Werror, then unit and integration tests again
# under AddressSanitizer and UndefinedBehaviorSanitizer, then distcheck.
# Prints automake's summaries and a final "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
OUT=${KFIX_TEST_BUILD:-$SRC/build-test}
JOBS=$(nproc)
pass=0 fail=0 skip=0

count() { # adds the PASS/FAIL/SKIP lines of an automake test-suite.log
	local log=$1 p f s x e
	p=$(sed -n 's/^# PASS: *//p' "$log" | tail -1)
	f=$(sed -n 's/^# FAIL: *//p' "$log" | tail -1)
	s=$(sed -n 's/^# SKIP: *//p' "$log" | tail -1)
	x=$(sed -n 's/^# XPASS: *//p' "$log" | tail -1)
	e=$(sed -n 's/^# ERROR: *//p' "$log" | tail -1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0} + ${x:-0} + ${e:-0}))
	skip=$((skip + ${s:-0}))
}

show_failed() { # DIR: the end of each failed test's log under DIR
	local f
	for f in $(grep -l '^:test-result: \(FAIL\|ERROR\)' $(find "$1" -name '*.trs') 2>/dev/null); do
		echo "--- ${f%.trs}.log"; tail -40 "${f%.trs}.log"; done
}

run_suite() { # name, configure flags..., then make check
	local name=$1; shift
	local dir=$OUT/$name
	echo "=== $name: configure $*"
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$dir" && "$SRC/configure" --enable-werror "$@" >configure.log 2>&1) || {
		tail -30 "$dir/configure.log"; fail=$((fail + 1)); return; }
	(cd "$dir" && make -j"$JOBS" >build.log 2>&1) || {
		tail -50 "$dir/build.log"; fail=$((fail + 1)); return; }
	(cd "$dir" && make -j"$JOBS" check ${KFIX_CHECK_ARGS:-}) || show_failed "$dir"
	if [ -f "$dir/test-suite.log" ]; then count "$dir/test-suite.log"; else fail=$((fail + 1)); fi
}

[ -x ./configure ] || ./autogen.sh >/dev/null
run_suite gcc
KFIX_SKIP_KERNEL=1 run_suite asan --enable-asan CFLAGS="-O1 -g"

echo "=== distcheck"
if (cd "$OUT/gcc" && KFIX_SKIP_KERNEL=1 make -j"$JOBS" distcheck >distcheck.log 2>&1); then
	pass=$((pass + 1)); echo "distcheck: PASS"
else
	fail=$((fail + 1)); echo "distcheck: FAIL"; tail -40 "$OUT/gcc/distcheck.log"
	show_failed "$OUT/gcc/kfix-"*/_build
fi

echo "${pass} passed, ${fail} failed, ${skip} skipped"
[ "$fail" -eq 0 ]
