#!/usr/bin/env bash
# A local S3-compatible server for trying the cloud path without AWS:
# versitygw (installed by `make tools`) with its posix backend under
# S3_DIR, keys sheaf / sheaf-local-secret, on S3_ADDR (127.0.0.1:7070).
# S3_WEBHOOK, when set, receives S3 event notifications (for
# `sheaf reconcile --webhook`). Stops on Ctrl-C.
set -euo pipefail
S3_DIR=${S3_DIR:-${TMPDIR:-/tmp}/sheaf-s3}
S3_ADDR=${S3_ADDR:-127.0.0.1:7070}
mkdir -p "$S3_DIR"
args=(--port "$S3_ADDR" --region us-east-1 --quiet)
if [ -n "${S3_WEBHOOK:-}" ]; then
	args+=(--event-webhook-url "$S3_WEBHOOK")
fi
echo "S3 at http://$S3_ADDR (bucket folders in $S3_DIR); AWS_ACCESS_KEY_ID=sheaf AWS_SECRET_ACCESS_KEY=sheaf-local-secret" >&2
ROOT_ACCESS_KEY=sheaf ROOT_SECRET_KEY=sheaf-local-secret exec versitygw "${args[@]}" posix "$S3_DIR"
