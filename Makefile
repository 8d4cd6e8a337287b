# Sheaf's build. `make test` is what CI runs (through .ci/run).
GO      ?= go
BIN     ?= bin/sheaf
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
VAULT   ?= infra/sample-vault
ADDR    ?= 127.0.0.1:8787
BENCH_VAULT ?= /tmp/sheaf-bench-10k

.PHONY: build test unit race smoke vet bench fuzz run clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sheaf

# vet + gofmt, every Go test (conformance over stdio and HTTP included), then
# the TypeScript SDK smoke test against the built binary.
test: vet unit race smoke

vet:
	@test -z "$$(gofmt -l . | grep -v '^infra/smoke/node_modules' )" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -count=1 -timeout 20m ./...

# The race detector over the concurrent parts (indexer, catalog, stores, tools).
race:
	$(GO) test -race -short -count=1 -timeout 15m ./indexer/ ./shared/vault/ ./shared/store/... ./shared/tools/ ./shared/textindex/... ./shared/vectors/... ./shared/embed/ ./shared/auth/ ./shared/llm/...

smoke: build
	test -d infra/smoke/node_modules || (cd infra/smoke && npm install --no-audit --no-fund)
	SHEAF_BIN=$(CURDIR)/$(BIN) infra/smoke/run.sh

# Benchmarks: parser, store, text index, catalog, and the end-to-end numbers
# (cold index, restart, search latency through an MCP client, RSS) on a
# generated 10k-note vault.
bench:
	$(GO) test -run '^$$' -bench . -timeout 60m ./shared/... ./indexer/... 2>&1 | tee bench.txt
	SHEAF_BENCH_VAULT=$(BENCH_VAULT) $(GO) test -run '^$$' -bench . -timeout 30m ./cmd/sheaf/ 2>&1 | tee -a bench.txt

# Short fuzzing of every parser and path check.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse$$ -fuzztime 30s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzHeadingID -fuzztime 15s ./shared/vault/
	$(GO) test -run '^$$' -fuzz FuzzCleanPath -fuzztime 30s ./shared/store/
	$(GO) test -run '^$$' -fuzz FuzzParseQuery -fuzztime 30s ./shared/textindex/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 15s ./shared/store/s3/
	$(GO) test -run '^$$' -fuzz FuzzPath -fuzztime 15s ./shared/store/s3/
	$(GO) test -run '^$$' -fuzz FuzzQuote -fuzztime 15s ./shared/textindex/meili/
	$(GO) test -run '^$$' -fuzz FuzzParseURL -fuzztime 15s ./shared/vectors/qdrant/
	$(GO) test -run '^$$' -fuzz FuzzDecodeEvent -fuzztime 15s ./indexer/
	$(GO) test -run '^$$' -fuzz FuzzValidateGrounding -fuzztime 15s ./shared/tools/
	$(GO) test -run '^$$' -fuzz FuzzEmbeddingsBody -fuzztime 15s ./infra/embedder/

run:
	$(GO) run ./cmd/sheaf serve --vault $(VAULT) --http $(ADDR)

clean:
	rm -rf bin bench.txt

include build.mk
