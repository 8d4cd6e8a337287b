package functions_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// tool finds a command, skipping the test when it is missing (failing it
// under CI, which installs it with apt-get install -y pkg).
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	return testbin.Require(t, name, "", "apt-get install -y "+pkg)
}

// TestComposeFile validates infra/docker-compose.yml with docker-compose
// (it needs no engine for that) and checks the house rules: every image
// pinned, every service health-checked, every port on 127.0.0.1.
func TestComposeFile(t *testing.T) {
	data, err := os.ReadFile("../infra/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       any               `yaml:"build"`
			Ports       []string          `yaml:"ports"`
			Healthcheck map[string]any    `yaml:"healthcheck"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Restart     string            `yaml:"restart"`
			Profiles    []string          `yaml:"profiles"`
			Command     []string          `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"s3", "upload", "indexer", "mcp", "localstack", "meilisearch", "qdrant", "embedder"} {
		if _, ok := doc.Services[want]; !ok {
			t.Errorf("service %s missing", want)
		}
	}
	for name, s := range doc.Services {
		if s.Build == nil {
			_, tag, ok := strings.Cut(s.Image, ":")
			if !ok || tag == "" || tag == "latest" {
				t.Errorf("%s: image %q is not pinned", name, s.Image)
			}
		}
		if s.Healthcheck["test"] == nil && s.Restart != "no" { // a one-shot job has none
			t.Errorf("%s: no healthcheck", name)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s: port %q is not bound to 127.0.0.1", name, p)
			}
		}
	}
	if !slices.Contains(doc.Services["qdrant"].Ports, "127.0.0.1:6334:6334") {
		t.Errorf("qdrant's gRPC port 6334 is not published")
	}
	// Your own vault, read-only, uploaded into the local S3; the indexer
	// follows the S3 server's events with the token the server sends.
	if !slices.Contains(doc.Services["upload"].Volumes, "${SHEAF_VAULT_DIR:-./sample-vault}:/vault:ro") {
		t.Errorf("upload: the vault is not mounted from SHEAF_VAULT_DIR: %v", doc.Services["upload"].Volumes)
	}
	if !slices.Contains(doc.Services["mcp"].Ports, "127.0.0.1:8787:8787") {
		t.Errorf("mcp: port 8787 is not published on 127.0.0.1")
	}
	token := "${SHEAF_WEBHOOK_TOKEN:-dev-webhook-token-change-me-0123}"
	if !slices.Contains(doc.Services["s3"].Command, "http://sheaf:"+token+"@indexer:8790/") ||
		!slices.Contains(doc.Services["indexer"].Command, token) {
		t.Errorf("the S3 server's webhook and the indexer's token differ: %v / %v", doc.Services["s3"].Command, doc.Services["indexer"].Command)
	}
	for _, svc := range []string{"indexer", "mcp"} {
		if v := doc.Services[svc].Environment["SHEAF_VAULT"]; !strings.HasPrefix(v, "s3://sheaf-vault/vault?endpoint=http://s3:7070") {
			t.Errorf("%s: SHEAF_VAULT %q is not the local S3", svc, v)
		}
	}
	ls := doc.Services["localstack"]
	if !slices.Contains(ls.Profiles, "lambda") {
		t.Errorf("localstack: not in the lambda profile: %v", ls.Profiles)
	}
	if _, ok := ls.Environment["LOCALSTACK_AUTH_TOKEN"]; !ok {
		t.Errorf("localstack: LOCALSTACK_AUTH_TOKEN is not passed through")
	}
	if !slices.Contains(ls.Volumes, "../localstack/ready.d:/etc/localstack/init/ready.d:ro") {
		t.Errorf("localstack: the init hooks are not mounted: %v", ls.Volumes)
	}

	dc := tool(t, "docker-compose", "docker-compose")
	cmd := exec.Command(dc, "-f", "../infra/docker-compose.yml", "config", "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker-compose config -q: %v\n%s", err, out)
	}
}

