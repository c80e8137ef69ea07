#!/bin/sh
# Builds the programs the end-to-end tests run: kube-apiserver and kubectl
# (k8s.io/kubernetes), etcd, helm, oauth2-proxy and oidc (a small OpenID
# Connect provider), and for the test cluster (test/cluster)
# kube-controller-manager, kube-scheduler and kwok, each from its pinned
# module under test/tools/, into the
# cache folder given as $1 (default .cache/bin). A program is rebuilt only
# when its module's go.mod, go.sum or own main.go changed: the first build of
# kube-apiserver takes about ten minutes on two cores.
set -eu
tools=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$tools/../../.cache/bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)

# build MODULE OUTPUT PACKAGE [LDFLAGS]: builds PACKAGE of test/tools/MODULE
# as $bin/OUTPUT unless the stamp of the module's go.mod and go.sum, its
# main.go when the module is a program of its own, and the link flags says
# it is current.
build() {
	module=$1 out=$2 pkg=$3 ldflags=${4:-}
	stamp="$bin/.$out.stamp"
	main=""
	if [ -f "$tools/$module/main.go" ]; then main="$tools/$module/main.go"; fi
	want=$( (cat "$tools/$module/go.mod" "$tools/$module/go.sum" $main; echo "$ldflags") | sha256sum | cut -d' ' -f1)
	if [ -x "$bin/$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		return
	fi
	echo "building $out from $pkg (cached in $bin afterwards)" >&2
	(cd "$tools/$module" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/$out.tmp" "$pkg")
	mv "$bin/$out.tmp" "$bin/$out"
	echo "$want" >"$stamp"
}

# Kubernetes' own build stamps its version into the binaries (hack/lib/
# version.sh); without it the API server says v0.0.0, and helm refuses
# charts that name the Kubernetes versions they support.
kube=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$tools/kube/go.mod")
major=${kube#v}; major=${major%%.*}
minor=${kube#v*.}; minor=${minor%%.*}
kubever=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kubever="$kubever -X $pkg.gitVersion=$kube -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

build etcd etcd go.etcd.io/etcd/server/v3
build kube kubectl k8s.io/kubernetes/cmd/kubectl "$kubever"
build kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kubever"
build helm helm helm.sh/helm/v3/cmd/helm
build oauth2-proxy oauth2-proxy github.com/oauth2-proxy/oauth2-proxy/v7
build oidc oidc .

# The test cluster (test/cluster, `make conformance`) is built only when
# RAMJET_CLUSTER_TOOLS=1: its three programs take about half an hour on two
# cores, which `make test` does not need.
if [ "${RAMJET_CLUSTER_TOOLS:-}" != 1 ]; then
	exit 0
fi

# The test cluster's controllers come from a module of their own (kubecluster)
# so that adding them leaves kube's go.mod, and so its two long builds,
# alone; both modules pin the same Kubernetes version.
if ! grep -qx "require k8s.io/kubernetes $kube" "$tools/kubecluster/go.mod"; then
	echo "test/tools/kubecluster must require k8s.io/kubernetes $kube as test/tools/kube does" >&2
	exit 1
fi
build kubecluster kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kubever"
build kubecluster kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kubever"
kwok=$(sed -n 's/^require sigs.k8s.io\/kwok v\([0-9.]*\)$/\1/p' "$tools/kwok/go.mod")
build kwok kwok sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=$kwok"
