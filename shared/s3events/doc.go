// Package s3events is the indexer's event door: it decodes what an object
// store says changed (S3 notifications, directly or through SQS, SNS or
// EventBridge, and the notifications S3-compatible servers POST to a
// webhook) into changed keys, and hands them to the pipeline through
// indexer.Indexer.ApplyChanges. The indexer Lambda (functions/indexer)
// serves Handle; `sheaf reconcile --webhook` serves Webhook.
package s3events
