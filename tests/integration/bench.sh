#!/bin/bash
# kfixctl bench without kernels: datasets that are wrong in each way are
# refused before anything runs; a run over 30 bugs (no reproducer, so
# each repair ends at its pre-checks) writes every bug's result and the
# summary in its three forms, with the dataset's text escaped in each; a
# run killed with SIGKILL resumes without redoing a finished bug; two
# runs are compared; and a run stopped by SIGTERM or SIGINT stops the
# repair it runs.  The real-kernel half (a bug repaired, validated and
# held against the developers' fix) is tests/kernel/bench.sh.
. "$(dirname "$0")/lib.sh"
export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"

write_config
D=$T/set
mkdir -p "$D/src/ipc" "$D/bugs"
printf 'int msg_free(void)\n{\n\treturn 0;\n}\n' > "$D/src/ipc/msg.c"
git -C "$D/src" init -q -b master && git -C "$D/src" add -A &&
	git -C "$D/src" -c user.name=t -c user.email=t@example.org commit -q -m base || fail "git"
printf 'CONFIG_KASAN=y\n' > "$D/kernel.config"
printf '{"n":0,"provider":"openai","model":"m","request":{},"body":"{}"}\n' > "$D/cassette.jsonl"
cat > "$D/fix.patch" <<'P'
diff --git a/ipc/msg.c b/ipc/msg.c
--- a/ipc/msg.c
+++ b/ipc/msg.c
@@ -1,4 +1,4 @@
 int msg_free(void)
 {
-	return 0;
+	return 1;
 }
P
printf 'BUG: KASAN: use-after-free in msg_free+0x1a/0x80 ipc/msg.c:3\n' > "$D/report.txt"

# dataset.json with N bugs; the first one's title carries markup and a
# table bar, which every rendering must show as text
make_set() { # N [EXTRA-JSON-FOR-BUG-1]
	python3 - "$D/dataset.json" "$1" "${2:-}" <<'PY'
import json, sys
path, n, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3]
titles = ["KASAN: use-after-free Read in msg_free", "WARNING in msg_free",
          "general protection fault in msg_free"]
bugs = []
for i in range(n):
    b = {"id": "bug-%02d" % i, "title": titles[i % 3], "report": "report.txt",
         "fix_diff": "fix.patch", "cassette": "cassette.jsonl"}
    bugs.append(b)
bugs[0]["title"] = "KASAN: use-after-free Read in <script>alert(1)</script>|x"
if extra:
    bugs[0].update(json.loads(extra))
json.dump({"format": "kfix-bench-1", "name": "tiny", "defaults": {"src": "src", "config": "kernel.config"},
           "bugs": bugs}, open(path, "w"), indent=1)
PY
}

# each malformed dataset: exit 2 and a message naming what is wrong
refused() { # EXTRA-JSON MESSAGE
	make_set 3 "$1"
	local rc=0
	ctl bench --out "$T/never" "$D" > "$T/out" 2> "$T/err" || rc=$?
	[ $rc = 2 ] || fail "exit status $rc for $1: $(cat "$T/err")"
	grep -qF -- "$2" "$T/err" || fail "message for $1: $(cat "$T/err")"
	[ ! -e "$T/never" ] || fail "a refused dataset left a run folder"
}
refused '{"id": "../x"}' "id is missing or not"
refused '{"id": "bug-01"}' "the id is given twice"
refused '{"fix_commit": "abc123"}' "exactly one is needed"
refused '{"hints": ["../etc/passwd"]}' "not relative to the tree"
refused '{"colour": "red"}' "colour is not a member"
refused '{"commit": "--upload-pack=x"}' "commit is not a revision"
refused '{"title": null}' "title is missing"
make_set 3
ctl bench --out "$T/never" --only nosuch "$D" 2> "$T/err" && fail "unknown --only accepted"
grep -q "no bug nosuch" "$T/err" || fail "--only: $(cat "$T/err")"
printf '{"format": "other", "bugs": []}' > "$T/bad.json"
ctl bench "$T/bad.json" 2> "$T/err" && fail "wrong format accepted"
grep -q 'format is not "kfix-bench-1"' "$T/err" || fail "format: $(cat "$T/err")"
rc=0; ctl bench --out "$T/never" --judge nosuch "$D" 2> "$T/err" || rc=$?
[ $rc = 2 ] && grep -q "judge nosuch" "$T/err" && [ ! -e "$T/never" ] || fail "an unknown judge: rc $rc $(cat "$T/err")"
ok "malformed datasets refused before anything runs"

