#!/bin/sh
# Webhooks: authenticated deliveries are stored once; wrong or missing
# signatures, stale timestamps, oversized bodies, malformed JSON, invalid
# UTF-8 and broken mail are refused with the right status and store
# nothing; slow clients do not stall the daemon.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl openssl sqlite3 python3
hooks_setup
HOOKS_MAX_BODY=64K HOOKS_TIMEOUT=2s
hooks_write_config '[hook "gh"]
	type = forge
	provider = github
	secret = gh-secret
	allow-users = alice
[hook "gl"]
	type = forge
	provider = gitlab
	secret = gl-secret
[hook "relay"]
	type = syzbot
	secret = relay-secret
[hook "mta"]
	type = mail
	secret = mail-secret
[mail]
	# unsigned syzbot mails here: DKIM is tested in mail-auth.sh
	syzbot-auth = none
[tree "linux"]
	url = https://git.kernel.org/linux.git
	allow-commands = dev@example.org
	# unsigned command mails here: DKIM is tested in mail-auth.sh
	command-auth = none'
hooks_start_kfixd
T=$HOOKS_TMP
inbox() { sql "select count(*) from inbox"; }

# a bug for the forge commands to act on
"$KFIXCTL" -c "$KFIX_CONF" submit --title "KASAN: test bug" --id manual-1 --tree linux >/dev/null

printf '%s' '{"ref":"refs/heads/kfix/1/v1","after":"0123abcd","repository":{"full_name":"kfix/linux"},"sender":{"login":"alice"}}' >"$T/push.json"
expect_eq "github push" "$(post_github "$T/push.json" gh-secret push d-1)" 200
expect_eq "stored" "$(inbox)" 1
expect_eq "replayed delivery" "$(post_github "$T/push.json" gh-secret push d-1)" 200
expect_eq "answer says duplicate" "$(jq_get duplicate <"$T/resp")" true
expect_eq "replay stored once" "$(inbox)" 1
# the delivery id is not signed: a captured delivery re-sent with a new
# one is still the same delivery
expect_eq "replay with a new delivery id" "$(post_github "$T/push.json" gh-secret push d-1-again)" 200
expect_eq "answer says duplicate again" "$(jq_get duplicate <"$T/resp")" true
expect_eq "still stored once" "$(inbox)" 1
expect_eq "push event recorded" "$(sql "select count(*) from events where kind = 'forge.push' and bug_id = 1")" 1

expect_eq "wrong signature" "$(post_github "$T/push.json" not-the-secret push d-2)" 401
expect_eq "missing signature" "$(post /hooks/forge "$T/push.json" -H 'X-GitHub-Event: push' -H 'X-GitHub-Delivery: d-3')" 401
expect_eq "gitlab wrong token" "$(post /hooks/forge "$T/push.json" -H 'X-Gitlab-Event: Push Hook' -H 'X-Gitlab-Token: nope')" 401
expect_eq "nothing stored" "$(inbox)" 1

printf '%s' '{"object_attributes":{"note":"#kfix upstream"},"user":{"username":"gina"},"project":{"path_with_namespace":"kfix/linux"},"merge_request":{"source_branch":"kfix/1/v1"}}' >"$T/note.json"
expect_eq "gitlab note" "$(post /hooks/forge "$T/note.json" -H 'X-Gitlab-Event: Note Hook' -H 'X-Gitlab-Token: gl-secret' -H 'X-Gitlab-Event-UUID: gl-1')" 200
expect_eq "command from a user not allowed is ignored" \
	"$(sql "select state from inbox where key like 'forge:gl:body:%'")" ignored

printf '%s' '{"comment":{"body":"Tested, fine.\n#kfix retest","user":{"login":"alice"}},"pull_request":{"head":{"ref":"kfix/1/v1"}},"repository":{"full_name":"kfix/linux"}}' >"$T/comment.json"
expect_eq "review comment" "$(post_github "$T/comment.json" gh-secret pull_request_review_comment c-1)" 200
expect_eq "retest requested" "$(sql "select count(*) from events where kind = 'request.retest' and bug_id = 1")" 1
expect_eq "no upstream request" "$(sql "select count(*) from events where kind = 'request.upstream'")" 0

# malformed JSON and invalid UTF-8, correctly signed
n=$(inbox)
printf '%s' '{"ref": "refs/heads/x", "after": ' >"$T/trunc.json"
expect_eq "malformed JSON" "$(post_github "$T/trunc.json" gh-secret push m-1)" 400
printf '{"ref":"refs/heads/\377\376","after":"1","repository":{"full_name":"a/b"}}' >"$T/utf8.json"
expect_eq "invalid UTF-8" "$(post_github "$T/utf8.json" gh-secret push m-2)" 400
expect_eq "wrong JSON types" "$(printf '%s' '{"ref":5}' >"$T/types.json"; post_github "$T/types.json" gh-secret push m-3)" 400
expect_eq "nothing stored for bad bodies" "$(inbox)" "$n"

# oversized: declared length, and chunked without a length
python3 -c 'print("{\"pad\": \"" + "x" * 100000 + "\"}")' >"$T/big.json"
expect_eq "oversized body" "$(post_github "$T/big.json" gh-secret push big-1)" 413
code=$(post /hooks/forge "$T/big.json" -H 'Transfer-Encoding: chunked' -H 'X-GitHub-Event: push')
case $code in 000|413) ;; *) fail "chunked oversized body answered $code" ;; esac
expect_eq "nothing stored for big bodies" "$(inbox)" "$n"

