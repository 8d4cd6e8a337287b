//go:build sheaf_envcreds

package awsconfig

import (
	"context"
	"testing"
)

func TestEnvOnly(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	cfg, err := Load(ctx, Options{})
	if err != nil || cfg.Region != "eu-west-3" {
		t.Fatalf("Load: %+v %v", cfg.Region, err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err == nil {
		t.Error("credentials without any in the environment")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	cfg, _ = Load(ctx, Options{Region: "us-west-2"})
	c, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || c.AccessKeyID != "AKID" || c.SecretAccessKey != "secret" || c.SessionToken != "token" || cfg.Region != "us-west-2" {
		t.Errorf("Retrieve: %+v %v, region %s", c, err, cfg.Region)
	}
}
