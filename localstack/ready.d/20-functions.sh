#!/usr/bin/env bash
# LocalStack ready hook 2/2: the MCP and indexer functions from the zips
# that `make lambda-zips` builds (mounted at /opt/sheaf/lambda), the MCP
# function's URL, the indexer's SQS event source (partial batch failures)
# and its hourly reconcile; then the sample vault is uploaded (when
# mounted) and reconciled once.
set -euo pipefail

bucket=${SHEAF_BUCKET:-sheaf-vault}
prefix=${SHEAF_PREFIX:-vault}
arch=${SHEAF_ARCH:-x86_64}
zips=${SHEAF_LAMBDA_DIR:-/opt/sheaf/lambda}
memory=${SHEAF_FUNCTION_MEMORY:-1024} # MB, as the template's FunctionMemory
role=arn:aws:iam::000000000000:role/sheaf-lambda

for zip in mcp indexer; do
  if [[ ! -f $zips/$zip.zip ]]; then
    echo "sheaf: $zips/$zip.zip is missing: run 'make lambda-zips' first" >&2
    exit 1
  fi
done

# Inside LocalStack's Lambda containers, LocalStack itself is "localstack"
# on the compose network.
export vault_url="s3://$bucket/$prefix?endpoint=http://localstack:4566&path_style=true&region=${AWS_DEFAULT_REGION:-us-east-1}"

# env_json [TOKEN] prints a function's environment as the Lambda API takes
# it (python3 writes the JSON: every LocalStack image has it).
env_json() {
  python3 -c 'import json, os, sys
names = {"SHEAF_VAULT": "vault_url", "SHEAF_SEARCH": "SHEAF_MEILI_URL", "SHEAF_SEARCH_KEY": "SHEAF_MEILI_KEY",
         "SHEAF_VECTORS": "SHEAF_QDRANT_URL", "SHEAF_EMBED_BASE_URL": "SHEAF_EMBED_BASE_URL",
         "SHEAF_EMBED_MODEL": "SHEAF_EMBED_MODEL"}
env = {k: os.environ.get(v, "") for k, v in names.items()}
env["SHEAF_MAX_ATTACHMENT_BYTES"] = "2097152"
env["SHEAF_TOKEN"] = sys.argv[1] if len(sys.argv) > 1 else ""
print(json.dumps({"Variables": {k: v for k, v in env.items() if v}}))' "$@"
}

# function_up NAME ZIP TIMEOUT ENVIRONMENT creates or updates one function.
function_up() {
  local name=$1 zip=$2 timeout=$3 environment=$4
  if awslocal lambda get-function --function-name "$name" >/dev/null 2>&1; then
    awslocal lambda update-function-code --function-name "$name" --zip-file "fileb://$zip" >/dev/null
    awslocal lambda wait function-updated-v2 --function-name "$name"
    awslocal lambda update-function-configuration --function-name "$name" \
      --timeout "$timeout" --memory-size "$memory" --environment "$environment" >/dev/null
  else
    awslocal lambda create-function --function-name "$name" --runtime provided.al2023 \
      --handler bootstrap --architectures "$arch" --role "$role" --memory-size "$memory" \
      --timeout "$timeout" --zip-file "fileb://$zip" --environment "$environment" >/dev/null
  fi
  awslocal lambda wait function-active-v2 --function-name "$name"
}

function_up sheaf-mcp "$zips/mcp.zip" 30 "$(env_json "${SHEAF_TOKEN:?SHEAF_TOKEN must be set}")"
function_up sheaf-indexer "$zips/indexer.zip" 300 "$(env_json)"

mcp_url=$(awslocal lambda get-function-url-config --function-name sheaf-mcp --query FunctionUrl --output text 2>/dev/null ||
  awslocal lambda create-function-url-config --function-name sheaf-mcp --auth-type NONE \
    --query FunctionUrl --output text)

queue_arn=$(awslocal sqs get-queue-attributes \
  --queue-url "$(awslocal sqs get-queue-url --queue-name "$bucket-events" --query QueueUrl --output text)" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)
mappings=$(awslocal lambda list-event-source-mappings --function-name sheaf-indexer \
  --event-source-arn "$queue_arn" --query 'length(EventSourceMappings)' --output text)
if [[ $mappings == 0 ]]; then
  awslocal lambda create-event-source-mapping --function-name sheaf-indexer \
    --event-source-arn "$queue_arn" --batch-size 10 --maximum-batching-window-in-seconds 1 \
    --function-response-types ReportBatchItemFailures >/dev/null
fi

indexer_arn=$(awslocal lambda get-function --function-name sheaf-indexer \
  --query Configuration.FunctionArn --output text)
rule_arn=$(awslocal events put-rule --name sheaf-reconcile --schedule-expression 'rate(1 hour)' \
  --query RuleArn --output text)
awslocal lambda add-permission --function-name sheaf-indexer --statement-id sheaf-reconcile \
  --action lambda:InvokeFunction --principal events.amazonaws.com --source-arn "$rule_arn" >/dev/null 2>&1 || true
targets=$(python3 -c 'import json, sys
print(json.dumps([{"Id": "indexer", "Arn": sys.argv[1], "Input": json.dumps({"reconcile": True})}]))' "$indexer_arn")
awslocal events put-targets --rule sheaf-reconcile --targets "$targets" >/dev/null

if [[ -d /opt/sheaf/sample-vault ]]; then
  awslocal s3 cp --recursive --only-show-errors /opt/sheaf/sample-vault "s3://$bucket/$prefix/"
fi
out=$(mktemp)
awslocal lambda invoke --function-name sheaf-indexer --cli-binary-format raw-in-base64-out \
  --payload '{"reconcile": true}' "$out" >/dev/null
echo "sheaf: first reconcile: $(cat "$out")"
rm -f "$out"

echo "sheaf: MCP endpoint ${mcp_url%/}/mcp (Authorization: Bearer \$SHEAF_TOKEN)"
