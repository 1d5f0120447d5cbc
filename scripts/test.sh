#!/bin/bash
# Builds kfix and runs the whole test suite: unit, integration and
# real-kernel tests with -Werror, unit and integration tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer, and distcheck with the
# unit tests.  The real-kernel tests run beside the others.
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

configure_build() { # name, configure flags...: an --enable-werror build in $OUT/name
	local name=$1; shift
	local dir=$OUT/$name
	echo "=== $name: configure $*"
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$dir" && "$SRC/configure" --enable-werror "$@" >configure.log 2>&1) || {
		tail -30 "$dir/configure.log"; return 1; }
	# the test programs too, so that two make check can share the folder
	(cd "$dir" && make -j"$JOBS" >build.log 2>&1 && make -j"$JOBS" check TESTS= >>build.log 2>&1) || {
		tail -50 "$dir/build.log"; return 1; }
}

check() { # dir, suite log, make check arguments...
	local dir=$1 log=$2; shift 2
	(cd "$dir" && make -j"$JOBS" check TEST_SUITE_LOG="$log" "$@" ${KFIX_CHECK_ARGS:-}) ||
		show_failed "$dir"
	if [ -f "$dir/$log" ]; then count "$dir/$log"; else fail=$((fail + 1)); fi
}

# Two lanes of real-kernel tests, when this shell may make a mount
# namespace: kbuild keeps the absolute paths of the source and O= folders,
# so the second lane gets a copy of the prepared kernel seen at the same
# path through a private bind mount.  Under emulation a test keeps about
# one core busy (a build links on one, the VM runs on one), so a lane per
# core about halves the time.  The second lane's copy lives beside the
# cache and is renewed when the prepared kernel changes.
kernel_cache=${KFIX_TEST_CACHE:-/var/cache/kfix-tests}
lane2_cache=$kernel_cache-lane2
lanes_possible() {
	[ "${KFIX_TEST_LANES:-2}" -ge 2 ] && [ "$(id -u)" = 0 ] && [ "$JOBS" -ge 2 ] &&
		unshare --mount true 2>/dev/null
}

# Prepares the kernel once, then copies it for lane 2; on success lane 2
# may run.  Output goes to $OUT/kernel-lanes.log.
kernel_lane2_ready() {
	local top=$kernel_cache/linux-6.1 copy=$lane2_cache/linux-6.1
	mkdir -p "$kernel_cache" "$lane2_cache" || return 1
	(
		exec 8>>"$kernel_cache/.kernel-tests.lock" && flock 8 || exit 1
		exec 9>>"$lane2_cache/.kernel-tests.lock" && flock 9 || exit 1
		"$SRC/tests/kernel/prepare.sh" | tail -1 || exit 1
		if [ "$(cat "$copy/stamp" 2>/dev/null)" != "$(cat "$top/stamp")" ] ||
		   [ "$(cat "$copy/git.stamp" 2>/dev/null)" != "$(cat "$top/git.stamp" 2>/dev/null)" ]; then
			echo "lanes: copying $top for the second lane"
			rm -rf "$copy" && cp -a "$top" "$copy" || exit 1
		fi
	)
}

# Prepares the kernel while kfix builds, then runs the real-kernel tests
# that $OUT/kernel-tests.list names (written once kfix is built) in
# $OUT/gcc: suite logs kernel-suite*.log.
kernel_job() {
	local dir=$OUT/gcc lane1 lane2= lanes=1
	if [ "${KFIX_SKIP_KERNEL:-0}" != 1 ] && lanes_possible &&
		kernel_lane2_ready >"$OUT/kernel-lanes.log" 2>&1; then lanes=2; fi
	while [ ! -e "$OUT/kernel-tests.list" ]; do sleep 2; done
	lane1=$(cat "$OUT/kernel-tests.list")
	[ -n "$lane1" ] || return 0
	if [ $lanes = 2 ]; then
		lane2=$(printf '%s\n' $lane1 | grep -E "$KERNEL_LANE2" | tr '\n' ' ')
		lane1=$(printf '%s\n' $lane1 | grep -v -E "$KERNEL_LANE2" | tr '\n' ' ')
	fi
	(cd "$dir" && make -j1 check TEST_SUITE_LOG=kernel-suite.log TESTS="$lane1" \
		${KFIX_CHECK_ARGS:-} >kernel-check.out 2>&1) &
	local p1=$!
	if [ -n "$lane2" ]; then
		(cd "$dir" && unshare --mount -- sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
			"$lane2_cache" "$kernel_cache" \
			make -j1 check TEST_SUITE_LOG=kernel-suite-2.log TESTS="$lane2" \
			${KFIX_CHECK_ARGS:-} >kernel-check-2.out 2>&1)
	fi
	wait "$p1"
}
# The second lane: three of the repair scenarios and the whole-flow
# tests, half of the time (measured in a cold run, in minutes: kernel
# 21.5, e2e 13, demo 11, msg-uaf 9.5, bisect 8.5, pipeline 8.5,
# watch-queue-leak 6, clock-null-deref 6, watch-queue-oob 6,
# build-remote 5.5, timer-kclock 5, explore 2.5, syz 2, faults 1; the
# lanes took 54 and 51).
KERNEL_LANE2='^tests/kernel/(repair-(msg-uaf|watch-queue-oob|watch-queue-leak)|e2e|pipeline|bisect)\.sh$'

