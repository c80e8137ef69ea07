#!/bin/sh
# Measures ramjetd's ssl-passthrough side by side with nginx's stream proxy
# with ssl_preread, in the same run: the proxy under test alone on CPU 0,
# the clients and the member (the program test/bench/passthrough) on CPU 1,
# loopback only. Writes docs/benchmarks-passthrough.md and prints the
# report. Flags go to the program:
#
#   test/bench/passthrough.sh [-duration 10s] [-warmup 2s] [-reps 3] [-conns 8] [-cells download,upload,connect] [-out FILE]
#
# A smoke run: test/bench/passthrough.sh -duration 2s -warmup 1s -reps 1 -out /tmp/passthrough.md
# About 2.5 minutes with the defaults. Needs root: it installs nginx with
# its stream module (Debian's nginx and libnginx-mod-stream) with apt-get
# when they are missing. Run it on a quiet machine: the report says how
# much else ran (background CPU).
set -eu
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then
	echo "passthrough.sh: needs root to install nginx (sudo $0)" >&2
	exit 1
fi
missing=
command -v nginx >/dev/null 2>&1 || missing="$missing nginx"
[ -f /usr/lib/nginx/modules/ngx_stream_module.so ] || missing="$missing libnginx-mod-stream"
command -v taskset >/dev/null 2>&1 || missing="$missing util-linux"
if [ -n "$missing" ]; then
	echo "passthrough.sh: installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
mkdir -p .cache/bench
go build -o .cache/bench/ramjetd ./cmd/ramjetd
go build -o .cache/bench/passthrough ./test/bench/passthrough
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec taskset -c 1 .cache/bench/passthrough -ramjetd .cache/bench/ramjetd "$@"
