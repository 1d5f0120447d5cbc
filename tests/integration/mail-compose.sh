#!/bin/sh
# Patch mail: recipients from the kernel's own get_maintainer.pl, git am
# applies it, the kernel's checkpatch.pl passes it, and hostile titles or
# addresses cannot add header lines.  The kernel scripts come from Debian's
# linux-source-6.1 tarball at test time (never copied into this tree).
. "$top_srcdir/tests/integration/mail-lib.sh"

command -v git >/dev/null || skip "git is not installed"
command -v perl >/dev/null || skip "perl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
extract_kernel_scripts "$T/k"

# a small tree with one commit, and the fix as a diff against it
R="$T/repo"
git init -q "$R"
git -C "$R" config user.name "Test Author"
git -C "$R" config user.email "author@example.org"
mkdir -p "$R/net/ipv4"
printf 'void f(struct sock *sk)\n{\n\tstruct tcp_sock *tp = tcp_sk(sk);\n\n\tfoo(tp);\n}\n' >"$R/net/ipv4/tcp_timer.c"
git -C "$R" add . && git -C "$R" commit -qm "tcp: add f()"
BASE=$(git -C "$R" rev-parse HEAD)
sed -i 's/^\tfoo(tp);/\tif (!tp->packets_out)\n\t\treturn;\n\tfoo(tp);/' "$R/net/ipv4/tcp_timer.c"
cp "$R/net/ipv4/tcp_timer.c" "$T/want.c"
git -C "$R" diff >"$T/fix.diff"
git -C "$R" checkout -q .

# recipients: the tree's get_maintainer.pl on the diff
"$MAILTOOL" maintainers "$T/k" "$T/fix.diff" >"$T/maint" || fail "get_maintainer"
grep -qx 'netdev@vger.kernel.org' "$T/maint" || fail "no netdev list: $(cat "$T/maint")"
grep -q '<edumazet@google.com>$' "$T/maint" || fail "no TCP maintainer: $(cat "$T/maint")"

spec() { # spec SUMMARY AUTHOR TO
	python3 - "$T/fix.diff" "$BASE" "$1" "$2" "$3" "$T/maint" <<'EOPY'
import json, sys
diff, base, summary, author, to, maint = sys.argv[1:7]
s = {
    "from": "kfix <kfix@kfix.example.org>", "author": author or None,
    "message_id": "kfix.1.2.abcdef@kfix.example.org",
    "in_reply_to": "000000000000a1b2c3d4e5f60718@google.com",
    "to": [to] + open(maint).read().split("\n")[:-1],
    "cc": ["syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com"],
    "date": 1796800000, "version": 2, "rfc": False, "summary": summary,
    "body": "The retransmit timer can run after the last packet was freed,\n"
            "so check packets_out before using the queue.",
    "trailers": [["Signed-off-by", "Moderator Person <mod@example.org>"],
                 ["Reported-by", "syzbot+4f3a9c0de81b27a6e5d4@syzkaller.appspotmail.com"],
                 ["Fixes", base[:12] + ' ("tcp: add f()")'],
                 ["Closes", "https://syzkaller.appspot.com/bug?extid=4f3a9c0de81b27a6e5d4"],
                 ["Assisted-by", "kfix:test-model"]],
    "explanation": "packets_out is 0 when the timer fires late.\n--- a/not-a-diff\ndiff --git a/x b/x",
    "evidence": "a probe at tcp_timer.c:5 printed packets_out=0 before the crash, every time the retransmit timer fired after the socket's last packet was freed and the queue was empty\n[   12.345678] kfix-probe tcp_retransmit_timer: packets_out=0 sk=ffff888012345678 state=1 since=123456\n- a list item long enough to wrap: the timer runs after tcp_write_queue_purge() and reads the head",
    "patch_type": "root-cause fix",
    "repro": [["base " + base[:12], "crashed in 3 of 3 runs"], ["patched", "no crash in 3 of 3 runs"]],
    "tested": "- reproducer: 3 of 3 runs without a crash\n- kmemleak: no leak after 3 of 3 runs",
    "not_tested": "Only the syzbot reproducer ran; no selftests.",
    "diff": open(diff).read(), "base_commit": base,
}
print(json.dumps(s))
EOPY
}

# 1. an upstream-form mail (the moderator signs off and is the author)
spec "tcp: check packets_out in the retransmit timer" "Moderator Person <mod@example.org>" \
	"Jörg Maintainer <joerg@example.org>" >"$T/spec.json"