[ -x ./configure ] || ./autogen.sh >/dev/null
# The kernel is prepared (a whole build when the cache is cold) while kfix
# builds.  The real-kernel tests take one lock per lane and run one after
# another in it: they run beside the rest (the other tests, the sanitizer
# build, distcheck) rather than after it.  Their output is shown once they
# end.
rm -f "$OUT/kernel-tests.list"
mkdir -p "$OUT"
kernel_job &
kpid=$!
if configure_build gcc; then
	all=$(make -s -C "$OUT/gcc" print-tests)
	ktests=$(printf '%s\n' $all | grep '^tests/kernel/' | tr '\n' ' ')
	others=$(printf '%s\n' $all | grep -v '^tests/kernel/' | tr '\n' ' ')
	echo "=== gcc: real-kernel tests, beside the others (shown when they end)"
	echo "$ktests" > "$OUT/kernel-tests.list.tmp" && mv "$OUT/kernel-tests.list.tmp" "$OUT/kernel-tests.list"
	echo "=== gcc: the other tests"
	check "$OUT/gcc" test-suite.log TESTS="$others"
else
	: > "$OUT/kernel-tests.list"
	fail=$((fail + 1))
fi
if KFIX_SKIP_KERNEL=1 configure_build asan --enable-asan CFLAGS="-O1 -g"; then
	KFIX_SKIP_KERNEL=1 check "$OUT/asan" test-suite.log
else
	fail=$((fail + 1))
fi

# The tarball builds, installs and passes the unit tests; its
# distcheck-hook checks that it holds every tracked file, which the tests
# run above need.
echo "=== distcheck"
if [ -d "$OUT/gcc" ] && (cd "$OUT/gcc" && KFIX_SKIP_KERNEL=1 make -j"$JOBS" distcheck \
	TESTS="$(printf '%s\n' ${all:-} | grep -E '^tests/(unit|fuzz)/' | tr '\n' ' ')" \
	>distcheck.log 2>&1); then
	pass=$((pass + 1)); echo "distcheck: PASS"
else
	fail=$((fail + 1)); echo "distcheck: FAIL"; tail -40 "$OUT/gcc/distcheck.log"
	show_failed "$OUT/gcc/kfix-"*/_build
fi

wait "$kpid"
if [ -f "$OUT/gcc/kernel-check.out" ]; then
	echo "=== gcc: real-kernel tests"
	cat "$OUT/kernel-lanes.log" 2>/dev/null
	cat "$OUT/gcc/kernel-check.out"
	if [ -f "$OUT/gcc/kernel-check-2.out" ]; then
		echo "=== gcc: real-kernel tests, second lane"
		cat "$OUT/gcc/kernel-check-2.out"
	fi
	grep -q '^:test-result: \(FAIL\|ERROR\)' "$OUT"/gcc/tests/kernel/*.trs 2>/dev/null &&
		show_failed "$OUT/gcc/tests/kernel"
	if [ -f "$OUT/gcc/kernel-suite.log" ]; then count "$OUT/gcc/kernel-suite.log"; else fail=$((fail + 1)); fi
	[ ! -f "$OUT/gcc/kernel-check-2.out" ] || {
		if [ -f "$OUT/gcc/kernel-suite-2.log" ]; then count "$OUT/gcc/kernel-suite-2.log"; else fail=$((fail + 1)); fi; }
fi

echo "${pass} passed, ${fail} failed, ${skip} skipped"
[ "$fail" -eq 0 ]
