#!/bin/bash
# What the behaviour checks cost (make bench): kfixctl test-patch of
# clock-null-deref's fix with neither kmemleak nor kselftests, with
# kmemleak, and with kmemleak and the timers:nanosleep kselftest on both
# kernels.  The three run interleaved, KFIX_BENCH_ROUNDS times (default 2),
# on the same warm build folder; the figures are the medians and their
# ratios to the plain validation, taken side by side in one run because
# the machine is shared.
set -uo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/kernel/lib.sh"
kt_setup
S=$kt_here/scenarios/clock-null-deref
rounds=${KFIX_BENCH_ROUNDS:-2}

# The same [vm "test"] without kmemleak: a second VM section.
sed -n '/^\[vm "test"\]/,/^\[/p' "$T/kfix.conf" | sed -e '/^\[vm "test"\]/d' -e '/^\[/d' > "$T/vm.keys"
{ echo '[vm "noleak"]'; cat "$T/vm.keys"; echo '	leak-check = no'; } >> "$T/kfix.conf"

one() { # name, then test-patch arguments; prints the seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$KFIXCTL" -c "$T/kfix.conf" --json test-patch --src "$KT_SRC" --config "$KT_CONFIG" \
		--repro "$S/repro.c" --patch "$S/fix.patch" --runs 1 "${@:2}" > "$T/$1.json" 2>"$T/$1.err"
	t1=$(date +%s.%N)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"] == "fixed", d' \
		"$T/$1.json" || kt_fail "$1: not fixed: $(tail -3 "$T/$1.err")"
	python3 -c "print(f'{$t1 - $t0:.1f}')"
}

# warm: the base and patched builds, the selftests' headers and binaries
one warm --selftests timers:nanosleep >/dev/null
plain=() leak=() full=()
for i in $(seq "$rounds"); do
	plain+=("$(one plain --vm noleak --selftests none)")
	leak+=("$(one leak --vm test --selftests none)")
	full+=("$(one full --vm test --selftests timers:nanosleep)")
done
python3 - "${plain[*]}" "${leak[*]}" "${full[*]}" <<'PY'
import statistics, sys
p, l, f = ([float(x) for x in a.split()] for a in sys.argv[1:4])
mp, ml, mf = statistics.median(p), statistics.median(l), statistics.median(f)
print("validation of one fix (test-patch, base + patched kernel, one run each)")
print(f"  plain (no kmemleak, no kselftests) {mp:7.1f} s  runs {p}")
print(f"  + kmemleak                         {ml:7.1f} s  ratio {ml / mp:.2f}  runs {l}")
print(f"  + kmemleak + timers:nanosleep      {mf:7.1f} s  ratio {mf / mp:.2f}  runs {f}")
PY
