#!/usr/bin/env bash
# demo.sh (`make demo-ramjetd`): ramjetd, Ramjet's data plane, alone in
# front of three local backends, without Kubernetes, with a set of curl
# commands to try. It runs until Ctrl-C, then stops everything and removes
# its run folder. (`make demo` is the demo of the whole of Ramjet, the
# controller with a local API server: examples/demo.)
#
# Steps: build ramjetd and the demo tools into .cache/bin, make a demo CA
# and certificate, start the backends (web-a, web-b, api), write ramjet.yaml
# from examples/ramjetd/demo.yaml, start ramjetd and print the commands.
#
# Everything listens on 127.0.0.1. The ports can be changed with:
#   RAMJET_DEMO_HTTP_PORT (8080)    RAMJET_DEMO_HTTPS_PORT (8443)
#   RAMJET_DEMO_HEALTH_PORT (8081)  RAMJET_DEMO_WEB_A_PORT (9001)
#   RAMJET_DEMO_WEB_B_PORT (9002)   RAMJET_DEMO_API_PORT (9003)
set -eu

ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
CACHE=$ROOT/.cache
BIN=$CACHE/bin
HOSTS=shop.demo.test,api.demo.test,canary.demo.test,secure.demo.test,dynamic.demo.test

HTTP_PORT=${RAMJET_DEMO_HTTP_PORT:-8080}
HTTPS_PORT=${RAMJET_DEMO_HTTPS_PORT:-8443}
HEALTH_PORT=${RAMJET_DEMO_HEALTH_PORT:-8081}
WEB_A_PORT=${RAMJET_DEMO_WEB_A_PORT:-9001}
WEB_B_PORT=${RAMJET_DEMO_WEB_B_PORT:-9002}
API_PORT=${RAMJET_DEMO_API_PORT:-9003}

say() { printf '==> %s\n' "$*"; }
warn() { printf 'demo: %s\n' "$*" >&2; }
die() {
	warn "$*"
	exit 1
}

# ---- state, and the cleanup that Ctrl-C, a failure or the end runs -------

RUN=            # the run folder
SOCK_DIR=       # a short folder for the admin socket, when the run folder's path is too long
PIDS=()         # every process started: the backends, then ramjetd
NAMES=()        # their names, for messages
LOGS=()         # their log files
READY=0         # 1 once the commands are printed
SLEEP_PID=      # the sleep of the main loop
CLEANED=0

cleanup() {
	set +e
	[ "$CLEANED" = 1 ] && return
	CLEANED=1
	trap '' INT TERM
	local pid i left
	[ -n "$SLEEP_PID" ] && kill "$SLEEP_PID" 2>/dev/null
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	# ramjetd drains briefly (--drain-delay), the backends stop at once.
	for i in $(seq 100); do
		left=0
		for pid in "${PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && left=1
		done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null && warn "killed process $pid, which did not stop on SIGTERM"
		wait "$pid" 2>/dev/null
	done
	if [ "${#PIDS[@]}" -gt 0 ]; then
		say "stopped ramjetd and the backends"
	fi
	if [ -n "$RUN" ]; then
		rm -rf "$RUN"
		say "removed the run folder $RUN"
	fi
	[ -n "$SOCK_DIR" ] && rm -rf "$SOCK_DIR"
	return 0
}

on_signal() {
	echo
	say "interrupted; stopping"
	cleanup
	if [ "$READY" = 1 ]; then
		exit 0
	fi
	exit 130
}

trap cleanup EXIT
trap on_signal INT TERM

# ---- checks ---------------------------------------------------------------

