#!/bin/sh
# Measures how fast `ramjet-ingress run` propagates changes to ramjetd
# (issue 6 "Measure"): write to first correct answer with 0, 500 and 5,000
# routes loaded, reloads and member update latency of a 50-endpoint rollout,
# rebuild phases, memory. Prints a Markdown report and writes it to
# .cache/bench/controller.md (or -out FILE). Other flags go to the program:
#
#   test/bench/controller.sh [-sizes 0,500,5000] [-changes 50] [-out FILE] ...
#
# About eight minutes on two cores, plus the first build of kube-apiserver
# (about ten minutes, then cached). Needs root (network namespaces) and
# iproute2, like the end-to-end tests. Run it on a quiet machine: the report
# says how busy the CPU was.
set -eu
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then
	echo "controller.sh: needs root for the backends' network namespace (sudo $0)" >&2
	exit 1
fi
./test/tools/build.sh .cache/bin
mkdir -p .cache/bench
go build -o .cache/bench/propagation ./test/bench/propagation
exec .cache/bench/propagation -out .cache/bench/controller.md "$@"
