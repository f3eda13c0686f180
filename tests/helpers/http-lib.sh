# SPDX-License-Identifier: GPL-2.0-or-later
# http-lib.sh - TAP helpers and feeder start/stop for the HTTP shell tests.
# Sourced by tests/t/http.t, tests/t/dashboard.t and tests/t/bench-http.t.

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
FEEDER="$top_builddir/tests/helpers/http-feeder"
T=0
FAILED=0
PIDS=""
TMPD=$(mktemp -d /tmp/imb-http.XXXXXX)

ok() {	# ok COND-EXIT-STATUS NAME
	T=$((T + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T - $2"
	else
		echo "not ok $T - $2"
		FAILED=$((FAILED + 1))
	fi
}

check() {	# check NAME COMMAND...
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then ok 0 "$name"; else ok 1 "$name"; fi
}

cleanup() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMPD"
}
trap cleanup EXIT

# start_feeder NAME ARGS... : sets PORT_NAME and PID_NAME
start_feeder() {
	name=$1
	shift
	"$FEEDER" "$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	pid=$!
	PIDS="$PIDS $pid"
	i=0
	while [ $i -lt 100 ] && ! grep -q '^port ' "$TMPD/$name.out" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	port=$(awk '/^port /{print $2}' "$TMPD/$name.out")
	eval "PORT_$name=\$port; PID_$name=\$pid"
	[ -n "$port" ]
}

# stop_feeder NAME: SIGTERM, then a TAP line for a clean exit (status 0,
# nothing from the sanitizers on stderr)
stop_feeder() {
	eval "pid=\$PID_$1"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	st=$?
	if [ $st -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$TMPD/$1.err"; then
		ok 0 "$1 feeder stops cleanly on SIGTERM"
	else
		ok 1 "$1 feeder stops cleanly on SIGTERM (status $st)"
		sed 's/^/# /' "$TMPD/$1.err" | head -30
	fi
	PIDS=$(echo " $PIDS " | sed "s/ $pid / /")
}

# code URL [curl args]: prints the HTTP status code
code() {
	url=$1
	shift
	curl -s -o "$TMPD/body" -w '%{http_code}' "$@" "$url"
}

# etag_304 BASE PATH: a conditional GET with the ETag just read gets 304; a
# window may close in between, then the 200 must carry a new ETag (retry)
etag_304() {
	e=$(curl -s -D - -o /dev/null "$1$2" | awk -F': ' 'tolower($1)=="etag"{print $2}' | tr -d '\r')
	[ -n "$e" ] || return 1
	n=0
	while [ $n -lt 10 ]; do
		r=$(curl -s -D - -o /dev/null -H "If-None-Match: $e" "$1$2" | tr -d '\r')
		c=$(printf '%s\n' "$r" | awk 'NR==1{print $2}')
		ne=$(printf '%s\n' "$r" | awk -F': ' 'tolower($1)=="etag"{print $2}')
		[ "$c" = 304 ] && return 0
		[ "$c" = 200 ] && [ -n "$ne" ] && [ "$ne" != "$e" ] || return 1
		e=$ne
		n=$((n + 1))
	done
	return 1
}