check_port() { # VARIABLE PORT
	case $2 in
	'' | *[!0-9]*) die "$1=$2 is not a port number" ;;
	esac
	if [ "$2" -lt 1 ] || [ "$2" -gt 65535 ]; then
		die "$1=$2 is not a port number (1..65535)"
	fi
	# A connection that succeeds means something listens there already.
	if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
		local other=$((10#$2 + 10000))
		[ "$other" -gt 65535 ] && other=$((10#$2 - 10000))
		die "port $2 on 127.0.0.1 is already in use (see: ss -ltnp 'sport = :$2'); stop what uses it or choose another port, for example: $1=$other make demo-ramjetd"
	fi
}

seen_ports=" "
for var in RAMJET_DEMO_HTTP_PORT:$HTTP_PORT RAMJET_DEMO_HTTPS_PORT:$HTTPS_PORT \
	RAMJET_DEMO_HEALTH_PORT:$HEALTH_PORT RAMJET_DEMO_WEB_A_PORT:$WEB_A_PORT \
	RAMJET_DEMO_WEB_B_PORT:$WEB_B_PORT RAMJET_DEMO_API_PORT:$API_PORT; do
	name=${var%%:*} port=${var#*:}
	check_port "$name" "$port"
	case $seen_ports in
	*" $port "*) die "$name=$port: the port is used twice; the six demo ports must differ" ;;
	esac
	seen_ports="$seen_ports$port "
done

if ! command -v go >/dev/null 2>&1; then
	# sudo often drops /usr/local/go/bin from PATH.
	if [ -x /usr/local/go/bin/go ]; then
		PATH=$PATH:/usr/local/go/bin
	else
		die "go is not installed or not in PATH; the demo builds ramjetd with Go 1.26 (https://go.dev/dl/)"
	fi
fi

# The printed commands use curl; so does the readiness check when present.
HAVE_CURL=1
if ! command -v curl >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "curl is missing; installing it with apt-get..."
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null || true
	fi
	if ! command -v curl >/dev/null 2>&1; then
		HAVE_CURL=0
		warn "curl is not installed, and the commands below need it: sudo apt-get install curl"
	fi
fi

# ---- build ----------------------------------------------------------------

cd "$ROOT"
export GOFLAGS=${GOFLAGS:--buildvcs=false}
mkdir -p "$BIN" "$CACHE/demo"
say "building ramjetd..."
go build -o "$BIN/ramjetd" ./cmd/ramjetd
say "building the demo backend and certificate tool..."
go build -o "$BIN/echo-backend" ./examples/echo-backend
go build -o "$BIN/democert" ./examples/democert

# ---- run folder, certificates, configuration ------------------------------

RUN=$(mktemp -d "$CACHE/demo/run-XXXXXX")
SOCK=$RUN/admin.sock
if [ "${#SOCK}" -gt 100 ]; then
	# A unix socket path is limited to 107 bytes.
	SOCK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ramjet-demo-XXXXXX")
	SOCK=$SOCK_DIR/admin.sock
fi

say "making a demo CA and a certificate for the demo hosts..."
"$BIN/democert" --out "$RUN" --hosts "$HOSTS" >/dev/null

# sed_value quotes a value for the replacement of sed s|...|...| and for a
# single-quoted YAML string.
sed_value() {
	local v=${1//\'/\'\'}
	v=${v//\\/\\\\}
	v=${v//|/\\|}
	v=${v//&/\\&}
	printf '%s' "$v"
}

say "writing $RUN/ramjet.yaml from examples/ramjetd/demo.yaml..."
sed -e "s|@RUN_DIR@|$(sed_value "$RUN")|g" \
	-e "s|@ADMIN_SOCKET@|$(sed_value "$SOCK")|g" \
	-e "s|@HTTP_PORT@|$HTTP_PORT|g" \
	-e "s|@HTTPS_PORT@|$HTTPS_PORT|g" \
	-e "s|@HEALTH_PORT@|$HEALTH_PORT|g" \
	-e "s|@WEB_A_PORT@|$WEB_A_PORT|g" \
	-e "s|@WEB_B_PORT@|$WEB_B_PORT|g" \
	-e "s|@API_PORT@|$API_PORT|g" \
	"$ROOT/examples/ramjetd/demo.yaml" >"$RUN/ramjet.yaml"
if grep -n '@[A-Z_]*@' "$RUN/ramjet.yaml" >&2; then
	die "examples/ramjetd/demo.yaml has a placeholder demo.sh does not fill (above)"
fi
"$BIN/ramjetd" validate --config "$RUN/ramjet.yaml" >/dev/null

# ---- processes ------------------------------------------------------------

start() { # NAME LOG COMMAND...
	local name=$1 log=$2
	shift 2
	"$@" >"$log" 2>&1 &
	PIDS+=("$!")
	NAMES+=("$name")
	LOGS+=("$log")
}

# died reports the first process that is no longer running, with the end
# of its log, and returns 0; it returns 1 when all run.
died() {
	local i rc
	for i in "${!PIDS[@]}"; do
		if ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
			rc=0
			wait "${PIDS[$i]}" 2>/dev/null || rc=$?
			warn "${NAMES[$i]} exited with status $rc; the last lines of its log ${LOGS[$i]}:"
			tail -n 20 "${LOGS[$i]}" | sed 's/^/    /' >&2
			return 0
		fi
	done
	return 1
}

# http_status prints the status code of GET http://127.0.0.1:PORT/PATH
# (000 or nothing when there is no answer), with curl or else bash's
# /dev/tcp.
http_status() { # PORT PATH
	if [ "$HAVE_CURL" = 1 ]; then
		curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1$2" || true
		return
	fi
	local line=
	if exec 3<>"/dev/tcp/127.0.0.1/$1"; then
		printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
		read -r -t 2 line <&3 || true
		exec 3<&-
	fi 2>/dev/null
	line=${line#HTTP/* }
	printf '%s' "${line%% *}"
}

# wait_for waits until GET PORT/PATH answers 200, or a process stops.
wait_for() { # WHAT PORT PATH
	local i
	for i in $(seq 150); do
		[ "$(http_status "$2" "$3")" = 200 ] && return 0
		died && die "$1 did not start"
		sleep 0.1
	done
	die "$1 did not answer 200 on http://127.0.0.1:$2$3 within 15 seconds; see the logs in $RUN"
}

say "starting the backends web-a, web-b and api on 127.0.0.1:$WEB_A_PORT, $WEB_B_PORT and $API_PORT..."
start web-a "$RUN/web-a.log" "$BIN/echo-backend" --listen "127.0.0.1:$WEB_A_PORT" --name web-a
start web-b "$RUN/web-b.log" "$BIN/echo-backend" --listen "127.0.0.1:$WEB_B_PORT" --name web-b
start api "$RUN/api.log" "$BIN/echo-backend" --listen "127.0.0.1:$API_PORT" --name api
wait_for web-a "$WEB_A_PORT" /
wait_for web-b "$WEB_B_PORT" /
wait_for api "$API_PORT" /

say "starting ramjetd..."
start ramjetd "$RUN/ramjetd.log" "$BIN/ramjetd" --config "$RUN/ramjet.yaml" --drain-delay 500ms --shutdown-timeout 5s
wait_for ramjetd "$HEALTH_PORT" /readyz

# ---- the commands to try --------------------------------------------------

# Paths are absolute, so the commands work from any folder, and quoted
# for the shell when they need it.
H=127.0.0.1:$HTTP_PORT
CA=$(printf %q "$RUN/ca.crt")
RAMJETD=$(printf %q "$BIN/ramjetd")
SOCK=$(printf %q "$SOCK")
section() { printf '\n\033[1m%s\033[0m\n' "$*"; }
show() { # WHAT COMMAND
	printf '  # %s\n  %s\n' "$1" "$2"
}
if [ ! -t 1 ]; then
	section() { printf '\n%s\n' "$*"; }
fi

section "ramjetd is ready. Try these commands in another terminal:"

section "Host routing"
show "shop.demo.test is served by the web pool (web-a or web-b):" \
	"curl -H 'Host: shop.demo.test' http://$H/"
show "api.demo.test is served by the api pool:" \
	"curl -H 'Host: api.demo.test' http://$H/"
show "a host no application serves is answered 404 by ramjetd:" \
	"curl -i -H 'Host: nope.demo.test' http://$H/"

section "Path routing (shop.demo.test)"
show "the prefix /api goes to the api backend, everything else to web:" \
	"curl -H 'Host: shop.demo.test' http://$H/api/cart"
show "the exact route /checkout goes to api; /checkout/done is not it and goes to web:" \
	"for p in /checkout /checkout/done; do curl -s -H 'Host: shop.demo.test' http://$H\$p; done"
show "the regex route /products/[0-9]+ goes to api; /products/shoes goes to web:" \
	"for p in /products/42 /products/shoes; do curl -s -H 'Host: shop.demo.test' http://$H\$p; done"

section "Load balancing"
show "round robin over web-a and web-b (a pool of two members):" \
	"for i in 1 2 3 4; do curl -s -H 'Host: shop.demo.test' http://$H/ | cut -d' ' -f1; done"
show "a weighted split between pools, stable (web-a) 90 / canary (web-b) 10, counted over 100 requests:" \
	"for i in \$(seq 100); do curl -s -H 'Host: canary.demo.test' http://$H/ | cut -d' ' -f1; done | sort | uniq -c"

section "TLS"
show "HTTPS with the demo CA: SNI picks the certificate of shop.demo.test (no -k needed):" \
	"curl --cacert $CA --resolve shop.demo.test:$HTTPS_PORT:127.0.0.1 https://shop.demo.test:$HTTPS_PORT/"
show "without SNI (by IP) ramjetd serves its generated default certificate instead:" \
	"curl -skv https://127.0.0.1:$HTTPS_PORT/ 2>&1 | grep 'subject:'"
show "HTTP/2 between curl and ramjetd:" \
	"curl -s --http2 --cacert $CA --resolve shop.demo.test:$HTTPS_PORT:127.0.0.1 -w 'answered over HTTP/%{http_version}\\n' https://shop.demo.test:$HTTPS_PORT/"
show "secure.demo.test has https_redirect: true, so plain HTTP is answered 308 to https:// (on port 443):" \
	"curl -i -H 'Host: secure.demo.test' 'http://$H/account?tab=orders'"
show "over HTTPS it is served:" \
	"curl --cacert $CA --resolve secure.demo.test:$HTTPS_PORT:127.0.0.1 'https://secure.demo.test:$HTTPS_PORT/account?tab=orders'"

section "Answers from ramjetd itself"
show "a fixed response (respond action):" \
	"curl -i -H 'Host: shop.demo.test' http://$H/robots.txt"
show "a redirect action (301):" \
	"curl -i -H 'Host: shop.demo.test' http://$H/old-catalog"

section "Streaming"
show "server-sent events pass through as they come, one a second (-N: no buffering in curl):" \
	"curl -N -H 'Host: shop.demo.test' http://$H/sse"

section "Admin API (unix socket $SOCK)"
show "every pool with its counters:" \
	"$RAMJETD upstreams --admin-socket $SOCK"
show "one pool and its members; dynamic is members_from: api, seeded with web-a:" \
	"$RAMJETD upstreams show dynamic --admin-socket $SOCK"
show "dynamic.demo.test is answered by web-a only:" \
	"for i in 1 2 3 4; do curl -s -H 'Host: dynamic.demo.test' http://$H/ | cut -d' ' -f1; done"
show "replace the members of dynamic with web-b and api, without a reload:" \
	"curl --unix-socket $SOCK -X PUT http://ramjetd/v1/upstreams/dynamic -d '{\"members\":[{\"address\":\"127.0.0.1:$WEB_B_PORT\"},{\"address\":\"127.0.0.1:$API_PORT\"}]}'"
show "now web-b and api answer in turn:" \
	"for i in 1 2 3 4; do curl -s -H 'Host: dynamic.demo.test' http://$H/ | cut -d' ' -f1; done"
show "reload ramjet.yaml (edit $RUN/ramjet.yaml first to change routes); the members set through the API stay:" \
	"curl --unix-socket $SOCK -X POST http://ramjetd/v1/reload"
show "the generation and digest of the configuration serving:" \
	"curl --unix-socket $SOCK http://ramjetd/v1/status"

section "Health and metrics"
show "readiness, as a load balancer or Kubernetes would ask:" \
	"curl http://127.0.0.1:$HEALTH_PORT/readyz"
show "Prometheus metrics: ramjetd's series that are not 0 (requests by application, by member, reloads...), without histogram buckets:" \
	"curl -s http://127.0.0.1:$HEALTH_PORT/metrics | grep '^ramjet_' | grep -v -e _bucket -e ' 0\$'"

section "Logs"
printf '  ramjetd (one line per request): %s\n' "$RUN/ramjetd.log"
printf '  backends: %s, %s, %s\n' "$RUN/web-a.log" "$RUN/web-b.log" "$RUN/api.log"
printf '  the configuration: %s\n' "$RUN/ramjet.yaml"
printf '\nPress Ctrl-C to stop ramjetd and the backends (the run folder and its logs are removed).\n'
READY=1

# ---- run until Ctrl-C, or until a process stops ----------------------------

while :; do
	# A background sleep lets the trap run as soon as a signal arrives.
	sleep 1 &
	SLEEP_PID=$!
	wait "$SLEEP_PID" || true
	if died; then
		warn "stopping the demo"
		exit 1
	fi
done
