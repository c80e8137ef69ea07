# Ramjet's build, test, demo and benchmark entry points. Everything built is
# cached under .cache/ (git-ignored), so a second run is fast.

GO      ?= go
CACHE   := $(CURDIR)/.cache
BIN     := $(CACHE)/bin
export GOFLAGS := -buildvcs=false

# The version and the commit linked into both programs (--version). Builds
# run with -buildvcs=false, so Go records no commit of its own; outside a git
# checkout both stay empty and the programs print what Go recorded, or
# "unknown".
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
VERSION_PKG := github.com/ramjet-dev/ramjet/dataplane/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)

.PHONY: all deps tools cluster-tools cluster-test conformance build image test test-short fuzz demo demo-ramjetd bench bench-controller bench-passthrough lint clean

all: build

## build: compile ramjetd and ramjet-ingress into .cache/bin. The tag
## no_fs_access keeps Coraza (ModSecurity) off the file system: request
## bodies stay in memory and a read-only root file system is enough.
build: deps
	@mkdir -p $(BIN)
	$(GO) build -tags no_fs_access -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

## image: the container image ghcr.io/ramjet-dev/ramjet:$(VERSION) as an
## OCI image layout in .cache/image, built without a container engine or a
## base image by test/tools/image: both programs static (built into
## .cache/image-build), this machine's CA bundle (ca-certificates, installed
## with apt-get when root), the user nonroot (65532). The same commit gives
## the same digest. The Dockerfile builds it with a container engine
CA_BUNDLE := /etc/ssl/certs/ca-certificates.crt
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
image:
	@if [ ! -s $(CA_BUNDLE) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing ca-certificates"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ca-certificates >/dev/null; \
	  else echo "$(CA_BUNDLE) is missing (apt-get install ca-certificates)"; exit 1; fi; \
	fi
	cd test/tools/image && $(GO) run . -module $(CURDIR) -work $(CACHE)/image-build -out $(CACHE)/image \
	  -version '$(VERSION)' -commit '$(COMMIT)' -created '$(or $(SOURCE_DATE_EPOCH),0)' -ca $(CA_BUNDLE)

## deps: what building and testing need beyond Go: modules, a C compiler
## for the race detector and iproute2 for the end-to-end tests' network
## namespaces (installed with apt-get when root)
deps:
	@missing=; \
	command -v gcc >/dev/null 2>&1 || missing="$$missing gcc libc6-dev"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "install$$missing (apt-get install$$missing)"; exit 1; fi; \
	fi
	$(GO) mod download

## tools: kube-apiserver, kubectl, etcd, helm, oauth2-proxy and oidc (an
## OpenID Connect provider) for the end-to-end tests, built from pinned
## modules into .cache/bin (about ten minutes the first
## time on two cores, then cached)
tools:
	./test/tools/build.sh $(BIN)

## cluster-tools: also kube-controller-manager, kube-scheduler and kwok
## for the test cluster of test/cluster (about half an hour the first time)
cluster-tools:
	RAMJET_CLUSTER_TOOLS=1 ./test/tools/build.sh $(BIN)

## cluster-test: the test cluster's own test (build tag conformance)
cluster-test: deps cluster-tools
	$(GO) test -tags conformance -count=1 -timeout 30m ./test/cluster/

## conformance: the Gateway API conformance suite, unmodified (profiles
## GATEWAY-HTTP and GATEWAY-GRPC, every feature the GatewayClass's status
## claims), on the test cluster with Ramjet installed by its chart; the
## report goes to docs/conformance/report.yaml (see docs/conformance).
## CONFORMANCE_ARGS passes the suite's flags, e.g. -run-test=HTTPRouteSimpleSameNamespace
conformance: deps cluster-tools
	$(GO) test -tags conformance -count=1 -timeout 90m ./test/conformance/ -run TestGatewayAPIConformance -v \
	  -args -report-output=$(CURDIR)/docs/conformance/report.yaml $(CONFORMANCE_ARGS)

## test: run every test (what CI runs): the unit and end-to-end tests,
## then the test cluster's own test and the core tests of the Gateway API
## conformance suite (profiles GATEWAY-HTTP and GATEWAY-GRPC) on it, without
## the race detector (a few minutes). The fuzz tests run their seed
## corpus here; exploring beyond it is `make fuzz`, kept out of CI because
## what it finds differs from run to run
test: deps cluster-tools lint
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -tags conformance -count=1 -timeout 30m ./test/cluster/
	$(GO) test -tags conformance -count=1 -timeout 30m ./test/conformance/ -run TestGatewayAPIConformance -args -core-only

## fuzz: run the translation fuzz test beyond its seed corpus for FUZZTIME;
## add what it finds to the seeds (testdata/fuzz) with the fix
FUZZTIME ?= 15s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzTranslateIngress$$' -fuzztime $(FUZZTIME) ./annotations/all/

## test-short: the tests without the race detector, for a quick check
test-short:
	$(GO) test -count=1 ./...

## lint: formatting, vet and staticcheck (pinned; fetched through the module proxy)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags conformance ./test/cluster/ ./test/conformance/
	$(GO) run $(STATICCHECK) ./...

## demo: Ramjet doing its job: a local kube-apiserver and etcd, example
## backends in a network namespace, ramjetd and the controller serving
## examples/ingress; prints commands to try and runs until Ctrl-C (needs
## root; the first run builds the API server, about ten minutes)
demo:
	@mkdir -p $(BIN)
	@echo "==> building the demo program (the first time it compiles client-go: a few minutes)"
	@$(GO) build -o $(BIN)/ramjet-demo ./examples/demo
	@$(BIN)/ramjet-demo

## demo-ramjetd: the older demo of ramjetd alone with local backends, no
## Kubernetes
demo-ramjetd:
	./examples/ramjetd/demo.sh

## bench: the data plane's Go benchmarks, then how fast a change reaches
## ramjetd at 0 to 10,000 routes (test/bench/controller.sh, about 10
## minutes), then ramjetd side by side with nginx and HAProxy on two cores
## (test/bench/proxy.sh, about 16 minutes; installs nginx, HAProxy, wrk and
## h2load). Needs root. One report with both: docs/benchmarks.md and
## docs/benchmarks.svg
bench: deps tools
	$(GO) test -run '^$$' -bench . -benchmem ./dataplane/...
	./test/bench/controller.sh -sizes 0,500,5000,10000 -out $(CACHE)/bench/controller.md
	./test/bench/proxy.sh -controller $(CACHE)/bench/controller.md

## bench-controller: how fast a change of the API server reaches ramjetd,
## at 0, 500 and 5,000 routes (about ten minutes; needs root); the report
## goes to .cache/bench/controller.md
bench-controller: deps
	./test/bench/controller.sh

## bench-passthrough: ssl-passthrough spliced by ramjetd side by side with
## nginx's stream proxy with ssl_preread (about 2.5 minutes; needs root,
## installs nginx and its stream module); writes
## docs/benchmarks-passthrough.md
bench-passthrough: deps
	./test/bench/passthrough.sh

clean:
	rm -rf $(CACHE)
