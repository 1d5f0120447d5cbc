#!/bin/bash
# What the build sandbox costs ([build] sandbox = bwrap against none): an
# incremental kernel build after a one-file patch, the two kinds in
# alternating rounds on the same O= folder, each followed by the build
# back to the base (also one file, also timed).  Prints every round, the
# medians and the median of the per-round ratios.  ROUNDS (default 5).
# Run with `make bench` or alone with top_builddir set.
set -uo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/kernel/lib.sh"
kt_setup
command -v bwrap >/dev/null || kt_skip "bubblewrap is not installed"
S=$kt_here/scenarios
PATCH=$S/msg-uaf/fix.patch
now() { date +%s.%N; }
sed 's/^\[build "local"\]$/[build "local"]\n\tsandbox = none/' "$T/kfix.conf" > "$T/none.conf"
sed 's/^\[build "local"\]$/[build "local"]\n\tsandbox = bwrap/' "$T/kfix.conf" > "$T/bwrap.conf"
grep -q "sandbox = none" "$T/none.conf" || kt_fail "no [build \"local\"] section to set the sandbox in"

build() { # CONF [--patch P]: seconds, or fails
	local t0=$(now)
	"$KFIXCTL" -c "$1" build --src "$KT_SRC" --config "$KT_CONFIG" "${@:2}" >"$T/build.out" 2>&1 ||
		{ cat "$T/build.out" >&2; kt_fail "build failed"; }
	python3 -c "print(f'{$(now) - $t0:.2f}')"
}

build "$T/none.conf" >/dev/null # the base, warm
printf '%-6s %12s %12s %12s %12s\n' round "bwrap patch" "none patch" "bwrap back" "none back"
: > "$T/rows"
for i in $(seq "${ROUNDS:-5}"); do
	bp=$(build "$T/bwrap.conf" --patch "$PATCH"); bb=$(build "$T/bwrap.conf")
	np=$(build "$T/none.conf" --patch "$PATCH"); nb=$(build "$T/none.conf")
	printf '%-6s %12s %12s %12s %12s\n' "$i" "$bp" "$np" "$bb" "$nb"
	echo "$bp $np $bb $nb" >> "$T/rows"
done
python3 - "$T/rows" <<'EOP'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = lambda c: statistics.median(r[c] for r in rows)
ratios = [(r[0] + r[2]) / (r[1] + r[3]) for r in rows]
print(f"median: patch {med(0):.2f} s sandboxed, {med(1):.2f} s not; "
      f"back {med(2):.2f} s sandboxed, {med(3):.2f} s not")
print(f"sandboxed/unsandboxed, per round (patch + back): median {statistics.median(ratios):.3f}, "
      f"min {min(ratios):.3f}, max {max(ratios):.3f}")
EOP
