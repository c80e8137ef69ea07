# Ramjet's build, test, demo and benchmark entry points. Everything built is
# cached under .cache/ (git-ignored), so a second run is fast.

GO      ?= go
CACHE   := $(CURDIR)/.cache
BIN     := $(CACHE)/bin
export GOFLAGS := -buildvcs=false

.PHONY: all deps build test test-short fuzz demo bench lint clean

all: build

## build: compile ramjetd and ramjet-ingress into .cache/bin
build: deps
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

## deps: what building and testing need beyond Go: modules, and a C
## compiler for the race detector (installed with apt-get when root)
deps:
	@command -v gcc >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing gcc for the race detector"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; \
	  else echo "the race detector needs gcc: install it (apt-get install gcc)"; exit 1; fi; }
	$(GO) mod download

## test: run every test (what CI runs), then the fuzz tests for a short time
test: deps lint
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz

## fuzz: run the translation fuzz test beyond its seed corpus for FUZZTIME
## (the seed corpus runs with every go test)
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
	$(GO) run $(STATICCHECK) ./...

## demo: run ramjetd with local backends and print commands to try
demo:
	./examples/ramjetd/demo.sh

## bench: the data plane's Go benchmarks
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./dataplane/...

clean:
	rm -rf $(CACHE)