# syzbot relay with kfix's scheme: fresh, stale, replayed
cat >"$T/bug.json" <<'EOB'
{"version": 1, "title": "WARNING in relay_test", "id": "f00d", "extid": "0123456789abcdef0123",
 "crashes": [{"title": "WARNING in relay_test", "c-reproducer": "/text?tag=ReproC&amp;x=77",
  "kernel-source-git": "https://git.kernel.org/linux.git", "kernel-source-commit": "cafe"}]}
EOB
expect_eq "syzbot push" "$(post_kfix /hooks/syzbot "$T/bug.json" relay-secret s-1)" 200
expect_eq "bug created" "$(sql "select repro_c from bugs where source = 'syzbot' and source_id = '0123456789abcdef0123'")" \
	"https://syzkaller.appspot.com/text?tag=ReproC&x=77"
expect_eq "stale timestamp" "$(post_kfix /hooks/syzbot "$T/bug.json" relay-secret s-2 $(( $(date +%s) - 3600 )))" 401
expect_eq "stale answer" "$(jq_get error <"$T/resp")" "timestamp outside the replay window"
expect_eq "relay replay" "$(post_kfix /hooks/syzbot "$T/bug.json" relay-secret s-1)" 200
expect_eq "one syzbot bug" "$(sql "select count(*) from bugs where source = 'syzbot'")" 1
printf '%s' '{"version": 2, "title": "x", "extid": "aa"}' >"$T/v2.json"
expect_eq "bug JSON version 2" "$(post_kfix /hooks/syzbot "$T/v2.json" relay-secret s-3)" 400

# mail: parsed by the mail module, deduplicated by Message-ID
expect_eq "syzbot report mail" "$(post_kfix /hooks/mail "$top_srcdir/tests/fixtures/mail/syzbot-report.eml" mail-secret mail-r)" 200
expect_eq "bug from the report" "$(sql "select count(*) from bugs where source = 'syzbot' and source_id = '4f3a9c0de81b27a6e5d4'")" 1
printf 'From: Dev <dev@example.org>\r\nTo: kfix@example.org\r\nSubject: Re: [PATCH RFC kfix/1/v1] fix\r\nMessage-ID: <m1@example.org>\r\n\r\nLooks right.\r\n#kfix retest\r\n' >"$T/mail1"
expect_eq "command mail" "$(post_kfix /hooks/mail "$T/mail1" mail-secret mail-a)" 200
expect_eq "mail command recorded" "$(sql "select count(*) from events where bug_id = 1 and kind = 'request.retest' and detail like '%mail%'")" 1
expect_eq "same Message-ID, other delivery" "$(post_kfix /hooks/mail "$T/mail1" mail-secret mail-b)" 200
expect_eq "mail stored once" "$(sql "select count(*) from inbox where key = 'mail:m1@example.org'")" 1
sed 's/dev@example.org/stranger@example.net/; s/<m1@/<m2@/' "$T/mail1" >"$T/mail2"
expect_eq "command from a stranger" "$(post_kfix /hooks/mail "$T/mail2" mail-secret mail-s)" 200
expect_eq "stranger ignored" "$(sql "select detail from inbox where key = 'mail:m2@example.org'")" "the sender may not send commands"
expect_eq "one retest only" "$(sql "select count(*) from events where kind = 'request.retest' and detail like '%mail%'")" 1
printf 'this is not a mail\n\n' >"$T/notmail"
expect_eq "not a mail" "$(post_kfix /hooks/mail "$T/notmail" mail-secret mail-c)" 400

expect_eq "unknown hook type" "$(post /hooks/nothing "$T/push.json")" 404
expect_eq "GET on a hook" "$(curl -s -o /dev/null -w '%{http_code}' "$KFIX_URL/hooks/forge")" 405

# slow clients: 20 connections dribbling headers, one that stalls
python3 - "$HOOKS_PORT" "$KFIX_URL" <<'EOP' || fail "slow clients"
import socket, sys, threading, time, urllib.request
port, url = int(sys.argv[1]), sys.argv[2]
slow = []
for i in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /hooks/forge HTTP/1.1\r\nHost: x\r\n")
    slow.append(s)
stall = socket.create_connection(("127.0.0.1", port))
stall.sendall(b"GET /healthz HTTP/1.1\r\nHo")
t0 = time.time()
dropped = {}
def watch():  # when kfixd drops the stalled client, whatever the rounds cost
    stall.settimeout(30)
    try:
        dropped["data"] = stall.recv(100)
    except socket.timeout:
        dropped["data"] = None
    dropped["at"] = time.time()
watcher = threading.Thread(target=watch)
watcher.start()
for round in range(8):
    for s in slow:
        s.sendall(b"X")          # keeps the connection busy but incomplete
    a = time.time()
    with urllib.request.urlopen(url + "/healthz", timeout=3) as r:
        assert r.status == 200
    # a stall behind the slow clients would last their 2 s idle timeout
    assert time.time() - a < 1.8, "healthz stalled behind slow clients"
    time.sleep(0.3)
# the stalled client is dropped after the idle timeout (2 s)
watcher.join(35)
data = dropped.get("data")
assert data is not None, "stalled client never dropped"
assert data == b"" or b"408" in data or b"400" in data, data
assert dropped["at"] - t0 < 6, "stalled client kept too long"
EOP
kill -0 "$KFIXD_PID" || fail "kfixd died"

m=$(curl -s "$KFIX_URL/metrics")
echo "$m" | grep -q '^kfix_webhook_auth_failures_total{type="forge",reason="bad"} [1-9]' || fail "auth failures not counted"
echo "$m" | grep -q '^kfix_webhook_deliveries_total{type="forge",result="duplicate"} 2' || fail "duplicates not counted"
hooks_stop_kfixd
echo "ok"
