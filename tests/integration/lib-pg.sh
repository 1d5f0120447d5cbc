# A PostgreSQL server of the test's own (sourced after lib.sh): Debian's
# postgresql-15 binaries, a cluster made by initdb in $T, listening on
# 127.0.0.1 only, with a password (SCRAM) for its one user.  PostgreSQL
# refuses to run as root, so as root the server runs as nobody.
#   pg_start   sets PG_SERVER (postgresql://kfix:PASSWORD@127.0.0.1:PORT,
#              no database) and PG_URL (its "kfix" database)
#   pg_restart stops it (ending every session) and starts it again
#   pg_stop    stops it at once (also on exit)

pg_bin() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && echo "$d"
	done | sort -V | tail -n 1
}

pg_as_owner() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

pg_stop() {
	[ -n "${PG_DATA:-}" ] && [ -f "$PG_DATA/postmaster.pid" ] || return 0
	pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w stop >/dev/null 2>&1 || true
}

# pg_ctl start|restart: the server on 127.0.0.1:$PG_PORT only (fsync off:
# the tests kill kfix and restart the server, never the machine)
pg_ctl() {
	pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$T/pg/server.log" -w -t 60 -m fast \
		-o "-h 127.0.0.1 -p $PG_PORT -k $T/pg -c fsync=off -c max_connections=200" \
		"$1" > /dev/null
}

pg_restart() {
	pg_ctl restart || { cat "$T/pg/server.log" >&2; fail "PostgreSQL did not restart"; }
}

pg_start() {
	PG_BIN=$(pg_bin)
	[ -n "$PG_BIN" ] || skip "PostgreSQL is not installed (apt-get install postgresql-15)"
	command -v psql >/dev/null || skip "psql is not installed (apt-get install postgresql-client-15)"
	# the server's user must reach its folder inside $T
	chmod 711 "$T"
	mkdir -p "$T/pg"
	[ "$(id -u)" != 0 ] || chown nobody:nogroup "$T/pg"
	PG_DATA=$T/pg/data
	PG_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s\n' "$PG_PASSWORD" > "$T/pg/pw"
	[ "$(id -u)" != 0 ] || chown nobody:nogroup "$T/pg/pw"
	pg_as_owner "$PG_BIN/initdb" -D "$PG_DATA" -U kfix --pwfile="$T/pg/pw" \
		--auth=scram-sha-256 -E UTF8 --no-locale --no-sync > "$T/pg/initdb.log" 2>&1 ||
		{ cat "$T/pg/initdb.log" >&2; fail "initdb failed"; }
	rm -f "$T/pg/pw"
	PG_PORT=$(free_port)
	pg_ctl start || { cat "$T/pg/server.log" >&2; fail "PostgreSQL did not start"; }
	trap 'pg_stop; cleanup' EXIT
	PG_SERVER=postgresql://kfix:$PG_PASSWORD@127.0.0.1:$PG_PORT
	PG_URL=$PG_SERVER/kfix
	psql -q "$PG_SERVER/postgres" -c 'CREATE DATABASE kfix' ||
		fail "cannot create a database"
}
