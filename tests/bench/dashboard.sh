#!/bin/sh
# The dashboard under load, with wrk on loopback: requests/s of the bug
# list (500 bugs, 50 a page) and of a job page with a 1,000-event
# trajectory, beside the REST API's bug list in the same run (the ratio is
# what to compare across machines); kfixd's RSS idle, after the load and
# at its peak.  Run with `make bench`; DURATION (seconds per run), 5.
set -eu
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/integration/hooks-lib.sh"
command -v wrk >/dev/null || { echo "wrk not installed (Debian package wrk)"; exit 77; }
hooks_need curl sqlite3 python3
DURATION=${DURATION:-5}

hooks_setup
HOOKS_LOG_LEVEL=info
hooks_write_config ""
hooks_start_kfixd
rss() { awk '/^VmRSS/ {print $2 " kB"}' "/proc/$KFIXD_PID/status"; }
echo "idle RSS: $(rss)"

# 500 bugs with their events, one job with a 1,000-event trajectory
python3 - "$HOOKS_TMP/state" <<'PY'
import json, os, sqlite3, sys, time
state = sys.argv[1]
c = sqlite3.connect(os.path.join(state, "kfix.db"), timeout=30)
now = int(time.time())
for i in range(500):
    cur = c.execute("INSERT INTO bugs (source, source_id, title, state, tree, created, updated)"
                    " VALUES ('manual', ?, ?, 'new', 'linux', ?, ?)",
                    ("b%d" % i, "KASAN: use-after-free Read in f%d <x>" % i, now - i, now - i))
    c.execute("INSERT INTO events (ts, bug_id, job_id, kind, detail) VALUES (?, ?, 0, 'bug.new', 'x')",
              ((now - i) * 1000000, cur.lastrowid))
cur = c.execute("INSERT INTO jobs (bug_id, kind, state, max_attempts, created) VALUES (1, 'repair', 'done', 1, ?)", (now,))
job = cur.lastrowid
c.commit()
d = os.path.join(state, "jobs", str(job))
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "trajectory.jsonl"), "w") as f:
    t = now * 1000000
    for i in range(1000):
        kind = ("llm.call", "tool.read_file", "tool.build", "gate")[i % 4]
        ev = {"id": i + 1, "step": "patch", "kind": kind, "start_us": t + i * 1000,
              "duration_ms": 12, "input": {"path": "mm/slub.c", "text": "x" * 600},
              "output": {"answer": "<b>y</b>" * 60}}
        if kind == "llm.call":
            ev["tokens"] = {"in": 3000, "out": 200}
            ev["cost"] = 0.01
        f.write(json.dumps(ev) + "\n")
print(job)
PY
job=$(sqlite3 "$HOOKS_TMP/state/kfix.db" "SELECT max(id) FROM jobs")
cookie=$(curl -s -D - -o /dev/null --data-urlencode "token=$HOOKS_READ_TOKEN" "$KFIX_URL/ui/login" |
	tr -d '\r' | sed -n 's/^Set-Cookie: \([^;]*\);.*/\1/p')
[ -n "$cookie" ] || { echo "login failed"; exit 1; }
size() { curl -s -o /dev/null -w '%{size_download}' -H "Cookie: $cookie" "$KFIX_URL$1"; }
echo "page sizes: /ui/bugs $(size /ui/bugs) B, /ui/jobs/$job $(size "/ui/jobs/$job") B"

run() { # PATH HEADER
	wrk -t2 -c8 -d"${DURATION}s" --latency -H "$2" "$KFIX_URL$1" >"$HOOKS_TMP/wrk.out"
	rps=$(awk '/^Requests\/sec/ {print $2}' "$HOOKS_TMP/wrk.out")
	p50=$(awk '$1 == "50%" {print $2}' "$HOOKS_TMP/wrk.out")
	p99=$(awk '$1 == "99%" {print $2}' "$HOOKS_TMP/wrk.out")
	bad=$(awk '/Non-2xx/ {print $NF}' "$HOOKS_TMP/wrk.out")
	echo "GET $1 c=8: $rps req/s, p50 $p50, p99 $p99, non-2xx ${bad:-0}"
	eval "rps_$3=$rps"
}
run /api/v1/bugs "Authorization: Bearer $HOOKS_READ_TOKEN" api
run /ui/bugs "Cookie: $cookie" list
run "/ui/jobs/$job" "Cookie: $cookie" job
echo "RSS after the load: $(rss), peak $(awk '/^VmHWM/ {print $2 " kB"}' "/proc/$KFIXD_PID/status")"
python3 -c "import sys; a, l, j = map(float, sys.argv[1:]); print('ratios to the API bug list: list %.2f, job page %.3f' % (l / a, j / a))" \
	"$rps_api" "$rps_list" "$rps_job"