func hooks(t *testing.T) []string {
	t.Helper()
	hs, err := filepath.Glob("../localstack/ready.d/*.sh")
	if err != nil || len(hs) == 0 {
		t.Fatalf("no init hooks in localstack/ready.d (%v)", err)
	}
	return hs
}

// TestLocalStackHooksLint runs bash -n and shellcheck on every init hook.
func TestLocalStackHooksLint(t *testing.T) {
	bash := tool(t, "bash", "bash")
	sc := tool(t, "shellcheck", "shellcheck")
	for _, h := range hooks(t) {
		if fi, err := os.Stat(h); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", h)
		}
		if out, err := exec.Command(bash, "-n", h).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", h, err, out)
		}
		if out, err := exec.Command(sc, "--severity=style", h).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", h, err, out)
		}
	}
}

// fakeAWSLocal answers the awslocal calls the hooks make as a fresh
// LocalStack would, and logs every call as a JSON array of its arguments.
const fakeAWSLocal = `#!/usr/bin/env bash
python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >> "$AWSLOCAL_LOG"
arg() { local want=$1; shift; while (($#)); do [[ $1 == "$want" ]] && { echo "$2"; return; }; shift; done; }
case "$1 $2" in
"s3api head-bucket") exit 254 ;;
"sqs create-queue" | "sqs get-queue-url") echo "http://localhost:4566/000000000000/$(arg --queue-name "$@")" ;;
"sqs get-queue-attributes") url=$(arg --queue-url "$@"); echo "arn:aws:sqs:us-east-1:000000000000:${url##*/}" ;;
"lambda get-function")
  [[ $* == *--query* ]] || exit 254
  echo "arn:aws:lambda:us-east-1:000000000000:function:$(arg --function-name "$@")" ;;
"lambda get-function-url-config") exit 254 ;;
"lambda create-function-url-config") echo "http://fn.lambda-url.us-east-1.localhost.localstack.cloud:4566/" ;;
"lambda list-event-source-mappings") echo 0 ;;
"events put-rule") echo "arn:aws:events:us-east-1:000000000000:rule/$(arg --name "$@")" ;;
"lambda invoke") echo '{"kind":"reconcile"}' > "${!#}" ;;
esac
`

