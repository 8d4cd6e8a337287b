package s3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/shared/internal/awsconfig"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Scheme is the URL scheme of S3 vaults.
const Scheme = "s3"

// Config says where a vault is and how to reach it.
type Config struct {
	Bucket    string
	Prefix    string // key prefix of the vault, without slashes at the ends; "" for the whole bucket
	Endpoint  string // base URL of an S3-compatible server; "" for AWS
	Region    string // "" for the default chain (AWS_REGION, profile); us-east-1 with an Endpoint
	PathStyle bool   // address buckets in the path, not the host name
	AccessKey string // "" for the default AWS credential chain
	SecretKey string
	// Timeout bounds the wait for a response's headers and for a
	// connection, per attempt (the SDK retries up to 3 times); 0 is
	// DefaultTimeout. Bodies are not bounded: large objects take their time.
	Timeout time.Duration
}

// DefaultTimeout is Config.Timeout's default: a server that accepts
// connections but never answers fails a call within about 3 times this.
const DefaultTimeout = 10 * time.Second

// ParseURL reads a vault URL:
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&path_style=BOOL&region=REGION&timeout=DURATION]
//
// endpoint is the http(s) base URL of an S3-compatible server, path_style
// (default false) addresses the bucket in the path, as such servers usually
// need, region overrides the default chain's, and timeout (a Go duration
// such as "5s") is Config.Timeout. Other parameters,
// credentials in the URL and prefixes that are no clean folder path are
// refused. Credentials come from the default AWS chain (environment,
// profile, role).
func ParseURL(u string) (Config, error) {
	pu, err := url.Parse(u)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a secret
		}
		return Config{}, fmt.Errorf("s3: vault URL does not parse: %w", err)
	}
	// Errors show the URL without its user info and query, which may hold secrets.
	shown := (&url.URL{Scheme: pu.Scheme, Host: pu.Host, Path: pu.Path}).String()
	bad := func(why string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("s3: vault URL %q: %s", shown, fmt.Sprintf(why, args...))
	}
	switch {
	case pu.Scheme != Scheme:
		return bad("scheme is not %s://", Scheme)
	case pu.Opaque != "":
		return bad("want %s://bucket/prefix", Scheme)
	case pu.User != nil:
		return bad("credentials do not belong in the URL; use the AWS environment or profile")
	case pu.Fragment != "" || strings.HasSuffix(u, "#"):
		return bad("has a fragment")
	case pu.Port() != "":
		return bad("has a port; put the server in endpoint=")
	}
	c := Config{Bucket: pu.Host}
	if err := checkBucket(c.Bucket); err != nil {
		return bad("%v", err)
	}
	if c.Prefix, err = store.CleanDir(strings.TrimPrefix(pu.Path, "/")); err != nil {
		return bad("prefix: %v", err)
	}
	q, err := url.ParseQuery(pu.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	for name, vals := range q {
		if len(vals) != 1 {
			return bad("%s given %d times", name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			if err := checkEndpoint(v); err != nil {
				return bad("endpoint: %v", err)
			}
			c.Endpoint = v
		case "region":
			if v == "" || len(v) > 64 || strings.ContainsFunc(v, func(r rune) bool {
				return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-')
			}) {
				return bad("region %q is not a region name", v)
			}
			c.Region = v
		case "path_style":
			if c.PathStyle, err = strconv.ParseBool(v); err != nil {
				return bad("path_style %q is not a boolean", v)
			}
		case "timeout":
			if c.Timeout, err = time.ParseDuration(v); err != nil || c.Timeout <= 0 {
				return bad("timeout %q is not a positive duration", v)
			}
		default:
			return bad("unknown parameter %q (known: endpoint, path_style, region, timeout)", name)
		}
	}
	return c, nil
}

// URL returns the vault URL of c, without its keys; ParseURL reads it back.
func (c Config) URL() string {
	q := url.Values{}
	if c.Endpoint != "" {
		q.Set("endpoint", c.Endpoint)
	}
	if c.PathStyle {
		q.Set("path_style", "true")
	}
	if c.Region != "" {
		q.Set("region", c.Region)
	}
	if c.Timeout > 0 {
		q.Set("timeout", c.Timeout.String())
	}
	u := url.URL{Scheme: Scheme, Host: c.Bucket, RawQuery: q.Encode()}
	if p := strings.Trim(c.Prefix, "/"); p != "" {
		u.Path = "/" + p
	}
	return u.String()
}

// checkBucket allows the characters of AWS bucket names, legacy ones too.
func checkBucket(b string) error {
	if b == "" {
		return errors.New("no bucket")
	}
	if len(b) > 255 || strings.ContainsFunc(b, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == '_')
	}) {
		return fmt.Errorf("bucket %q is not a bucket name", b)
	}
	return nil
}

func checkEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	e = u.Redacted()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http(s) URL", e)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q has no host", e)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q has credentials, a query or a fragment", e)
	}
	return nil
}

// Open returns a store for c. It does no I/O beyond reading the AWS
// environment and profile files: a missing bucket or bad credentials show
// on the first call. The client uses the SDK's standard retryer; each
// attempt waits at most c.Timeout for a connection and for the response's
// headers, so an unresponsive server fails calls instead of hanging them. With an
// Endpoint, request checksums are sent and checked only where S3 requires
// them, which S3-compatible servers support more widely.
func Open(ctx context.Context, c Config) (*Store, error) {
	if err := checkBucket(c.Bucket); err != nil {
		return nil, fmt.Errorf("s3: open: %w", err)
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		return nil, errors.New("s3: open: give both the access key and the secret key, or neither")
	}
	if c.Endpoint != "" {
		if err := checkEndpoint(c.Endpoint); err != nil {
			return nil, fmt.Errorf("s3: open: endpoint: %w", err)
		}
	}
	o := awsconfig.Options{Region: c.Region}
	if c.AccessKey != "" {
		o.Credentials = credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, "")
	}
	cfg, err := awsconfig.Load(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("s3: open: %w", err)
	}
	if cfg.Region == "" {
		if c.Endpoint == "" {
			return nil, errors.New("s3: open: no region: set region= in the URL or AWS_REGION")
		}
		cfg.Region = "us-east-1"
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = timeout }).
			WithTransportOptions(func(tr *http.Transport) {
				tr.ResponseHeaderTimeout = timeout
				tr.TLSHandshakeTimeout = timeout
			})
		o.UsePathStyle = c.PathStyle
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	return New(client, c.Bucket, c.Prefix), nil
}
