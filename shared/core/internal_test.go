package core

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// captureLog sends the default logger to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestInternalErrorsSayOnlyAReference: an unknown failure reaches the
// caller as kind internal with a correlation id and nothing of the
// failure; the log has the failure under the same id.
func TestInternalErrorsSayOnlyAReference(t *testing.T) {
	logged := captureLog(t)
	cause := fmt.Errorf("updating the embeddings: %w", errors.New("post http://10.0.0.1:9/v1: dial tcp 10.0.0.1:9: connection refused"))
	for name, fail := range map[string]func() error{
		"toError": func() error { return toError(cause) },
		"llm":     func() error { return llmError(cause) },
	} {
		logged.Reset()
		te := toError(fail())
		ref, _ := te.Fields["correlation_id"].(string)
		if te.Kind != KindInternal || len(ref) != 12 {
			t.Fatalf("%s: %v %v", name, te.Kind, te.Fields)
		}
		for _, leak := range []string{"http", "10.0.0.1", "dial", "embeddings", "refused"} {
			if strings.Contains(te.Message, leak) {
				t.Errorf("%s: the message shows %q: %s", name, leak, te.Message)
			}
		}
		if !strings.Contains(te.Message, ref) {
			t.Errorf("%s: the message does not give the reference: %s", name, te.Message)
		}
		if log := logged.String(); !strings.Contains(log, ref) || !strings.Contains(log, "http://10.0.0.1:9/v1") {
			t.Errorf("%s: the log lacks the reference or the detail: %s", name, log)
		}
	}
	if a, b := toError(cause).Fields["correlation_id"], toError(cause).Fields["correlation_id"]; a == b {
		t.Errorf("two failures share the reference %v", a)
	}
}

// TestProviderRateLimitWithoutItsText: a provider's 429 keeps its kind and
// hint, not the provider's message.
func TestProviderRateLimitWithoutItsText(t *testing.T) {
	captureLog(t)
	err := llmError(fmt.Errorf("chat: %w", &llm.ProviderError{Status: 429, Err: errors.New("slow down at https://api.example/v1")}))
	te := toError(err)
	if te.Kind != KindRateLimited || te.Fields["retry_after_ms"] == nil || strings.Contains(te.Message, "http") {
		t.Errorf("%v %v %q", te.Kind, te.Fields, te.Message)
	}
}

// TestMissingStorageSaysWhat: a vault whose bucket does not exist is the
// deployment's configuration: the caller is told which bucket, without
// the chain.
func TestMissingStorageSaysWhat(t *testing.T) {
	err := fmt.Errorf("s3: stat \"a.md\": \"nb\": %w (%w)", errors.New("s3: bucket does not exist"), &store.MissingError{What: "bucket", Name: "nb"})
	te := toError(err)
	if te.Kind != KindInternal || te.Fields["reason"] != "storage-missing" || !strings.Contains(te.Message, `bucket "nb"`) || strings.Contains(te.Message, "s3:") {
		t.Errorf("%v %v %q", te.Kind, te.Fields, te.Message)
	}
}