// TestLocalStackHooksDryRun runs the hooks, in order, against a fake
// awslocal and checks the resources they ask for: the notifications, the
// redrive policy, both functions with their environments, the event source
// mapping with partial batch failures and the hourly reconcile.
func TestLocalStackHooksDryRun(t *testing.T) {
	bash := tool(t, "bash", "bash")
	tool(t, "python3", "python3")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "awslocal"), []byte(fakeAWSLocal), 0o755); err != nil {
		t.Fatal(err)
	}
	zips := filepath.Join(dir, "lambda")
	if err := os.MkdirAll(zips, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, z := range []string{"mcp.zip", "indexer.zip"} {
		if err := os.WriteFile(filepath.Join(zips, z), []byte("PK"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(dir, "calls.jsonl")
	env := append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "AWSLOCAL_LOG="+log,
		"SHEAF_LAMBDA_DIR="+zips, "SHEAF_BUCKET=notes-bucket", "SHEAF_PREFIX=team",
		"SHEAF_TOKEN=tok-0123456789abcdef", "SHEAF_MEILI_URL=http://meilisearch:7700", "SHEAF_MEILI_KEY=mk",
		"SHEAF_QDRANT_URL=qdrant://qdrant:6334", "SHEAF_EMBED_BASE_URL=http://embedder:8088/v1", "SHEAF_EMBED_MODEL=use-lite-512")
	for _, h := range hooks(t) {
		cmd := exec.Command(bash, h)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", h, err, out)
		}
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for line := range strings.Lines(string(raw)) {
		var c []string
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		calls = append(calls, c)
	}
	find := func(service, op string) [][]string {
		var out [][]string
		for _, c := range calls {
			if len(c) >= 2 && c[0] == service && c[1] == op {
				out = append(out, c)
			}
		}
		return out
	}
	arg := func(c []string, name string) string {
		if i := slices.Index(c, name); i >= 0 && i+1 < len(c) {
			return c[i+1]
		}
		return ""
	}

	var notif struct {
		QueueConfigurations []struct {
			QueueArn string
			Events   []string
			Filter   struct {
				Key struct {
					FilterRules []struct{ Name, Value string }
				}
			}
		}
	}
	nc := find("s3api", "put-bucket-notification-configuration")
	if len(nc) != 1 || arg(nc[0], "--bucket") != "notes-bucket" {
		t.Fatalf("notification calls %v", nc)
	}
	if err := json.Unmarshal([]byte(arg(nc[0], "--notification-configuration")), &notif); err != nil {
		t.Fatal(err)
	}
	if len(notif.QueueConfigurations) != 2 {
		t.Fatalf("notifications %+v", notif)
	}
	for _, qc := range notif.QueueConfigurations {
		rules := qc.Filter.Key.FilterRules
		if qc.QueueArn != "arn:aws:sqs:us-east-1:000000000000:notes-bucket-events" || len(rules) != 2 ||
			rules[0].Value != "team/" || rules[1].Value != ".md" {
			t.Errorf("notification %+v", qc)
		}
	}

	var queueAttrs struct{ VisibilityTimeout, RedrivePolicy string }
	for _, c := range find("sqs", "create-queue") {
		if arg(c, "--queue-name") == "notes-bucket-events" {
			_ = json.Unmarshal([]byte(arg(c, "--attributes")), &queueAttrs)
		}
	}
	var redrive struct{ DeadLetterTargetArn, MaxReceiveCount string }
	if err := json.Unmarshal([]byte(queueAttrs.RedrivePolicy), &redrive); err != nil ||
		redrive.DeadLetterTargetArn != "arn:aws:sqs:us-east-1:000000000000:notes-bucket-events-dlq" || redrive.MaxReceiveCount != "5" {
		t.Errorf("queue attributes %+v (%v)", queueAttrs, err)
	}

	fns := map[string]map[string]string{}
	for _, c := range find("lambda", "create-function") {
		var e struct{ Variables map[string]string }
		if err := json.Unmarshal([]byte(arg(c, "--environment")), &e); err != nil {
			t.Fatal(err)
		}
		fns[arg(c, "--function-name")] = e.Variables
		if arg(c, "--runtime") != "provided.al2023" || arg(c, "--handler") != "bootstrap" {
			t.Errorf("function %v", c)
		}
	}
	const vault = "s3://notes-bucket/team?endpoint=http://localstack:4566&path_style=true&region=us-east-1"
	if fns["sheaf-mcp"]["SHEAF_TOKEN"] != "tok-0123456789abcdef" || fns["sheaf-mcp"]["SHEAF_VAULT"] != vault {
		t.Errorf("sheaf-mcp environment %v", fns["sheaf-mcp"])
	}
	if _, ok := fns["sheaf-indexer"]["SHEAF_TOKEN"]; ok || fns["sheaf-indexer"]["SHEAF_VECTORS"] != "qdrant://qdrant:6334" {
		t.Errorf("sheaf-indexer environment %v", fns["sheaf-indexer"])
	}

	esm := find("lambda", "create-event-source-mapping")
	if len(esm) != 1 || arg(esm[0], "--function-response-types") != "ReportBatchItemFailures" ||
		arg(esm[0], "--event-source-arn") != "arn:aws:sqs:us-east-1:000000000000:notes-bucket-events" {
		t.Errorf("event source mapping %v", esm)
	}
	if len(find("lambda", "create-function-url-config")) != 1 {
		t.Errorf("no Function URL for sheaf-mcp")
	}
	rule := find("events", "put-rule")
	targets := find("events", "put-targets")
	if len(rule) != 1 || arg(rule[0], "--schedule-expression") != "rate(1 hour)" || len(targets) != 1 ||
		!strings.Contains(arg(targets[0], "--targets"), `\"reconcile\": true`) {
		t.Errorf("schedule %v %v", rule, targets)
	}
	if len(find("lambda", "invoke")) != 1 {
		t.Errorf("no first reconcile")
	}
}
