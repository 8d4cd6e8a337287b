// Package awsconfig loads the AWS configuration of Sheaf's AWS adapters
// (the s3 store, ssm: keys). By default it is the SDK's whole default chain:
// environment, shared config and credentials files, SSO, web identity,
// container and instance roles. Built with the sheaf_envcreds tag (the
// Lambda functions: see LAMBDA_TAGS in build.mk) it reads the environment
// only, which is where Lambda puts the function's credentials and region,
// and leaves out the SDK's config package and the STS, SSO and sign-in
// clients it links (about 1.5 MB of a bootstrap).
package awsconfig

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Options are what the adapters set on top of the chain.
type Options struct {
	Region      string                  // "" for the chain's (AWS_REGION)
	Credentials aws.CredentialsProvider // nil for the chain's
}

// Load returns the configuration: see the package comment. It makes no
// network call; credentials are resolved on first use.
func Load(ctx context.Context, o Options) (aws.Config, error) { return load(ctx, o) }
