# Lambda builds, included from the Makefile (at its end). `sam build` runs
# `make build-McpFunction` and `make build-IndexerFunction` with
# ARTIFACTS_DIR set (template.yaml: Metadata BuildMethod: makefile); SAM does
# not pass the architecture, so set LAMBDA_ARCH to the template's
# Architecture parameter (arm64, the default, or x86_64).
GO             ?= go
LAMBDA_ARCH    ?= arm64
LAMBDA_GOARCH  := $(if $(filter x86_64 amd64,$(LAMBDA_ARCH)),amd64,arm64)
LAMBDA_LDFLAGS ?= -s -w -X main.version=$(or $(VERSION),dev)
LAMBDA_OUT     ?= bin/lambda
# Build tags of the functions. lambda.norpc drops the Go 1.x RPC runtime.
# Add sheaf_noqdrant for a deployment without vectors (no semantic tools, or
# a vector index reached some other way): it leaves out the Qdrant gRPC client
# (3.7 MB of the MCP bootstrap, 3.5 MB of the indexer's, arm64); such a build refuses
# SHEAF_VECTORS=qdrant://... with a clear error. Comma- or space-separated:
#   make build-McpFunction LAMBDA_TAGS=lambda.norpc,sheaf_noqdrant
LAMBDA_TAGS    ?= lambda.norpc
# Always added: sheaf_envcreds reads AWS credentials and region from the
# environment only, where Lambda puts them (shared/internal/awsconfig),
# leaving out the SDK's config package and its STS/SSO clients (~2.4 MB);
# grpcnotrace leaves out gRPC's debug trace pages (x/net/trace).
LAMBDA_FIXED_TAGS := sheaf_envcreds grpcnotrace
# go build wants one comma-separated word.
LAMBDA_SPACE   := $(subst ,, )
LAMBDA_COMMA   := ,
LAMBDA_TAGLIST  = $(subst $(LAMBDA_SPACE),$(LAMBDA_COMMA),$(strip $(LAMBDA_TAGS) $(LAMBDA_FIXED_TAGS)))
ARTIFACTS_DIR  ?= $(LAMBDA_OUT)
# A static linux binary named bootstrap, for the provided.al2023 runtime.
LAMBDA_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_GOARCH) $(GO) build -tags $(LAMBDA_TAGLIST) -trimpath -ldflags '$(LAMBDA_LDFLAGS)'

.PHONY: build-McpFunction build-IndexerFunction lambda-zips

build-McpFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/mcp

build-IndexerFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/indexer

# The two functions zipped for LocalStack (infra/docker-compose.yml mounts
# bin/lambda): bin/lambda/mcp.zip and bin/lambda/indexer.zip, each holding
# a bootstrap at its root.
lambda-zips:
	rm -rf $(LAMBDA_OUT)/mcp $(LAMBDA_OUT)/indexer $(LAMBDA_OUT)/mcp.zip $(LAMBDA_OUT)/indexer.zip
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) build-McpFunction ARTIFACTS_DIR=$(LAMBDA_OUT)/mcp
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) build-IndexerFunction ARTIFACTS_DIR=$(LAMBDA_OUT)/indexer
	cd $(LAMBDA_OUT)/mcp && zip -X -q ../mcp.zip bootstrap
	cd $(LAMBDA_OUT)/indexer && zip -X -q ../indexer.zip bootstrap
