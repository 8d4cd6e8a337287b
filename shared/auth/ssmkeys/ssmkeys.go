// Package ssmkeys reads Sheaf's keys file from an AWS Systems Manager
// Parameter Store parameter (a SecureString, decrypted with the
// parameter's KMS key), for deployments that keep secrets out of the
// bucket. It makes one call, GetParameter; the parameter is written with
// the AWS tools (aws ssm put-parameter --type SecureString --value
// file://keys.json), so the source is read-only.
package ssmkeys

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// Scheme is the keys URL scheme: ssm:/sheaf/prod/keys.
const Scheme = "ssm"

// API is the one call of the SSM client this package makes.
type API interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// Source is a keys file in an SSM parameter.
type Source struct {
	Client API
	Name   string // the parameter's name, e.g. /sheaf/prod/keys
}

var _ auth.KeySource = Source{}

// namePattern is SSM's rule for parameter names (letters, digits and
// . - _ /, at most 2048 characters), which also keeps URLs honest.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-/]+$`)

// maxName is SSM's limit on a parameter name.
const maxName = 2048

// URL is a parsed keys URL.
type URL struct {
	Name     string
	Region   string // "" for the default chain (AWS_REGION)
	Endpoint string // "" for AWS; a base URL for an SSM-compatible server
}

// IsURL reports whether s names an SSM parameter.
func IsURL(s string) bool { return strings.HasPrefix(s, Scheme+":") }

// ParseURL reads ssm:NAME or ssm:/PATH/NAME, with optional ?region= and
// ?endpoint= (for an SSM-compatible test server). Other parameters are
// refused.
func ParseURL(s string) (URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != Scheme {
		return URL{}, fmt.Errorf("ssm keys: %q is not ssm:NAME", s)
	}
	name := u.Opaque
	if name == "" {
		name = u.Path
	}
	if u.Host != "" || u.User != nil || u.Fragment != "" {
		return URL{}, fmt.Errorf("ssm keys: %q: write ssm:/path/name (no host, user or fragment)", s)
	}
	if len(name) > maxName || !namePattern.MatchString(name) || strings.Contains(name, "//") {
		return URL{}, fmt.Errorf("ssm keys: %q is not a parameter name (letters, digits, . - _ /)", name)
	}
	out := URL{Name: name}
	for k, vs := range u.Query() {
		switch k {
		case "region":
			out.Region = vs[0]
		case "endpoint":
			e, err := url.Parse(vs[0])
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return URL{}, fmt.Errorf("ssm keys: endpoint %q is not an http(s) URL", vs[0])
			}
			out.Endpoint = vs[0]
		default:
			return URL{}, fmt.Errorf("ssm keys: unknown parameter %q (region, endpoint)", k)
		}
	}
	return out, nil
}

// Open returns a Source for u with the default AWS credential chain. It
// makes no network call.
func Open(ctx context.Context, u URL) (Source, error) {
	var opts []func(*config.LoadOptions) error
	if u.Region != "" {
		opts = append(opts, config.WithRegion(u.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Source{}, fmt.Errorf("ssm keys: AWS configuration: %w", err)
	}
	client := ssm.NewFromConfig(cfg, func(o *ssm.Options) {
		if u.Endpoint != "" {
			o.BaseEndpoint = aws.String(u.Endpoint)
		}
	})
	return Source{Client: client, Name: u.Name}, nil
}

// String implements auth.KeySource.
func (s Source) String() string { return Scheme + ":" + s.Name }

// Load implements auth.KeySource: the parameter's decrypted value; found
// is false when the parameter does not exist.
func (s Source) Load(ctx context.Context) ([]byte, bool, error) {
	out, err := s.Client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(s.Name), WithDecryption: aws.Bool(true)})
	var nf *types.ParameterNotFound
	switch {
	case errors.As(err, &nf):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", s, err)
	case out.Parameter == nil || out.Parameter.Value == nil:
		return nil, false, fmt.Errorf("reading %s: the answer has no value", s)
	case len(*out.Parameter.Value) > auth.MaxKeysFile:
		return nil, false, fmt.Errorf("reading %s: larger than %d bytes", s, auth.MaxKeysFile)
	}
	return []byte(*out.Parameter.Value), true, nil
}
