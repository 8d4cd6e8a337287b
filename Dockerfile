# The container image of `sheaf serve --http`: one static binary on a
# distroless static base, running as a non-root user.
#
#   docker build -t sheaf .
#   docker run --rm -p 127.0.0.1:8787:8787 -v ~/Notes:/vault \
#     --user "$(id -u):$(id -g)" -e SHEAF_TOKEN=change-me-to-a-long-secret sheaf
#
# Inside the container Sheaf listens on 0.0.0.0:8787, so it requires a
# credential (SHEAF_TOKEN, API keys or OAuth): clients send
# "Authorization: Bearer <token>". The index lives in /state (a volume keeps
# it across restarts: -v sheaf-state:/state); nothing but notes, the trash
# and log.md is written to /vault.
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum go.work go.work.sum ./
COPY third_party ./third_party
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags "-s -w -X main.version=${VERSION}" -o /out/sheaf ./cmd/sheaf \
 && mkdir -p /out/state /out/vault

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="Sheaf" \
      org.opencontainers.image.description="An MCP server for Markdown note vaults" \
      org.opencontainers.image.source="https://github.com/sheaf-dev/sheaf" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      io.modelcontextprotocol.server.name="io.github.sheaf-dev/sheaf"
COPY --from=build /out/sheaf /sheaf
COPY --from=build --chmod=1777 /out/state /state
COPY --from=build --chmod=0755 /out/vault /vault
COPY LICENSE NOTICE /
ENV SHEAF_VAULT=/vault SHEAF_STATE=/state SHEAF_HTTP=0.0.0.0:8787
USER nonroot:nonroot
EXPOSE 8787
VOLUME ["/state"]
ENTRYPOINT ["/sheaf"]
CMD ["serve"]
