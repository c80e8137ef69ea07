# The container image of Ramjet, ghcr.io/ramjet-dev/ramjet, for a machine
# with a container engine (BuildKit):
#
#   docker build -t ghcr.io/ramjet-dev/ramjet:dev \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) .
#
# `make image` builds the same programs, user, entrypoint and command
# without a container engine, as an OCI image layout (test/tools/image).
# There is no shell in the image: the pod runs /usr/local/bin/ramjetd and
# /usr/local/bin/ramjet-ingress directly.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
# no_fs_access keeps Coraza (ModSecurity) off the file system, which is
# read-only in the pod: inspected request bodies stay in memory.
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -tags no_fs_access \
      -ldflags "-X github.com/ramjet-dev/ramjet/dataplane/version.version=${VERSION} -X github.com/ramjet-dev/ramjet/dataplane/version.commit=${COMMIT}" \
      -o /out/ ./cmd/ramjetd ./cmd/ramjet-ingress

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=""
ARG COMMIT=""
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/ramjet-dev/ramjet"
COPY --from=build --chown=0:0 --chmod=0555 /out/ramjetd /out/ramjet-ingress /usr/local/bin/
USER 65532:65532
WORKDIR /
ENTRYPOINT ["/usr/local/bin/ramjetd"]
CMD ["--config", "/etc/ramjet/generated/ramjet.yaml"]
