//go:build sheaf_envcreds

package awsconfig

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Chain names the credential chain Load uses.
const Chain = "environment"

func load(_ context.Context, o Options) (aws.Config, error) {
	cfg := aws.Config{Region: o.Region, Credentials: o.Credentials}
	if cfg.Region == "" {
		cfg.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if cfg.Credentials == nil {
		cfg.Credentials = aws.NewCredentialsCache(envCredentials{})
	}
	if e := os.Getenv("AWS_ENDPOINT_URL"); e != "" {
		cfg.BaseEndpoint = aws.String(e)
	}
	return cfg, nil
}

// envCredentials reads the credentials Lambda sets in the environment.
type envCredentials struct{}

// Retrieve implements aws.CredentialsProvider.
func (envCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	id, secret := firstEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"), firstEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	if id == "" || secret == "" {
		return aws.Credentials{}, errors.New("no AWS credentials: this build (sheaf_envcreds) reads only AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"), Source: "EnvironmentVariables"}, nil
}

// firstEnv returns the first of the variables that is set.
func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