# a run killed with SIGKILL after two bugs are done resumes with the rest
make_set 30
"$KFIXCTL" -c "$T/kfix.conf" bench --out "$T/a" --jobs 2 "$D" > "$T/a.out" 2> "$T/a.err" &
pid=$!
wait_for 60 sh -c "[ \$(ls '$T'/a/bugs/*/result.json 2>/dev/null | wc -l) -ge 2 ]" || fail "no result: $(cat "$T/a.err")"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
sleep 0.5 # the repairs it had started end on their own
ls "$T"/a/bugs/*/result.json > "$T/done-before"
before=$(wc -l < "$T/done-before")
[ "$before" -lt 30 ] || fail "all 30 bugs finished before the kill: the test needs slower bugs"
for f in $(cat "$T/done-before"); do stat -c '%n %Y.%i' "$f" "${f%result.json}repair.log"; done > "$T/stamps-before"
sleep 1.1
ctl bench --out "$T/a" --jobs 2 "$D" > "$T/a.out" 2> "$T/a.err" || fail "resume: $(cat "$T/a.err")"
grep -q "30 bugs, $before done already" "$T/a.err" || fail "resume did not count the finished bugs: $(head -1 "$T/a.err")"
for f in $(cat "$T/done-before"); do stat -c '%n %Y.%i' "$f" "${f%result.json}repair.log"; done > "$T/stamps-after"
cmp -s "$T/stamps-before" "$T/stamps-after" || fail "a finished bug was run again: $(diff "$T/stamps-before" "$T/stamps-after")"
[ "$(ls "$T"/a/bugs/*/result.json | wc -l)" = 30 ] || fail "not every bug has a result"
grep -q '^tiny: 30 bugs, 0 reproduced, 0 plausible' "$T/a.out" || fail "run output: $(cat "$T/a.out")"
ok "a killed run resumes without redoing the $before finished bugs"

python3 - "$T/a" <<'PY' || fail "summary.json"
import json, sys, os
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
assert s["format"] == "kfix-bench-summary-1" and s["dataset"] == "tiny", s
assert s["bugs"] == 30 and s["reproduced"] == 0 and s["plausible"] == 0 and s["solved"] == 0, s
assert s["rates"]["plausible"] == 0 and s["cost_per_plausible"] is None, s
assert s["judged"] == 0 and s["judge_equivalent"] is None, s   # no --judge
t = s["by_crash_type"]
assert t["KASAN: use-after-free"]["bugs"] == 10 and t["WARNING"]["bugs"] == 10, t
assert t["general protection fault"]["bugs"] == 10, t
ids = [b["id"] for b in s["results"]]
assert ids == ["bug-%02d" % i for i in range(30)], ids   # dataset order
for i in ids:
    r = json.load(open("%s/bugs/%s/result.json" % (d, i)))
    assert r["result"] == "no-reproducer" and r["reproduced"] is False and r["validated"] is False, r
    assert r["replayed"] is True and r["wall_seconds"] >= 0 and r["turns"] == 0, r
    assert os.path.exists("%s/bugs/%s/repair/trajectory.jsonl" % (d, i)), i
PY
grep -q '<script>' "$T/a/summary.html" && fail "markup of the dataset reached the HTML page"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/a/summary.html" || fail "title not shown escaped"
grep -q '<svg class="chart"' "$T/a/summary.html" || fail "no chart"
grep -qF '| bug-29 | general protection fault in msg_free | general protection fault | no-reproducer | no |' \
	"$T/a/summary.md" || fail "markdown rows"
grep -qF '| bug-00 | KASAN: use-after-free Read in <script>alert(1)</script>\|x | KASAN' "$T/a/summary.md" ||
	fail "a bar of the title ends its markdown cell"
grep -qF '| KASAN: use-after-free | 10 | 0 | 0 | 0 | 0 |' "$T/a/summary.md" || fail "markdown crash types: $(cat "$T/a/summary.md")"
ok "results and summary: JSON, Markdown and HTML, dataset text escaped"