"$MAILTOOL" compose "$T/spec.json" >"$T/p.eml" || fail "compose"
grep -q '^Subject: \[PATCH v2\] tcp: check packets_out' "$T/p.eml" || fail "subject"
grep -q '^In-Reply-To: <000000000000a1b2c3d4e5f60718@google.com>$' "$T/p.eml" || fail "threading"
grep -q '^References: <000000000000a1b2c3d4e5f60718@google.com>$' "$T/p.eml" || fail "references"
grep -q "^base-commit: $BASE\$" "$T/p.eml" || fail "base-commit"
grep -q '^ net/ipv4/tcp_timer.c | 2 ++$' "$T/p.eml" || fail "diffstat"
grep -q '^ 1 file changed, 2 insertions(+)$' "$T/p.eml" || fail "diffstat summary"
grep -q '^To: =?UTF-8?B?' "$T/p.eml" || fail "non-ASCII name not encoded"
# b4's trailer order
sed -n '/^Fixes:/,/^Signed-off-by:/p' "$T/p.eml" | cut -d: -f1 | tr '\n' ' ' >"$T/order"
[ "$(cat "$T/order")" = "Fixes Reported-by Closes Assisted-by Signed-off-by " ] || fail "trailer order: $(cat "$T/order")"
# what ran is said before what did not, below the "---"
sed -n '/^---$/,/^diff --git/p' "$T/p.eml" | grep -n '^Tested:$\|^ *- kmemleak: no leak\|^Not tested:$' \
	| cut -d: -f2- | sed 's/^ *//' | tr '\n' '|' >"$T/tested"
[ "$(cat "$T/tested")" = "Tested:|- kmemleak: no leak after 3 of 3 runs|Not tested:|" ] \
	|| fail "Tested section: $(cat "$T/tested")"
# prose below the cut is wrapped at 75 columns, a console line is not
notes=$(sed -n '/^---$/,/^diff --git/p' "$T/p.eml")
echo "$notes" | grep -q "^\[   12.345678\] kfix-probe tcp_retransmit_timer: packets_out=0 sk=ffff888012345678 state=1 since=123456$" ||
	fail "the console line was wrapped: $notes"
echo "$notes" | grep -v '^\[ ' | grep -v '^ [a-z/_.-]* |' | awk 'length > 75 { print; bad = 1 } END { exit bad }' ||
	fail "a prose line over 75 columns below the cut"
echo "$notes" | grep -q "^a probe at tcp_timer.c:5 printed packets_out=0 before the crash, every" ||
	fail "the evidence's first line: $notes"
echo "$notes" | grep -q "^  reads the head$\|^  tcp_write_queue_purge() and reads the head$\|^  and reads the head$" ||
	fail "a list item's continuation is not indented: $notes"
# the patch type, after the root cause
sed -n '/^---$/,/^Evidence:$/p' "$T/p.eml" | grep -A1 '^Patch type:$' | grep -q '^ *root-cause fix$' ||
	fail "patch type: $(sed -n '/^---$/,/^Evidence:$/p' "$T/p.eml")"
# the text from the model cannot start a diff in the notes
grep -q '^--- a/not-a-diff' "$T/p.eml" && fail "notes line read as a diff"
(cd "$R" && perl "$T/k/scripts/checkpatch.pl" --no-tree "$T/p.eml") >"$T/cp" 2>&1 || fail "checkpatch: $(cat "$T/cp")"
grep -q 'total: 0 errors, 0 warnings' "$T/cp" || fail "checkpatch: $(cat "$T/cp")"
git -C "$R" am -q "$T/p.eml" || fail "git am"
cmp "$R/net/ipv4/tcp_timer.c" "$T/want.c" || fail "git am result differs"
[ "$(git -C "$R" log -1 --format=%an)" = "Moderator Person" ] || fail "author"
[ "$(git -C "$R" log -1 --format=%s)" = "tcp: check packets_out in the retransmit timer" ] || fail "commit subject"
git -C "$R" log -1 --format=%B | grep -q '^Fixes: ' || fail "trailers lost"
git -C "$R" log -1 --format=%B | grep -q 'Root cause' && fail "notes leaked into the commit"
git -C "$R" reset -q --hard "$BASE"

# 2. a hostile title: CR/LF and a header inside; non-ASCII in the summary
spec "$(printf 'tcp: fix \303\251t\303\251 timer\r\nBcc: victim@example.org\nX-Evil: 1')" "Moderator Person <mod@example.org>" \
	"maint@example.org" >"$T/spec2.json"
