# Sheaf's build. `make test` is what CI runs (through .ci/run).
GO      ?= go
BIN     ?= bin/sheaf
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# grpcnotrace: gRPC (the Qdrant client) leaves out x/net/trace, whose
# html/template would make the linker keep every exported method of every
# type (42.7 MB instead of 33.3 MB; docs/architecture.md).
GOTAGS  := grpcnotrace
VAULT   ?= infra/sample-vault
ADDR    ?= 127.0.0.1:8787
BENCH_VAULT ?= /tmp/sheaf-bench-10k
BIG_VAULT   ?= /tmp/sheaf-bench-100k

# Test servers installed by `make tools` (pinned): an S3-compatible server
# and the AWS Lambda Runtime Interface Emulator (no tagged releases: a commit).
VERSITYGW_VERSION ?= v1.8.0
RIE_VERSION       ?= v0.0.0-20261030222936-bef5c4ba774d
GOBIN_DIR         := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
export PATH       := $(GOBIN_DIR):$(PATH)

.PHONY: build test tools versitygw unit race smoke quickstart vet bench bench-search bench-big bench-sync fuzz run clean docs release sam-build sam-api sam-index s3-local

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(GOTAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sheaf

# vet + gofmt, every Go test (conformance over stdio and HTTP included), then
# the TypeScript SDK smoke test against the built binary and the README's
# local quick start as a newcomer runs it (a fresh HOME).
test: tools vet unit race smoke quickstart

# What the tests start: versitygw, the Lambda emulator (Go), the TypeScript
# MCP SDK and the USE-lite embedder (npm, versions pinned in package.json).
# docker-compose and shellcheck (Debian packages) validate infra/ and
# localstack/ when present; .ci/run installs them.
# versitygw alone: what `make s3-local` needs (no npm).
versitygw:
	@test -x $(GOBIN_DIR)/versitygw || $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

tools: versitygw
	@test -x $(GOBIN_DIR)/aws-lambda-rie || $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	@test -d infra/smoke/node_modules || npm --prefix infra/smoke install --no-audit --no-fund --loglevel=error
	@test -d infra/embedder/node_modules || npm --prefix infra/embedder install --no-audit --no-fund --loglevel=error

vet:
	@test -z "$$(gofmt -l . | grep -v '^infra/smoke/node_modules' )" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

# go test -json through infra/testsummary: the usual output, then every
# skipped test with its reason; under CI a skip .ci/skips does not explain
# fails the run.
unit:
	$(GO) test -json -count=1 -timeout 20m ./... | $(GO) run ./infra/testsummary -allow .ci/skips
	$(GO) test -json -count=1 -tags sheaf_noqdrant ./shared/config/... | $(GO) run ./infra/testsummary -allow .ci/skips

# The race detector over the concurrent parts (indexer, catalog, stores, tools).
race:
	$(GO) test -json -race -short -count=1 -timeout 15m ./indexer/ ./shared/catalogstore/ ./shared/s3events/ ./shared/config/local/watch/ ./shared/vault/ ./shared/store/... ./shared/core/ ./shared/tools/ ./shared/textindex/... ./shared/vectors/... ./shared/embed/ ./shared/auth/... ./shared/llm/... ./shared/vaultsync/ ./functions/internal/... | $(GO) run ./infra/testsummary -allow .ci/skips

smoke: build
	@test -d infra/smoke/node_modules || npm --prefix infra/smoke install --no-audit --no-fund --loglevel=error
	SHEAF_BIN=$(CURDIR)/$(BIN) infra/smoke/run.sh

# The README's "everything on your laptop" commands, as written, in a fresh HOME.
quickstart: build
	SHEAF_BIN=$(CURDIR)/$(BIN) infra/quickstart/local.sh

# docs/tools.md (from tools/list) and docs/configuration.md (from the
# flags); TestDocs fails when the committed files drift from the code.
docs:
	$(GO) run ./cmd/sheaf docs docs

# Every release artifact in dist/ (docs/releasing.md): static binaries for
# linux, darwin and windows on amd64 and arm64, the two Lambda zips,
# server.json, SHA256SUMS. VERSION=v0.2.0 names a release.
release:
	VERSION=$(VERSION) GO=$(GO) infra/release/release.sh

# sam local on this machine (Docker and the SAM CLI needed): build for the
# host's architecture, then invoke the indexer once and serve the MCP
# function, pointed by infra/sam/env.json at a local S3 (make s3-local) and
# Meilisearch.
HOST_LAMBDA_ARCH := $(if $(filter arm64 aarch64,$(shell uname -m)),arm64,x86_64)
SAM_PARAMS ?= Architecture=$(HOST_LAMBDA_ARCH) VaultBucketName=sheaf-vault MeiliUrl=http://host.docker.internal:7700 Token=dev-token-change-me-0123456789
sam-build:
	LAMBDA_ARCH=$(HOST_LAMBDA_ARCH) sam build --parameter-overrides $(SAM_PARAMS)
sam-index:
	sam local invoke IndexerFunction --event infra/sam/reconcile.json --env-vars infra/sam/env.json --parameter-overrides $(SAM_PARAMS)
sam-api:
	sam local start-api --env-vars infra/sam/env.json --parameter-overrides $(SAM_PARAMS)

# A local S3-compatible server (versitygw, from make tools) on S3_ADDR.
S3_ADDR ?= 127.0.0.1:7070
s3-local: versitygw
	S3_ADDR=$(S3_ADDR) S3_WEBHOOK=$(S3_WEBHOOK) infra/s3local.sh

# Benchmarks: parser, store, text index, catalog, and the end-to-end numbers
# (cold index, restart, search latency through an MCP client, RSS) on a
# generated 10k-note vault.
bench:
	$(GO) test -run '^$$' -bench . -timeout 60m ./shared/... ./indexer/... 2>&1 | tee bench.txt
	SHEAF_BENCH_VAULT=$(BENCH_VAULT) $(GO) test -run '^$$' -bench . -timeout 30m ./cmd/sheaf/ 2>&1 | tee -a bench.txt
	$(GO) test -run '^$$' -bench 'Init|WarmCall' -benchtime 200x ./functions/mcp/ 2>&1 | tee -a bench.txt
	SHEAF_BENCH_FIRST_NOTES=100000 $(GO) test -run '^$$' -bench FirstTrueAnswer -benchtime 1x -timeout 30m ./cmd/sheaf/ 2>&1 | tee -a bench.txt
	$(MAKE) bench-search

# search through the official TypeScript SDK client on the 10k-note vault
# the cmd/sheaf benchmarks use in BENCH_VAULT (generated first when missing:
# `sheaf gen` with the benchmarks' seed; its index in a temporary --state):
# p50/p95 of callTool, of the call without output-schema validation, and of
# the raw response, the server's and the client's CPU time per call, and the
# response size.
bench-search: build
	@test -d $(BENCH_VAULT) || $(BIN) gen $(BENCH_VAULT) --notes 10000 --seed 1
	@test -d infra/smoke/node_modules || npm --prefix infra/smoke install --no-audit --no-fund --loglevel=error
	SHEAF_BIN=$(CURDIR)/$(BIN) SHEAF_VAULT=$(BENCH_VAULT) node infra/smoke/bench-search.mjs 2>&1 | tee -a bench.txt

# Big vaults: a generated 100k-note vault (made once in BIG_VAULT, indexed
# once in BIG_VAULT-state): bulk ingest, the local restart, and the cold
# start of `sheaf serve --vault s3://` and of the MCP function under the
# Lambda emulator, tool by tool, as is and as a 1024 MB and a 2048 MB
# Lambda (a CPU quota: skipped where no cgroup can be made).
bench-big: build
	@test -d $(BIG_VAULT) || $(BIN) gen $(BIG_VAULT) --notes 100000
	@test -d $(BIG_VAULT)-state || $(BIN) index --vault $(BIG_VAULT) --state $(BIG_VAULT)-state --quiet
	SHEAF_BENCH_INGEST_NOTES=100000 $(GO) test -run '^$$' -bench 'BulkIngest/text=fts5/instances=1' -benchtime 1x -timeout 60m ./shared/s3events/ 2>&1 | tee bench-big.txt
	SHEAF_BENCH_VAULT=$(BIG_VAULT) SHEAF_BENCH_STATE=$(BIG_VAULT)-state $(GO) test -run '^$$' -bench 'Serve10k|CloudColdStart' -benchtime 1x -timeout 30m ./cmd/sheaf/ 2>&1 | tee -a bench-big.txt
	SHEAF_BENCH_VAULT=$(BIG_VAULT) SHEAF_BENCH_STATE=$(BIG_VAULT)-state $(GO) test -run '^$$' -bench LambdaColdStart -benchtime 1x -timeout 30m ./functions/mcp/ 2>&1 | tee -a bench-big.txt
	SHEAF_BENCH_LAMBDA_MEMORY=1024 SHEAF_BENCH_LAMBDA_CPU=0.58 SHEAF_BENCH_VAULT=$(BIG_VAULT) SHEAF_BENCH_STATE=$(BIG_VAULT)-state $(GO) test -run '^$$' -bench LambdaColdStart -benchtime 1x -timeout 30m ./functions/mcp/ 2>&1 | tee -a bench-big.txt
	SHEAF_BENCH_LAMBDA_MEMORY=2048 SHEAF_BENCH_LAMBDA_CPU=1.16 SHEAF_BENCH_VAULT=$(BIG_VAULT) SHEAF_BENCH_STATE=$(BIG_VAULT)-state $(GO) test -run '^$$' -bench LambdaColdStart -benchtime 1x -timeout 30m ./functions/mcp/ 2>&1 | tee -a bench-big.txt

# sheaf sync --wait of a generated 10k-note vault to versitygw, indexed as
# its events arrive by `sheaf reconcile --webhook` (one event a request),
# then by the indexer function under the Lambda emulator (SQS batches of
# 100, as deployed): files/s, bytes sent, time to searchable, and what a
# second sync sends (0).
bench-sync:
	SHEAF_BENCH_SYNC_NOTES=10000 $(GO) test -run '^$$' -bench SyncCloud -benchtime 1x -timeout 60m ./cmd/sheaf/ 2>&1 | tee bench-sync.txt
	SHEAF_BENCH_SYNC_NOTES=10000 $(GO) test -run '^$$' -bench SyncToLambdaIndexer -benchtime 1x -timeout 60m ./functions/ 2>&1 | tee -a bench-sync.txt

# Short fuzzing of every parser and path check.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse$$ -fuzztime 30s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzHeadingID -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzReadSnapshot -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzDecodeNote -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzDecodeBinary -fuzztime 30s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzParseSpans -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzPatchSection -fuzztime 30s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzMoveRewrite -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzCleanPath -fuzztime 30s ./shared/store/
	$(GO) test -run '^$$' -fuzz FuzzParseQuery -fuzztime 30s ./shared/textindex/
	$(GO) test -run '^$$' -fuzz FuzzStem -fuzztime 15s ./shared/textindex/
	$(GO) test -run '^$$' -fuzz FuzzSearch -fuzztime 15s ./shared/textindex/embedded/
	$(GO) test -run '^$$' -fuzz FuzzTermRanking -fuzztime 30s ./shared/textindex/embedded/
	$(GO) test -run '^$$' -fuzz FuzzAskFirstStage -fuzztime 30s ./shared/textindex/embedded/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 15s ./shared/store/s3/
	$(GO) test -run '^$$' -fuzz FuzzPath -fuzztime 15s ./shared/store/s3/
	$(GO) test -run '^$$' -fuzz FuzzQuote -fuzztime 15s ./shared/textindex/meili/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 15s ./shared/vectors/qdrant/
	$(GO) test -run '^$$' -fuzz FuzzDecodeEvent -fuzztime 15s ./shared/s3events/
	$(GO) test -run '^$$' -fuzz FuzzValidateGrounding -fuzztime 15s ./shared/core/
	$(GO) test -run '^$$' -fuzz FuzzPageEnd -fuzztime 15s ./shared/core/
	$(GO) test -run '^$$' -fuzz FuzzExplainArgs -fuzztime 15s ./shared/tools/
	$(GO) test -run '^$$' -fuzz FuzzEmbeddingsBody -fuzztime 15s ./infra/embedder/
	$(GO) test -run '^$$' -fuzz FuzzInvoke -fuzztime 15s ./functions/internal/lambdahttp/
	$(GO) test -run '^$$' -fuzz FuzzParseKeyFile -fuzztime 20s ./shared/auth/
	$(GO) test -run '^$$' -fuzz FuzzAuthenticateToken -fuzztime 15s ./shared/auth/
	$(GO) test -run '^$$' -fuzz FuzzFolders -fuzztime 20s ./shared/auth/
	$(GO) test -run '^$$' -fuzz FuzzVerifyToken -fuzztime 15s ./shared/auth/oauth/
	$(GO) test -run '^$$' -fuzz FuzzVerifyClaims -fuzztime 20s ./shared/auth/oauth/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 15s ./shared/ingest/
	$(GO) test -run '^$$' -fuzz FuzzNotePath -fuzztime 15s ./shared/ingest/
	# count-based: time-based fuzzing of the HTML converter stalls its worker here
	$(GO) test -run '^$$' -fuzz FuzzConvertHTML -fuzztime 20000x -parallel 1 ./shared/ingest/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 10s ./shared/auth/ssmkeys/
	$(GO) test -run '^$$' -fuzz FuzzCursorOpen -fuzztime 10s ./shared/auth/
	$(GO) test -run '^$$' -fuzz FuzzRegister -fuzztime 30s ./shared/auth/oauthserver/
	$(GO) test -run '^$$' -fuzz FuzzToken -fuzztime 30s ./shared/auth/oauthserver/
	$(GO) test -run '^$$' -fuzz FuzzMerge -fuzztime 60s ./shared/history/merge/
	$(GO) test -run '^$$' -fuzz FuzzDiff -fuzztime 20s ./shared/history/diff/
	$(GO) test -run '^$$' -fuzz FuzzDecodeRecord -fuzztime 15s ./shared/history/folder/

run:
	@echo "building and starting sheaf (the first build takes a minute); MCP at http://$(ADDR)/mcp"
	$(GO) run ./cmd/sheaf serve --vault $(VAULT) --http $(ADDR)

clean:
	rm -rf bin dist bench.txt bench-big.txt bench-sync.txt

include build.mk
