# The world of kfixd's whole publishing flow on loopback, shared by the
# end-to-end test (tests/kernel/e2e.sh) and the demo (scripts/demo.sh):
# the msg-uaf kernel as a git checkout with a bare remote reached over
# SSH, a fake syzbot dashboard announcing the bug (tests/fake-syzbot.py),
# an SMTP server (aiosmtpd), a public-inbox v2 archive of the mailing list,
# and the kfixd config tying them together.  Sourced after lib.sh, once
# kt_setup (or its parts) has run.

FLOW_EXTID=e2e0000000000000e2e1
FLOW_TITLE="KASAN: use-after-free Read in msgctl"

# Skips (kt_skip) when a tool of the flow is missing; sets PY, the python
# that has aiosmtpd.
flow_require() {
	local p t
	command -v git >/dev/null || kt_skip "git is not installed"
	PY=
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import aiosmtpd' 2>/dev/null && { PY=$p; break; }
	done
	[ -n "$PY" ] || kt_skip "python3-aiosmtpd is not installed"
	for t in public-inbox-init public-inbox-mda; do
		command -v "$t" >/dev/null || kt_skip "$t is not installed (Debian package public-inbox)"
	done
}

# The kernel source as a git checkout (branches of earlier runs go), its
# bare remote, the dashboard, the SMTP server and the archive.  Sets G,
# BASE and HTTP_PORT (for kfixd's webhooks).
flow_setup() {
	local ref i
	kt_git_source
	G=$KT_GIT
	BASE=$KT_BASE
	git --git-dir="$G" for-each-ref --format='%(refname)' refs/heads/kfix refs/notes/kfix |
		while read -r ref; do git --git-dir="$G" update-ref -d "$ref"; done
	git clone -q --bare --shared "$G" "$T/remote.git" || kt_fail "remote"
	flow_start_dashboard
	mkdir -p "$T/smtp"
	"$PY" "$top_srcdir/tests/integration/smtp-server.py" "$T/smtp" > "$T/smtp.log" 2>&1 &
	KT_PIDS+=($!)
	for i in $(seq 100); do [ -s "$T/dash.port" ] && [ -s "$T/smtp/port" ] && break; sleep 0.1; done
	[ -s "$T/dash.port" ] && [ -s "$T/smtp/port" ] || kt_fail "dashboard or SMTP server did not start"
	HTTP_PORT=$(kt_free_port)
	FLOW_READ_TOKEN=read-$$-$RANDOM FLOW_ADMIN_TOKEN=admin-$$-$RANDOM
	export PI_CONFIG="$T/pi-config"
	HOME="$T/home" public-inbox-init -V2 lists "$T/inbox" http://127.0.0.1/lists lists@example.org \
		>"$T/pi-init.log" 2>&1 || kt_fail "public-inbox-init: $(cat "$T/pi-init.log")"
	git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
}

# The bug links no config: the tree's is used, whose build folder the
# kernel cache holds.
flow_start_dashboard() {
	local S=$kt_here/scenarios/msg-uaf D=$T/dash
	mkdir -p "$D"
	cp "$S/repro.c" "$D/text-ReproC-e2e1"
	cp "$S/report.txt" "$D/text-CrashReport-e2e3"
	cat > "$D/list-1.json" <<J
{"version": 1, "Bugs": [{"title": "$FLOW_TITLE",
 "link": "/bug?extid=$FLOW_EXTID", "last-updated": "2026-12-01T10:00:00Z"}]}
J
	cat > "$D/bug-$FLOW_EXTID.json" <<J
{"version": 1, "title": "$FLOW_TITLE", "id": "e2e",
 "status": "open", "first-crash": "2026-11-30T10:00:00Z", "last-crash": "2026-12-01T10:00:00Z",
 "fix-commits": [], "discussions": [],
 "crashes": [{"title": "$FLOW_TITLE",
   "syz-reproducer": "", "c-reproducer": "/text?tag=ReproC&amp;x=e2e1", "repro-opts": "{}",
   "kernel-config": "",
   "kernel-source-git": "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git",
   "kernel-source-commit": "$BASE", "syzkaller-git": "", "syzkaller-commit": "",
   "crash-report-link": "/text?tag=CrashReport&amp;x=e2e3"}]}
J
	python3 "$top_srcdir/tests/fake-syzbot.py" "$D" "$T/dash.port" &
	KT_PIDS+=($!)
}

# Appends the flow's settings to $T/kfix.conf.  LLM_SECTIONS: the [llm]
# sections, "llm" and "iterate-llm" naming them; RECORD: yes|no.
flow_write_config() { # LLM_SECTIONS LLM ITERATE_LLM RECORD
	cat >> "$T/kfix.conf" <<CFG
[kfix]
	log-level = debug
	job-attempts = 10
	retry-delay = 1s
	lease = 30s
	job-timeout = 2h
[http]
	listen = 127.0.0.1:$HTTP_PORT
	api-token = $FLOW_READ_TOKEN
	admin-token = $FLOW_ADMIN_TOKEN
[hook "mta"]
	type = mail
	secret = mail-secret
[feed "syzbot"]
	url = http://127.0.0.1:$(cat "$T/dash.port")/
	namespace = upstream
	tree = linux
	interval = 3s
	request-interval = 100ms
[mail]
	# unsigned syzbot mails here: DKIM is tested in mail-auth.sh
	syzbot-auth = none
	transport = smtp
	smtp-url = smtp://127.0.0.1:$(cat "$T/smtp/port")
	from = kfix bot <kfix@kfix.example.org>
[tree "linux"]
	path = $KT_SRC
	config = $KT_CONFIG
	moderation-address = moderation@example.org
	allow-commands = mod@example.org
	# unsigned command mails here: DKIM is tested in mail-auth.sh
	command-auth = none
	push-remote = ssh://$(id -un)@127.0.0.1:$SSHD_PORT$T/remote.git
	push-ssh-key = $T/id
	push-known-hosts = $T/known_hosts
$1
[archive "lists"]
	url = $T/inbox
	poll-interval = 1s
[agent]
	llm = $2
	iterate-llm = $3
	prompts-dir = $top_srcdir/agent/prompts
	base-runs = 1
	validate-runs = 2
	locations = 2
	minimise = false
	record = $4
CFG
}

