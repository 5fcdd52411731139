# roofsim's `sim` binary in a minimal image.
#
#   docker build -t registry.example.com/roofsim:latest \
#     --build-arg VERSION=0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm registry.example.com/roofsim:latest version
#
# Stage 1 builds a static binary (CGO_ENABLED=0: no libc needed at run
# time); stage 2 copies it onto distroless/static, which holds only CA
# certificates, tzdata and a non-root user. examples/k8s/sweep-job.yaml
# runs this image.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so source edits do not re-download them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/sim ./cmd/sim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sim /usr/local/bin/sim
# The example workloads, so `sim run --workload /examples/chat.yaml` works.
COPY --from=build /src/examples /examples
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/sim"]
CMD ["--help"]
