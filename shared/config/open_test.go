package config

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// TestOpenRefusesFlagsWithAKind: a setting that means nothing for the
// vault's site is refused with the stable kind unsupported and what to do,
// never ignored; so is a vault of a scheme this program does not link (this
// test binary, like the Lambda functions, links no folder site).
func TestOpenRefusesFlagsWithAKind(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	meili := "http://127.0.0.1:7700"
	for _, tc := range []struct {
		c     Config
		given []string // flag=value set as on a command line
		flag  string
	}{
		{Config{Vault: "./notes", Search: meili}, nil, "--vault"},
		{Config{Vault: "s3://b/p", Search: "embedded"}, nil, "--search"},
		{Config{Vault: "s3://b/p"}, nil, "--search"},
		{Config{Vault: "s3://b/p", Search: meili, EmbedBaseURL: "http://127.0.0.1:1/v1", EmbedModel: "m", Vectors: "embedded"}, nil, "--vectors"},
		{Config{Vault: "s3://b/p", Search: meili, State: t.TempDir()}, nil, "--state"},
		{Config{Vault: "s3://b/p", Search: meili, NoWatch: true}, nil, "--no-watch"},
		{Config{}, []string{"vault=s3://b/p", "search=" + meili, "index-wait=1s"}, "--index-wait"},
		{Config{}, []string{"vault=s3://b/p", "search=" + meili, "history-days=7"}, "--history-days"},
		{Config{}, []string{"vault=s3://b/p", "search=" + meili, "history-keep=3"}, "--history-keep"},
	} {
		c := tc.c
		if tc.given != nil {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			Flags(&c, fs)
			for _, kv := range tc.given {
				k, v, _ := strings.Cut(kv, "=")
				if err := fs.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		o, err := Open(t.Context(), &c, quiet)
		if err == nil {
			o.Close()
		}
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != core.KindUnsupported || !strings.HasPrefix(ce.Message, tc.flag+" ") {
			t.Errorf("%+v %v: %v, want an unsupported %s", tc.c, tc.given, err, tc.flag)
		}
	}
}

// TestOpenRefusesUnknownSchemes: a --search or --vectors URL whose scheme
// no adapter in this program registered is refused with the kind
// unsupported, naming the schemes this program can open.
func TestOpenRefusesUnknownSchemes(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	meili := "http://127.0.0.1:7700"
	for _, tc := range []struct {
		c     Config
		flag  string
		known []string
	}{
		{Config{Vault: "s3://b/p", Search: "foo://user:secret@x"}, "--search", textindex.Schemes()},
		{Config{Vault: "s3://b/p", Search: meili, EmbedBaseURL: "http://127.0.0.1:1/v1", EmbedModel: "m", Vectors: "foo://x"}, "--vectors", vectors.Schemes()},
	} {
		o, err := Open(t.Context(), &tc.c, quiet)
		if err == nil {
			o.Close()
		}
		want := "this program cannot open foo: "
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != core.KindUnsupported || !strings.HasPrefix(ce.Message, tc.flag+" ") || !strings.Contains(ce.Message, want) {
			t.Errorf("%s: %v, want an unsupported %s saying %q", tc.flag, err, tc.flag, want)
			continue
		}
		if len(tc.known) == 0 || !strings.HasSuffix(ce.Message, "(it can open: "+strings.Join(tc.known, ", ")+")") {
			t.Errorf("%s: %q does not name the schemes this program can open, %v", tc.flag, ce.Message, tc.known)
		}
		if strings.Contains(ce.Message, "secret") {
			t.Errorf("%s: %q shows the URL's password", tc.flag, ce.Message)
		}
	}
}

// TestDefaultsAreNotRefused: the retention and index-wait defaults, which
// a bucket has no use for, are not refused when nobody gave them.
func TestDefaultsAreNotRefused(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	c := &Config{}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	Flags(c, fs)
	for k, v := range map[string]string{"vault": "s3://b/p", "search": "http://127.0.0.1:7700"} {
		if err := fs.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	o, err := Open(t.Context(), c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
}

// A prefix without its trailing space is warned about; one with it, or
// none, is not.
func TestWarnGluedPrefixes(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	warnGluedPrefixes(&Config{EmbedQueryPrefix: "search_query: ", EmbedDocumentPrefix: "search_document:"}, log)
	out := buf.String()
	if !strings.Contains(out, "--embed-document-prefix") || strings.Contains(out, "--embed-query-prefix") {
		t.Errorf("warnings: %s", out)
	}
	buf.Reset()
	warnGluedPrefixes(&Config{}, log)
	if buf.Len() != 0 {
		t.Errorf("no prefixes, warnings: %s", buf.String())
	}
}
