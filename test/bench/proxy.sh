#!/bin/sh
# Measures ramjetd side by side with nginx and HAProxy on two cores: the
# proxy under test alone on CPU 0, the load generator and an nginx backend
# on CPU 1, loopback only. Writes docs/benchmarks.md and docs/benchmarks.svg
# and prints the report. Flags go to the program (test/bench/proxy):
#
#   test/bench/proxy.sh [-duration 10s] [-warmup 2s] [-reps 3] [-cells http-1k,...] [-out DIR]
#
# A smoke run: test/bench/proxy.sh -duration 2s -warmup 1s -rate-duration 1s -reps 1 -out /tmp
# About 16 minutes with the defaults. Needs root: it installs nginx,
# HAProxy, wrk and h2load with apt-get when they are missing. Run it on a
# quiet machine: the report says how much else ran (background CPU).
set -eu
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then
	echo "proxy.sh: needs root to install the tools and pin the proxies (sudo $0)" >&2
	exit 1
fi
missing=
command -v nginx >/dev/null 2>&1 || missing="$missing nginx-light"
# ssl_preread, nginx's side of the ssl-passthrough cells
[ -e /usr/lib/nginx/modules/ngx_stream_module.so ] || missing="$missing libnginx-mod-stream"
command -v haproxy >/dev/null 2>&1 || missing="$missing haproxy"
command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
command -v h2load >/dev/null 2>&1 || missing="$missing nghttp2-client"
command -v taskset >/dev/null 2>&1 || missing="$missing util-linux"
if [ -n "$missing" ]; then
	echo "proxy.sh: installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
mkdir -p .cache/bench
go build -o .cache/bench/ramjetd ./cmd/ramjetd
go build -o .cache/bench/proxy ./test/bench/proxy
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec taskset -c 1 .cache/bench/proxy -ramjetd .cache/bench/ramjetd "$@"
