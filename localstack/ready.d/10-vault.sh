#!/usr/bin/env bash
# LocalStack ready hook 1/2: the vault bucket (versioned), the queue of its note events
# with a dead-letter queue (5 receives), and the bucket notifications
# (ObjectCreated/ObjectRemoved of *.md under the vault prefix), as
# template.yaml declares them. Idempotent: re-running keeps what exists.
set -euo pipefail

bucket=${SHEAF_BUCKET:-sheaf-vault}
prefix=${SHEAF_PREFIX:-vault}
region=${AWS_DEFAULT_REGION:-us-east-1}

awslocal s3api head-bucket --bucket "$bucket" 2>/dev/null ||
  awslocal s3api create-bucket --bucket "$bucket" --region "$region" >/dev/null
# Note history reads the bucket's object versions (template.yaml: VersioningConfiguration).
awslocal s3api put-bucket-versioning --bucket "$bucket" \
  --versioning-configuration Status=Enabled

dlq_url=$(awslocal sqs create-queue --queue-name "$bucket-events-dlq" \
  --attributes MessageRetentionPeriod=1209600 --query QueueUrl --output text)
dlq_arn=$(awslocal sqs get-queue-attributes --queue-url "$dlq_url" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)

# JSON is written by python3, which every LocalStack image has.
attributes=$(python3 -c 'import json, sys
redrive = {"deadLetterTargetArn": sys.argv[1], "maxReceiveCount": "5"}
print(json.dumps({"VisibilityTimeout": "1800", "RedrivePolicy": json.dumps(redrive)}))' "$dlq_arn")
queue_url=$(awslocal sqs create-queue --queue-name "$bucket-events" \
  --attributes "$attributes" --query QueueUrl --output text)
queue_arn=$(awslocal sqs get-queue-attributes --queue-url "$queue_url" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)

notifications=$(python3 -c 'import json, sys
queue, prefix = sys.argv[1:3]
rules = [{"Name": "prefix", "Value": prefix}, {"Name": "suffix", "Value": ".md"}]
print(json.dumps({"QueueConfigurations": [
    {"QueueArn": queue, "Events": [event], "Filter": {"Key": {"FilterRules": rules}}}
    for event in ("s3:ObjectCreated:*", "s3:ObjectRemoved:*")]}))' "$queue_arn" "$prefix/")
awslocal s3api put-bucket-notification-configuration --bucket "$bucket" \
  --notification-configuration "$notifications"

echo "sheaf: bucket $bucket (prefix $prefix/) notifies $queue_arn (dead letters: $dlq_arn)"
