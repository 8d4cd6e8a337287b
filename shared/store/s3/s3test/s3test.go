// Package s3test starts a real S3-compatible server, versitygw v1.8.0 with
// its posix backend, for tests.
//
// The binary is found in $SHEAF_VERSITYGW, then on PATH, then in
// $(go env GOPATH)/bin; install it with
//
//	go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
//
// When it is missing Start skips the test, or fails it when the environment
// variable CI is non-empty.
//
// The gateway runs as
//
//	ROOT_ACCESS_KEY_ID=... ROOT_SECRET_ACCESS_KEY=... \
//	versitygw --port 127.0.0.1:PORT --region us-east-1 --quiet \
//	    [--event-webhook-url URL] posix [--versioning-dir VDIR] DIR
//
// Event notifications: --event-webhook-url URL (alias --ewu, env
// VGW_EVENT_WEBHOOK_URL) POSTs one JSON document per object event,
// {"Records":[{...}]} in the S3 event shape, to URL; --event-filter FILE
// (env VGW_EVENT_FILTER) limits which event names are sent. versitygw POSTs a
// test event to the webhook when it starts and refuses to start if nothing
// listens there, so the receiver must listen before Start. Its events carry
// the object key as written (not URL-encoded), the bucket taken from the
// request path (clients must use path-style addressing), and a
// "glacierEventData" whose restore expiry time is "", which the aws-lambda-go
// S3 event type cannot decode. Events are sent asynchronously, in no
// guaranteed order, and lost if the receiver is slow (3 s timeout).
package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// EnvBinary names the environment variable that may point at the versitygw
// binary.
const EnvBinary = "SHEAF_VERSITYGW"

// Options configure the server.
type Options struct {
	// WebhookURL, when set, receives versitygw's event notifications. It
	// must already be listening.
	WebhookURL string
	// Versioning starts the gateway with --versioning-dir (a temporary
	// folder), so that buckets can have versioning turned on
	// (EnableVersioning). Without it versitygw refuses
	// PutBucketVersioning.
	Versioning bool
}

// Server is a running versitygw.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	Region    string
	AccessKey string
	SecretKey string
	Dir       string // the posix backend's root: one folder per bucket

	log *testbin.Output
}

// install is how to install the pinned versitygw.
const install = "run go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Binary locates versitygw: $SHEAF_VERSITYGW, PATH, $(go env GOPATH)/bin.
func Binary() (string, error) {
	p, err := testbin.Find("versitygw", EnvBinary)
	if err != nil {
		return "", testbin.Hint(err, install)
	}
	return p, nil
}

// Start runs a versitygw on a free 127.0.0.1 port over a new temporary
// folder and waits until it answers. It is stopped when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := testbin.Require(t, "versitygw", EnvBinary, install)
	s := plan(t)
	// The free port may be taken again before versitygw binds it: retry.
	for attempt := 1; ; attempt++ {
		err := s.start(t, bin, opts)
		if err == nil {
			return s
		}
		if attempt == 3 || !strings.Contains(s.Log(), "address already in use") {
			t.Fatalf("s3test: versitygw did not start: %v\n%s", err, s.Log())
		}
		if s.Endpoint, err = freeEndpoint(); err != nil {
			t.Fatal(err)
		}
	}
}

// Plan returns the server Start would run, on a free port, without
// starting it: its URL and Env can go to a process that must start first.
// Launch starts it on that port.
func Plan(t testing.TB) *Server {
	t.Helper()
	testbin.Require(t, "versitygw", EnvBinary, install)
	return plan(t)
}

// Launch starts a server from Plan and waits until it answers.
func (s *Server) Launch(t testing.TB, opts Options) {
	t.Helper()
	bin := testbin.Require(t, "versitygw", EnvBinary, install)
	if err := s.start(t, bin, opts); err != nil {
		t.Fatalf("s3test: versitygw did not start: %v\n%s", err, s.Log())
	}
}

func plan(t testing.TB) *Server {
	endpoint, err := freeEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	return &Server{
		Endpoint:  endpoint,
		Region:    "us-east-1",
		AccessKey: "sheaf-test-access",
		SecretKey: "sheaf-test-secret",
		Dir:       t.TempDir(),
	}
}

func freeEndpoint() (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return "http://127.0.0.1:" + strconv.Itoa(port), nil
}

func (s *Server) start(t testing.TB, bin string, opts Options) error {
	addr := strings.TrimPrefix(s.Endpoint, "http://")
	args := []string{"--port", addr, "--region", s.Region, "--quiet"}
	if opts.WebhookURL != "" {
		args = append(args, "--event-webhook-url", opts.WebhookURL)
	}
	args = append(args, "posix")
	if opts.Versioning {
		args = append(args, "--versioning-dir", t.TempDir())
	}
	args = append(args, s.Dir)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"ROOT_ACCESS_KEY_ID="+s.AccessKey,
		"ROOT_SECRET_ACCESS_KEY="+s.SecretKey,
	)
	s.log = new(testbin.Output)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	stop := func() {
		select {
		case <-done:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	if err := s.wait(done, 20*time.Second); err != nil {
		stop()
		return err
	}
	return nil
}

// wait polls the endpoint until any HTTP answer comes back.
func (s *Server) wait(done <-chan struct{}, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-done:
			return errors.New("versitygw exited")
		default:
		}
		resp, err := client.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer from %s after %v: %w", s.Endpoint, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Log returns what versitygw has printed so far (its first MiB).
func (s *Server) Log() string { return s.log.String() }

// Client returns an S3 client for the server: path-style addressing, the
// root credentials, the SDK's standard retryer.
func (s *Server) Client(t testing.TB) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// CreateBucket creates a bucket, failing the test on error.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Client(t).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %q: %v", name, err)
	}
}

// EnableVersioning turns versioning on for bucket (the server must run with
// Options.Versioning), failing the test on error.
func (s *Server) EnableVersioning(t testing.TB, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Client(t).PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
	}); err != nil {
		t.Fatalf("s3test: enable versioning on %q: %v", bucket, err)
	}
}

// Put writes data at key in bucket, failing the test on error.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client(t).PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data),
	}); err != nil {
		t.Fatalf("s3test: put %q: %v", key, err)
	}
}

// Get reads the object at key in bucket, failing the test on error.
func (s *Server) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.Client(t).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("s3test: get %q: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("s3test: get %q: %v", key, err)
	}
	return data
}

// Has reports whether an object exists at key in bucket, failing the test
// on any other error.
func (s *Server) Has(t testing.TB, bucket, key string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.Client(t).HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var nf *types.NotFound
	switch {
	case err == nil:
		return true
	case errors.As(err, &nf):
		return false
	}
	t.Fatalf("s3test: head %q: %v", key, err)
	return false
}

// Delete deletes the object at key in bucket, failing the test on error.
func (s *Server) Delete(t testing.TB, bucket, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client(t).DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("s3test: delete %q: %v", key, err)
	}
}

// PutDir uploads every file under dir to bucket, each at prefix + "/" +
// its slash-separated path under dir ("" prefix: at that path), failing
// the test on error.
func (s *Server) PutDir(t testing.TB, bucket, prefix, dir string) {
	t.Helper()
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		prefix += "/"
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s.Put(t, bucket, prefix+filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatalf("s3test: uploading %s: %v", dir, err)
	}
}

// URL returns the vault URL of bucket and prefix on this server, in the form
// the s3 adapter's ParseURL reads; the credentials are in Env.
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint + "&path_style=true&region=" + s.Region
}

// Env returns the AWS_* variables with which a child process reaches the
// server through the default credential chain.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
