package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// TestOpenRefusesFlagsWithAKind: a flag that means nothing for the vault's
// site is refused with the stable kind unsupported and what to do, never
// ignored; so is a vault of a scheme this program does not link (this test
// binary, like the Lambda functions, links no folder site).
func TestOpenRefusesFlagsWithAKind(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	meili := "http://127.0.0.1:7700"
	for _, tc := range []struct {
		c    Config
		flag string
	}{
		{Config{Vault: "./notes", Search: meili}, "--vault"},
		{Config{Vault: "s3://b/p", Search: "embedded"}, "--search"},
		{Config{Vault: "s3://b/p"}, "--search"},
		{Config{Vault: "s3://b/p", Search: meili, EmbedBaseURL: "http://127.0.0.1:1/v1", EmbedModel: "m", Vectors: "embedded"}, "--vectors"},
		{Config{Vault: "s3://b/p", Search: meili, State: t.TempDir()}, "--state"},
		{Config{Vault: "s3://b/p", Search: meili, NoWatch: true}, "--no-watch"},
	} {
		o, err := Open(t.Context(), &tc.c, quiet)
		var ce *core.Error
		if err == nil {
			o.Close()
		}
		if !errors.As(err, &ce) || ce.Kind != core.KindUnsupported || !strings.HasPrefix(ce.Message, tc.flag+" ") {
			t.Errorf("%+v: %v, want an unsupported %s", tc.c, err, tc.flag)
		}
	}
}
