// Package ssmkeys reads Sheaf's keys file from an AWS Systems Manager
// Parameter Store parameter (a SecureString, decrypted with the
// parameter's KMS key), for deployments that keep secrets out of the
// bucket. It makes one call, GetParameter; the parameter is written with
// the AWS tools (aws ssm put-parameter --type SecureString --value
// file://keys.json), so the source is read-only. The call is made over
// HTTPS in SSM's JSON protocol, signed with the SDK's SigV4 signer, not
// through the SDK's SSM client: that client is 2 MB of code and tables
// built at start-up, which the MCP Lambda (the user of ssm: keys) does
// not carry.
package ssmkeys

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/internal/awsconfig"
)

// Scheme is the keys URL scheme: ssm:/sheaf/prod/keys.
const Scheme = "ssm"

// API is the one SSM call this package makes: GetParameter with
// decryption. It returns ErrNotFound when the parameter does not exist.
type API interface {
	GetParameter(ctx context.Context, name string) (string, error)
}

// ErrNotFound is SSM's ParameterNotFound.
var ErrNotFound = errors.New("ssm: parameter not found")

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
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{Region: u.Region})
	if err != nil {
		return Source{}, fmt.Errorf("ssm keys: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return Source{}, errors.New("ssm keys: no AWS region: set AWS_REGION or add ?region= to the ssm: URL")
	}
	endpoint := u.Endpoint
	for _, e := range []string{os.Getenv("AWS_ENDPOINT_URL_SSM"), aws.ToString(cfg.BaseEndpoint)} {
		if endpoint == "" {
			endpoint = e
		}
	}
	if endpoint == "" {
		endpoint = defaultEndpoint(cfg.Region)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return Source{Client: &Client{HTTP: hc, Credentials: cfg.Credentials, Region: cfg.Region, Endpoint: endpoint}, Name: u.Name}, nil
}

// defaultEndpoint is SSM's regional endpoint.
func defaultEndpoint(region string) string {
	host := "ssm." + region + ".amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		host += ".cn"
	}
	return "https://" + host
}

// Client is an SSM client that makes one call, GetParameter, in the AWS
// JSON 1.1 protocol, signed with SigV4.
type Client struct {
	HTTP        aws.HTTPClient
	Credentials aws.CredentialsProvider
	Region      string
	Endpoint    string // base URL, e.g. https://ssm.eu-west-1.amazonaws.com
}

// maxAnswer bounds the answer read: the value (at most auth.MaxKeysFile,
// escaped in JSON) and the parameter's metadata.
const maxAnswer = 2*auth.MaxKeysFile + 64<<10

// GetParameter implements API: the parameter's decrypted value.
func (c *Client) GetParameter(ctx context.Context, name string) (string, error) {
	body, err := json.Marshal(struct {
		Name           string
		WithDecryption bool
	}{name, true})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.Endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
	if c.Credentials == nil {
		return "", errors.New("no AWS credentials")
	}
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "ssm", c.Region, time.Now()); err != nil {
		return "", err
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxAnswer {
		return "", fmt.Errorf("the answer is larger than %d bytes", maxAnswer)
	}
	if res.StatusCode != http.StatusOK {
		return "", apiError(res, data)
	}
	var out struct {
		Parameter *struct{ Value *string }
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", fmt.Errorf("reading the answer: %w", err)
	}
	if out.Parameter == nil || out.Parameter.Value == nil {
		return "", errors.New("the answer has no value")
	}
	return *out.Parameter.Value, nil
}

// apiError reads an AWS JSON error answer: its type (from the header or
// the body's __type, without its namespace) and message.
func apiError(res *http.Response, data []byte) error {
	var e struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		MessageC string `json:"Message"`
	}
	_ = json.Unmarshal(data, &e)
	kind := res.Header.Get("X-Amzn-Errortype")
	if kind == "" {
		kind = e.Type
	}
	kind, _, _ = strings.Cut(kind, ":")
	if i := strings.LastIndexByte(kind, '#'); i >= 0 {
		kind = kind[i+1:]
	}
	if kind == "ParameterNotFound" {
		return ErrNotFound
	}
	msg := e.Message
	if msg == "" {
		msg = e.MessageC
	}
	if kind == "" {
		kind = res.Status
	}
	return fmt.Errorf("SSM GetParameter: %s: %s", kind, msg)
}

// String implements auth.KeySource.
func (s Source) String() string { return Scheme + ":" + s.Name }

// Load implements auth.KeySource: the parameter's decrypted value; found
// is false when the parameter does not exist.
func (s Source) Load(ctx context.Context) ([]byte, bool, error) {
	v, err := s.Client.GetParameter(ctx, s.Name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", s, err)
	case len(v) > auth.MaxKeysFile:
		return nil, false, fmt.Errorf("reading %s: larger than %d bytes", s, auth.MaxKeysFile)
	}
	return []byte(v), true, nil
}