db() { python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall(); print("\n".join("|".join(map(str,x)) for x in r))' "$T/state/kfix.db" "$1" 2>/dev/null; }
mails() { ls "$T"/smtp/msg-*.eml 2>/dev/null | wc -l; }
sent() { db "SELECT count(*) FROM outbox WHERE kind = '$1' AND state = 'sent'"; }

# The mail the SMTP server received with Message-ID <ID@kfix.example.org>
# the store's random name, part of every Message-ID kfix writes
store_id() { db "SELECT value FROM kv WHERE key = 'store.id'"; }
mail_of() { grep -l "^Message-ID: <$1.$(store_id)@kfix.example.org>" "$T"/smtp/msg-*.eml 2>/dev/null | head -1; }

# v1 is out for moderation: the bug awaits approval, the branch is pushed
# and the mail is delivered and received.
flow_v1_published() {
	[ "$(db "SELECT state FROM bugs WHERE id = 1")" = awaiting-approval ] && [ "$(mails)" -ge 1 ] &&
		[ "$(sent push)" -ge 1 ] && [ "$(sent mail)" -ge 1 ]
}
# likewise v2, after the moderation and upstream mails of v1
flow_v2_published() {
	[ "$(db "SELECT state FROM patches WHERE version = 2")" = awaiting-approval ] &&
		[ "$(sent push)" -ge 2 ] && [ "$(sent mail)" -ge 3 ]
}

# FILE: delivered to the list's archive
archive() {
	{ echo "X-Original-To: lists@example.org"; cat "$1"; } | HOME="$T/home" \
		ORIGINAL_RECIPIENT=lists@example.org public-inbox-mda --no-precheck ||
		kt_fail "public-inbox-mda $1"
}

# FILE DELIVERY-ID: delivered by the MTA to kfixd's mail webhook, signed;
# prints the HTTP status
post() {
	local ts sig
	ts=$(date +%s)
	sig=$({ printf '%s.' "$ts"; cat "$1"; } | openssl dgst -sha256 -hmac mail-secret -hex | sed 's/.* //')
	curl -s -o /dev/null -w '%{http_code}' --data-binary @"$1" -H "X-Kfix-Timestamp: $ts" \
		-H "X-Kfix-Signature: sha256=$sig" -H "X-Kfix-Delivery: $2" "http://127.0.0.1:$HTTP_PORT/hooks/mail"
}

# FILE DELIVERY-ID: posted until kfixd's webhook takes it
post_until_taken() {
	local i
	for i in $(seq 100); do [ "$(post "$1" "$2")" = 200 ] && return 0; sleep 0.2; done
	kt_fail "the webhook did not take $1"
}

# The moderator's "#kfix upstream" answer to the RFC mail, in $T/approve.eml.
flow_write_approval() { # SUBJECT (of the RFC mail)
	printf 'From: Mod Erator <mod@example.org>\r\nTo: moderation@example.org\r\nSubject: Re: %s\r\nMessage-ID: <approve-1@example.org>\r\nIn-Reply-To: <kfix-1-v1-rfc.%s@kfix.example.org>\r\n\r\nLooks right.\r\n\r\n#kfix upstream\r\n' \
		"$1" "$(store_id)" > "$T/approve.eml"
}

# Two answers on the list to the upstream mail, in $T/review-{1,2}.eml: a
# reviewer's Reviewed-by, and the moderator's comment (which asks for v2).
flow_write_reviews() { # SUBJECT (of the upstream mail)
	printf 'From: Rev Iewer <rev@example.org>\nTo: lists@example.org\nSubject: Re: %s\nMessage-ID: <review-1@example.org>\nIn-Reply-To: <kfix-1-v1.%s@kfix.example.org>\nReferences: <kfix-1-v1.%s@kfix.example.org>\nDate: Wed, 02 Dec 2026 10:00:00 +0000\n\nThe fix is right.\n\nReviewed-by: Rev Iewer <rev@example.org>\n' \
		"$1" "$(store_id)" "$(store_id)" > "$T/review-1.eml"
	printf 'From: Mod Erator <mod@example.org>\nTo: lists@example.org\nSubject: Re: %s\nMessage-ID: <review-2@example.org>\nIn-Reply-To: <kfix-1-v1.%s@kfix.example.org>\nReferences: <kfix-1-v1.%s@kfix.example.org>\nDate: Wed, 02 Dec 2026 10:05:00 +0000\n\nkfix bot <kfix@kfix.example.org> wrote:\n> -\t\tmsq->q_cbytes -= msg->m_ts;\n\nPlease say in a comment why the byte count needs no update per message.\n' \
		"$1" "$(store_id)" "$(store_id)" > "$T/review-2.eml"
}

# A mail's decoded subject on one line.
mail_subject() { # FILE
	python3 -c 'import email,sys; m=email.message_from_binary_file(open(sys.argv[1],"rb")); print(" ".join(str(m["Subject"]).split()))' "$1"
}