"$MAILTOOL" compose "$T/spec2.json" >"$T/h.eml" || fail "compose hostile"
sed '/^$/q' "$T/h.eml" >"$T/h.head"
grep -qi '^bcc:' "$T/h.head" && fail "header injected: $(cat "$T/h.head")"
grep -qi '^x-evil:' "$T/h.head" && fail "header injected: $(cat "$T/h.head")"
grep -q "$(printf '\r')" "$T/h.head" && fail "CR in headers"
awk 'length > 998 { exit 1 }' "$T/h.head" || fail "header line too long"
"$top_builddir/kfixctl" mail parse --json "$T/h.eml" >"$T/h.json" || fail "parse back"
grep -q '"subject": "\[PATCH v2\] tcp: fix été timer Bcc: victim@example.org X-Evil: 1"' "$T/h.json" \
	|| fail "subject did not survive: $(grep subject "$T/h.json")"
git -C "$R" am -q "$T/h.eml" || fail "git am hostile"
[ "$(git -C "$R" log -1 --format=%s)" = "tcp: fix été timer Bcc: victim@example.org X-Evil: 1" ] \
	|| fail "hostile subject in git: $(git -C "$R" log -1 --format=%s)"

# 3. an address with a line break is refused, not written
spec "tcp: x" "" "$(printf 'a@example.org\r\nBcc: victim@example.org')" >"$T/spec3.json"
if "$MAILTOOL" compose "$T/spec3.json" >"$T/x.eml" 2>"$T/x.err"; then
	fail "an address with CR/LF was accepted"
fi
grep -q 'invalid recipient' "$T/x.err" || fail "error text: $(cat "$T/x.err")"
# 4. the diffstat is git format-patch's, on changes of every shape: long
# and short names, counts that need scaling or not, files created and
# deleted, one-sided changes
python3 - "$T/stat" "$MAILTOOL" <<'EOPY' || fail "diffstat differs from git format-patch"
import json, os, random, subprocess, sys
top, mailtool = sys.argv[1], sys.argv[2]
rng = random.Random(7)
repo = os.path.join(top, "r")
os.makedirs(repo)
git = lambda *a: subprocess.run(["git", "-C", repo, "-c", "user.name=T", "-c", "user.email=t@e.org"] + list(a),
                                check=True, capture_output=True, text=True).stdout
git("init", "-q")
dirs = ["a", "drivers/net/ethernet/some/very/long/path/name", "fs/x", "kernel/time"]
def stat_block(text):
    lines = text.split("\n")
    i = lines.index("---")
    out = []
    for l in lines[i + 1:]:
        if not l.strip():
            break
        out.append(l)
    return out
bad = 0
for case in range(14):
    files = {}
    for j in range(rng.randint(1, 4)):
        d = rng.choice(dirs)
        name = "%s/%s%s.c" % (d, "f" * rng.randint(1, 40), j)
        files[name] = [str(rng.random()) for _ in range(rng.choice([1, 5, 30, 200]))]
    for n, lines in files.items():
        os.makedirs(os.path.join(repo, os.path.dirname(n)), exist_ok=True)
        open(os.path.join(repo, n), "w").write("\n".join(lines) + "\n")
    git("add", "-A"); git("commit", "-qm", "base %d" % case)
    for n, lines in files.items():
        kind = rng.choice(["grow", "shrink", "both", "delete", "few"])
        path = os.path.join(repo, n)
        if kind == "delete":
            os.unlink(path)
            continue
        new = list(lines)
        if kind in ("grow", "both"):
            new += [str(rng.random()) for _ in range(rng.choice([1, 3, 80, 400]))]
        if kind in ("shrink", "both"):
            new = new[: max(0, len(new) - rng.choice([1, 4, 150]))]
        if kind == "few":
            new[0] = "changed"
        open(path, "w").write("\n".join(new) + "\n")
    created = "created/new%d.c" % case
    if case % 3 == 0:
        os.makedirs(os.path.join(repo, "created"), exist_ok=True)
        open(os.path.join(repo, created), "w").write("x\n" * rng.randint(1, 90))
    git("add", "-A"); git("commit", "-qm", "change %d" % case)
    want = stat_block(git("format-patch", "--stdout", "-1"))
    diff = git("show", "--format=", "HEAD")
    spec = os.path.join(top, "spec.json")
    json.dump({"from": "kfix <kfix@kfix.example.org>", "message_id": "m%d@e.org" % case,
               "to": ["a@example.org"], "summary": "x: case %d" % case, "body": "Body.",
               "diff": diff}, open(spec, "w"))
    got = stat_block(subprocess.run([mailtool, "compose", spec], check=True, capture_output=True,
                                    text=True).stdout)
    if got != want:
        bad += 1
        print("case %d:\n git:\n%s\n kfix:\n%s" % (case, "\n".join(want), "\n".join(got)), file=sys.stderr)
sys.exit(1 if bad else 0)
EOPY
echo PASS