# a second run of some of the bugs, compared with the first
ctl bench --out "$T/b" --only bug-01 --only bug-02 "$D" > /dev/null 2> "$T/b.err" || fail "run b: $(cat "$T/b.err")"
ctl bench --out "$T/b" "$T/bad.json" 2> "$T/err" && fail "bad dataset into a run folder"
make_set 2 && sed -i 's/"tiny"/"other"/' "$D/dataset.json" && cp "$D/dataset.json" "$D/other.json"
ctl bench --out "$T/b" "$D/other.json" 2> "$T/err" && fail "another dataset resumed a run"
grep -q "holds a run of another dataset" "$T/err" || fail "other dataset: $(cat "$T/err")"
ctl bench compare "$T/a" "$T/b/summary.json" > "$T/cmp" || fail "compare"
grep -qF '| bugs | 30 | 2 | -28 |' "$T/cmp" || fail "compare figures: $(cat "$T/cmp")"
grep -qF '| bug-03 | no-reproducer | (not run) |' "$T/cmp" || fail "compare bugs: $(cat "$T/cmp")"
grep -qF '| bug-01 |' "$T/cmp" && fail "a bug with the same outcome in both runs listed"
ctl --json bench compare "$T/a" "$T/b" | python3 -c '
import json, sys
c = json.load(sys.stdin)
assert len(c["bugs"]) == 28 and all(b["b"] is None for b in c["bugs"]), c["bugs"][:2]
f = {x["name"]: x for x in c["figures"]}
assert f["bugs"]["a"] == 30 and f["bugs"]["b"] == 2 and f["bugs"]["change"] == -28, f
' || fail "compare --json"
ctl bench compare "$T/a" "$T/nothing" 2> "$T/err" && fail "compare with nothing"
grep -q "must be benchmark runs" "$T/err" || fail "compare error: $(cat "$T/err")"
ok "compare: figures side by side, the bugs whose outcome differs"

# Stopped by a signal while a repair runs: the repair goes with it, no
# result is written for its bug, the exit status says so, and the same
# command runs it again.  The repair waits on a build host that accepts
# the connection and never speaks SSH.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    conns.append(s.accept()[0])
' > "$T/silent.port" &
silent=$!
PIDS="$PIDS $silent"
wait_for 10 test -s "$T/silent.port" || fail "no silent host"
sport=$(cat "$T/silent.port")
printf 'int main(void) { return 0; }\n' > "$D/repro.c"
write_config "[build \"far\"]" "	host = ssh://nobody@127.0.0.1:$sport" "	dir = $T/builds" \
	"[vm \"far\"]" "	ssh-host = 127.0.0.1" "	ssh-port = $sport" "	ssh-user = nobody" \
	"	image = $T/none.cpio.gz" "	workdir = $T/vmwork" \
	"[llm \"m\"]" "	provider = openai" "	url = http://127.0.0.1:9/v1" "	model = m"
make_set 2 '{"repro_c": "repro.c"}'
for sig in TERM INT; do
	rm -rf "$T/s"
	# a shell's background job ignores SIGINT: as a terminal's Ctrl-C
	# would, the signal is delivered to a kfixctl that takes it
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
		"$KFIXCTL" -c "$T/kfix.conf" bench --out "$T/s" "$D" > "$T/s.out" 2> "$T/s.err" &
	pid=$!
	PIDS="$PIDS $pid"
	wait_for 30 pgrep -f "$T/s/bugs/bug-00/repair" > /dev/null || fail "$sig: the repair did not start: $(cat "$T/s.err")"
	sleep 1
	kill -$sig "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ $rc = 130 ] || fail "$sig: exit status $rc: $(cat "$T/s.err")"
	grep -q 'stopped by a signal: 0 of 2 bugs have a result' "$T/s.err" || fail "$sig: message: $(cat "$T/s.err")"
	sleep 0.5
	pgrep -af "$T/s/" && fail "$sig: the repair outlived the bench"
	[ ! -e "$T/s/bugs/bug-00/result.json" ] && [ ! -e "$T/s/bugs/bug-01" ] || fail "$sig: a result for a stopped bug"
done
ok "a signal stops the running repair with the bench, and leaves its bug to run again"
echo PASS
