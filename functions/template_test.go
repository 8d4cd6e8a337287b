package functions_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// loadTemplate parses template.yaml with goformation. Intrinsics are kept
// readable rather than resolved: !Ref X is "ref:X" (but a Number
// parameter's default, for goformation's typed fields; numberRefs says
// where they were), !GetAtt X.Y is "getatt:X.Y" and !Sub "s" is "sub:s".
// raw is the same document as plain maps, for the properties goformation's
// types lack.
func loadTemplate(t *testing.T) (*cloudformation.Template, map[string]any) {
	t.Helper()
	data, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	numbers := numberDefaults(t, data)
	opts := &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
		"Ref": func(_ string, in, _ any) any {
			if v, ok := numbers[fmt.Sprint(in)]; ok {
				return v
			}
			return fmt.Sprint("ref:", in)
		},
		"Fn::GetAtt": func(_ string, in, _ any) any {
			if parts, ok := in.([]any); ok && len(parts) == 2 {
				return fmt.Sprintf("getatt:%v.%v", parts[0], parts[1])
			}
			return fmt.Sprint("getatt:", in)
		},
		"Fn::Sub": func(_ string, in, _ any) any { return fmt.Sprint("sub:", in) },
		"Fn::If": func(_ string, in, _ any) any {
			if parts, ok := in.([]any); ok && len(parts) == 3 {
				return fmt.Sprintf("if:%v?%v:%v", parts[0], parts[1], parts[2])
			}
			return fmt.Sprint("if:", in)
		},
	}}
	js, err := intrinsics.ProcessYAML(data, opts)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	tmpl, err := goformation.ParseJSONWithOptions(js, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	return tmpl, raw
}

// numberDefaults are the defaults of the template's Number parameters.
func numberDefaults(t *testing.T, data []byte) map[string]any {
	t.Helper()
	js, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	var doc struct {
		Parameters map[string]struct {
			Type    string
			Default any
		}
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for name, p := range doc.Parameters {
		if p.Type == "Number" {
			out[name] = p.Default
		}
	}
	return out
}

// unprocessed is template.yaml as plain maps, intrinsics as written
// ({"Ref": "X"}).
func unprocessed(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// dig walks raw through map keys and list indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestTemplateFunctions(t *testing.T) {
	tmpl, raw := loadTemplate(t)
	if got := tmpl.Parameters["Architecture"]; got.Default != "arm64" || !slices.Equal(anyStrings(got.AllowedValues), []string{"arm64", "x86_64"}) {
		t.Errorf("Architecture parameter: %+v", got)
	}
	for _, p := range []string{"MeiliKey", "Token", "QdrantKey", "EmbedKey"} {
		if tmpl.Parameters[p].NoEcho == nil || !*tmpl.Parameters[p].NoEcho {
			t.Errorf("parameter %s must be NoEcho", p)
		}
	}
	for _, p := range []string{"MeiliUrl", "QdrantUrl", "EmbedBaseUrl", "EmbedModel", "VaultBucketName", "VaultPrefix"} {
		if _, ok := tmpl.Parameters[p]; !ok {
			t.Errorf("parameter %s missing", p)
		}
	}
	// Both functions' memory (and with it their CPU) is one parameter.
	if p := tmpl.Parameters["FunctionMemory"]; p.Type != "Number" || fmt.Sprint(p.Default) != "1024" {
		t.Errorf("FunctionMemory parameter: %+v", p)
	}
	written := unprocessed(t)
	for _, name := range []string{"McpFunction", "IndexerFunction"} {
		if got := dig(written, "Resources", name, "Properties", "MemorySize"); fmt.Sprint(got) != "map[Ref:FunctionMemory]" {
			t.Errorf("%s MemorySize = %v, want !Ref FunctionMemory", name, got)
		}
	}

	fns := tmpl.GetAllServerlessFunctionResources()
	if len(fns) != 2 {
		t.Fatalf("want 2 functions, got %d", len(fns))
	}
	const vaultURL = "sub:s3://${VaultBucketName}/${VaultPrefix}?region=${AWS::Region}"
	common := map[string]string{
		"SHEAF_VAULT": vaultURL, "SHEAF_SEARCH": "ref:MeiliUrl", "SHEAF_SEARCH_KEY": "ref:MeiliKey",
		"SHEAF_VECTORS": "ref:QdrantUrl", "SHEAF_VECTORS_KEY": "ref:QdrantKey", "SHEAF_EMBED_BASE_URL": "ref:EmbedBaseUrl",
		"SHEAF_EMBED_MODEL": "ref:EmbedModel", "SHEAF_EMBED_KEY": "ref:EmbedKey", "SHEAF_LOG_LEVEL": "ref:LogLevel",
	}
	for name, target := range map[string]string{"McpFunction": "build-McpFunction", "IndexerFunction": "build-IndexerFunction"} {
		fn := fns[name]
		if fn == nil {
			t.Fatalf("function %s missing", name)
		}
		if deref(fn.Runtime) != "provided.al2023" || deref(fn.Handler) != "bootstrap" {
			t.Errorf("%s: runtime %q handler %q", name, deref(fn.Runtime), deref(fn.Handler))
		}
		if !slices.Equal(fn.Architectures, []string{"ref:Architecture"}) {
			t.Errorf("%s: architectures %v", name, fn.Architectures)
		}
		if fn.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
			t.Errorf("%s: build method %v", name, fn.AWSCloudFormationMetadata)
		}
		if fn.CodeUri == nil || deref(fn.CodeUri.String) != "." {
			t.Errorf("%s: CodeUri must be the module root (build.mk builds from there)", name)
		}
		if !makeTarget(t, target) {
			t.Errorf("%s: build.mk has no target %s", name, target)
		}
		env := fn.Environment.Variables
		for k, v := range common {
			if env[k] != v {
				t.Errorf("%s: %s = %q, want %q", name, k, env[k], v)
			}
		}
		checkPolicies(t, name, fn)
	}

	mcp := fns["McpFunction"]
	authEnv := map[string]string{
		"SHEAF_TOKEN": "ref:Token", "SHEAF_KEYS": "ref:Keys", "SHEAF_OAUTH_ISSUER": "ref:OAuthIssuer",
		"SHEAF_OAUTH_AUDIENCE":     "if:AudienceFromApi?sub:ssm:/sheaf/${AWS::StackName}/mcp-url:ref:OAuthAudience",
		"SHEAF_OAUTH_JWKS_URL":     "ref:OAuthJWKSUrl",
		"SHEAF_OAUTH_SCOPE_PREFIX": "ref:OAuthScopePrefix", "SHEAF_OAUTH_BUILTIN": "ref:OAuthBuiltin",
	}
	for k, v := range authEnv {
		if got := mcp.Environment.Variables[k]; got != v {
			t.Errorf("McpFunction: %s = %q, want %q", k, got, v)
		}
		if _, ok := fns["IndexerFunction"].Environment.Variables[k]; ok {
			t.Errorf("IndexerFunction must not get %s", k)
		}
	}
	for p, pattern := range map[string]string{"Keys": "ssm:/sheaf/", "OAuthIssuer": "https://", "OAuthAudience": "https://"} {
		got := tmpl.Parameters[p]
		if got.Default != "" || !strings.Contains(deref(got.AllowedPattern), pattern) {
			t.Errorf("parameter %s: default %v, pattern %q", p, got.Default, deref(got.AllowedPattern))
		}
	}
	if got := tmpl.Parameters["Token"]; got.Default != "" || deref(got.AllowedPattern) != "^(|.{16,})$" {
		t.Errorf("Token must be optional but at least 16 characters when set: %+v", got)
	}
	if deref(mcp.Timeout) > 30 {
		t.Errorf("McpFunction timeout %d s: API Gateway gives up at 30 s", deref(mcp.Timeout))
	}
	if mcp.FunctionUrlConfig == nil || mcp.FunctionUrlConfig.AuthType != "NONE" || deref(mcp.FunctionUrlConfig.InvokeMode) != "BUFFERED" {
		t.Errorf("McpFunction: Function URL %+v", mcp.FunctionUrlConfig)
	}
	routes := map[string]string{}
	for evName, ev := range mcp.Events {
		if ev.Type != "HttpApi" || ev.Properties == nil || ev.Properties.HttpApiEvent == nil {
			t.Errorf("McpFunction event %s: type %s", evName, ev.Type)
			continue
		}
		h := ev.Properties.HttpApiEvent
		routes[deref(h.Path)] = deref(h.Method)
		if v := deref(h.PayloadFormatVersion); v != "2.0" {
			t.Errorf("McpFunction event %s: payload format %q", evName, v)
		}
	}
	if routes["/mcp"] != "ANY" || routes["/healthz"] != "GET" || routes["/.well-known/{proxy+}"] != "GET" || routes["/oauth/{proxy+}"] != "ANY" {
		t.Errorf("McpFunction routes %v", routes)
	}
	for env, param := range map[string]string{"SHEAF_OAUTH_TOKEN_AUDIENCES": "OAuthTokenAudiences", "SHEAF_OAUTH_CLIENT_IDS": "OAuthClientIds"} {
		got := fmt.Sprint(dig(written, "Resources", "McpFunction", "Properties", "Environment", "Variables", env))
		if got != "map[Fn::Join:[, map[Ref:"+param+"]]]" || tmpl.Parameters[param].Type != "CommaDelimitedList" {
			t.Errorf("McpFunction: %s = %s (parameter %+v)", env, got, tmpl.Parameters[param])
		}
	}
	// The built-in authorization server: off by default; on, with no
	// audience given, the API's URL through an SSM parameter the
	// function's policy may read (/sheaf/*).
	if p := tmpl.Parameters["OAuthBuiltin"]; p.Default != "false" || !slices.Equal(anyStrings(p.AllowedValues), []string{"true", "false"}) {
		t.Errorf("OAuthBuiltin parameter: %+v", p)
	}
	param, _ := dig(written, "Resources", "McpUrlParameter").(map[string]any)
	if param["Condition"] != "AudienceFromApi" || dig(param, "Properties", "Type") != "String" ||
		fmt.Sprint(dig(param, "Properties", "Name")) != "map[Fn::Sub:/sheaf/${AWS::StackName}/mcp-url]" ||
		!strings.Contains(fmt.Sprint(dig(param, "Properties", "Value")), "${ServerlessHttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/mcp") {
		t.Errorf("McpUrlParameter: %v", param)
	}

	ix := fns["IndexerFunction"]
	var sqsEvents, schedules int
	for evName, ev := range ix.Events {
		switch ev.Type {
		case "SQS":
			sqsEvents++
			// goformation's SQS event type predates FunctionResponseTypes and
			// ScalingConfig (and then drops the whole event): read it raw.
			props, _ := dig(raw, "Resources", "IndexerFunction", "Properties", "Events", evName, "Properties").(map[string]any)
			if props["Queue"] != "getatt:VaultEventsQueue.Arn" {
				t.Errorf("indexer SQS event %s reads %v", evName, props["Queue"])
			}
			if !slices.Equal(anyStrings(props["FunctionResponseTypes"]), []string{"ReportBatchItemFailures"}) {
				t.Errorf("indexer SQS event %s: FunctionResponseTypes %v", evName, props["FunctionResponseTypes"])
			}
			if n, _ := props["BatchSize"].(float64); n < 1 || n > 10000 {
				t.Errorf("indexer SQS event %s: BatchSize %v", evName, props["BatchSize"])
			}
		case "Schedule":
			schedules++
			s := ev.Properties.ScheduleEvent
			if s == nil || s.Schedule != "rate(1 hour)" || deref(s.Input) == "" {
				t.Fatalf("indexer schedule %s: %+v", evName, s)
			}
			var in map[string]any
			if err := json.Unmarshal([]byte(*s.Input), &in); err != nil || in["reconcile"] != true {
				t.Errorf("indexer schedule input %q is not {\"reconcile\": true}", *s.Input)
			}
		default:
			t.Errorf("indexer event %s of unexpected type %s", evName, ev.Type)
		}
	}
	if sqsEvents != 1 || schedules != 1 {
		t.Errorf("indexer: %d SQS and %d schedule events, want 1 and 1", sqsEvents, schedules)
	}
	if deref(ix.Timeout)*6 > 1800 {
		t.Errorf("the queue's visibility timeout (1800 s) must be at least 6x the indexer's timeout (%d s)", deref(ix.Timeout))
	}
	for _, out := range []string{"ApiUrl", "FunctionUrl", "VaultBucket", "VaultEventsQueueUrl"} {
		if _, ok := tmpl.Outputs[out]; !ok {
			t.Errorf("output %s missing", out)
		}
	}
}

// checkPolicies: read the vault, list the bucket; the indexer writes only
// under .sheaf/, the MCP function (the write tools) anywhere in the vault.
func checkPolicies(t *testing.T, name string, fn *serverless.Function) {
	t.Helper()
	if fn.Policies == nil || fn.Policies.IAMPolicyDocumentArray == nil {
		t.Errorf("%s: no inline policy", name)
		return
	}
	const (
		objects = "sub:arn:${AWS::Partition}:s3:::${VaultBucketName}/${VaultPrefix}/*"
		bucket  = "sub:arn:${AWS::Partition}:s3:::${VaultBucketName}"
		state   = "sub:arn:${AWS::Partition}:s3:::${VaultBucketName}/${VaultPrefix}/.sheaf/*"
	)
	grants := map[string][]string{} // action -> resources
	for _, doc := range *fn.Policies.IAMPolicyDocumentArray {
		raw, _ := json.Marshal(doc)
		var d struct {
			Statement []struct {
				Effect   string
				Action   any
				Resource any
			}
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		for _, st := range d.Statement {
			if st.Effect != "Allow" {
				continue
			}
			for _, a := range anyStrings(st.Action) {
				grants[a] = append(grants[a], anyStrings(st.Resource)...)
			}
		}
	}
	writes := state
	if name == "McpFunction" {
		writes = objects
	}
	want := map[string][]string{
		"s3:GetObject": {objects}, "s3:ListBucket": {bucket},
		"s3:PutObject": {writes}, "s3:DeleteObject": {writes},
	}
	if name == "IndexerFunction" { // it files ingest_file's uploads: a source note and the ledger line
		want["s3:PutObject"] = []string{state, "sub:arn:${AWS::Partition}:s3:::${VaultBucketName}/${VaultPrefix}/sources/*",
			"sub:arn:${AWS::Partition}:s3:::${VaultBucketName}/${VaultPrefix}/log.md"}
	}
	if name == "McpFunction" { // the keys may be an SSM parameter, only under /sheaf/
		want["ssm:GetParameter"] = []string{"sub:arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/sheaf/*"}
		// Note history reads past versions of notes.
		want["s3:GetObjectVersion"] = []string{objects}
		want["s3:ListBucketVersions"] = []string{bucket}
		want["s3:GetBucketVersioning"] = []string{bucket}
	}
	for a, res := range grants {
		if !slices.Equal(res, want[a]) {
			t.Errorf("%s: %s on %v, want %v", name, a, res, want[a])
		}
	}
	for a := range want {
		if _, ok := grants[a]; !ok {
			t.Errorf("%s: %s not granted", name, a)
		}
	}
}

func TestTemplateWiring(t *testing.T) {
	tmpl, _ := loadTemplate(t)
	b, err := tmpl.GetS3BucketWithName("VaultBucket")
	if err != nil {
		t.Fatal(err)
	}
	if deref(b.BucketName) != "ref:VaultBucketName" || !slices.Contains(b.AWSCloudFormationDependsOn, "VaultEventsQueuePolicy") {
		t.Errorf("bucket: name %q, depends on %v (S3 checks the queue policy when notifications are set)", deref(b.BucketName), b.AWSCloudFormationDependsOn)
	}
	if b.NotificationConfiguration == nil {
		t.Fatal("bucket has no notifications")
	}
	events := map[string]bool{}
	for _, qc := range b.NotificationConfiguration.QueueConfigurations {
		events[qc.Event] = true
		if qc.Queue != "getatt:VaultEventsQueue.Arn" {
			t.Errorf("notification %s goes to %q", qc.Event, qc.Queue)
		}
		rules := map[string]string{}
		if qc.Filter != nil && qc.Filter.S3Key != nil {
			for _, r := range qc.Filter.S3Key.Rules {
				rules[r.Name] = r.Value
			}
		}
		if qc.Event == "s3:ObjectCreated:*" && rules["prefix"] == "sub:${VaultPrefix}/.sheaf/ingest/uploads/" && rules["suffix"] == ".bin" {
			events["uploads"] = true // ingest_file's presigned uploads
			continue
		}
		if rules["prefix"] != "sub:${VaultPrefix}/" || rules["suffix"] != ".md" {
			t.Errorf("notification %s filter %v, want the vault prefix and .md", qc.Event, rules)
		}
	}
	if !events["s3:ObjectCreated:*"] || !events["s3:ObjectRemoved:*"] || !events["uploads"] || len(events) != 3 {
		t.Errorf("notified events %v", events)
	}

	q, err := tmpl.GetSQSQueueWithName("VaultEventsQueue")
	if err != nil {
		t.Fatal(err)
	}
	rp, _ := q.RedrivePolicy.(map[string]any)
	if rp["deadLetterTargetArn"] != "getatt:VaultEventsDLQ.Arn" || rp["maxReceiveCount"] == nil {
		t.Errorf("queue redrive policy %v", q.RedrivePolicy)
	}
	if _, err := tmpl.GetSQSQueueWithName("VaultEventsDLQ"); err != nil {
		t.Errorf("no dead-letter queue: %v", err)
	}

	pol, err := tmpl.GetSQSQueuePolicyWithName("VaultEventsQueuePolicy")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pol.Queues, []string{"ref:VaultEventsQueue"}) {
		t.Errorf("queue policy applies to %v", pol.Queues)
	}
	doc, _ := json.Marshal(pol.PolicyDocument)
	for _, want := range []string{`"s3.amazonaws.com"`, `"sqs:SendMessage"`, `"getatt:VaultEventsQueue.Arn"`, `"sub:arn:${AWS::Partition}:s3:::${VaultBucketName}"`, `"aws:SourceAccount"`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("queue policy lacks %s: %s", want, doc)
		}
	}
}

// makeTarget reports whether build.mk defines target, asking make itself
// when it is installed.
func makeTarget(t *testing.T, target string) bool {
	t.Helper()
	mk, err := os.ReadFile("../build.mk")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "\n"+target+":") {
		return false
	}
	if _, err := exec.LookPath("make"); err != nil {
		return true
	}
	out, err := exec.Command("make", "-n", "-C", "..", "-f", "build.mk", target, "ARTIFACTS_DIR=/tmp/x", "LAMBDA_ARCH=x86_64").CombinedOutput()
	if err != nil {
		t.Errorf("make -n %s: %v\n%s", target, err, out)
		return false
	}
	if !strings.Contains(string(out), "GOARCH=amd64") || !strings.Contains(string(out), "-o /tmp/x/bootstrap") || !strings.Contains(string(out), "-tags lambda.norpc") {
		t.Errorf("make -n %s: %s", target, out)
	}
	return true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func anyStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// KeepWarm (off by default) schedules {"warm": true} for the MCP function
// every 5 minutes, allowed to invoke it, both only under the condition.
func TestTemplateKeepWarm(t *testing.T) {
	tmpl, raw := loadTemplate(t)
	if p := tmpl.Parameters["KeepWarm"]; fmt.Sprint(p.Default) != "false" || !slices.Equal(anyStrings(p.AllowedValues), []string{"true", "false"}) {
		t.Errorf("KeepWarm parameter: %+v", p)
	}
	if got := fmt.Sprint(dig(unprocessed(t), "Conditions", "KeepWarmOn")); got != "map[Fn::Equals:[map[Ref:KeepWarm] true]]" {
		t.Errorf("condition KeepWarmOn = %s", got)
	}
	rule := dig(raw, "Resources", "McpWarmRule")
	if dig(rule, "Type") != "AWS::Events::Rule" || dig(rule, "Condition") != "KeepWarmOn" ||
		dig(rule, "Properties", "ScheduleExpression") != "rate(5 minutes)" ||
		dig(rule, "Properties", "Targets", 0, "Arn") != "getatt:McpFunction.Arn" {
		t.Errorf("warm-up rule: %v", rule)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(dig(rule, "Properties", "Targets", 0, "Input"))), &input); err != nil || input["warm"] != true || len(input) != 1 {
		t.Errorf("warm-up input %v (%v), want {\"warm\": true}", dig(rule, "Properties", "Targets", 0, "Input"), err)
	}
	perm := dig(raw, "Resources", "McpWarmPermission")
	if dig(perm, "Type") != "AWS::Lambda::Permission" || dig(perm, "Condition") != "KeepWarmOn" ||
		dig(perm, "Properties", "Principal") != "events.amazonaws.com" || dig(perm, "Properties", "Action") != "lambda:InvokeFunction" ||
		dig(perm, "Properties", "FunctionName") != "ref:McpFunction" || dig(perm, "Properties", "SourceArn") != "getatt:McpWarmRule.Arn" {
		t.Errorf("warm-up permission: %v", perm)
	}
}

// TestTemplateHistory: the bucket keeps every version of every note (note
// history reads them), for HistoryDays at least and beyond that the newest
// HistoryVersions; Sheaf's own objects' past versions go after a day.
func TestTemplateHistory(t *testing.T) {
	tmpl, _ := loadTemplate(t)
	b, err := tmpl.GetS3BucketWithName("VaultBucket")
	if err != nil {
		t.Fatal(err)
	}
	if b.VersioningConfiguration == nil || b.VersioningConfiguration.Status != "Enabled" {
		t.Fatalf("bucket versioning %+v, want Enabled", b.VersioningConfiguration)
	}
	if b.LifecycleConfiguration == nil {
		t.Fatal("no lifecycle rules: noncurrent versions would be kept forever")
	}
	rules := map[string]bool{}
	for _, r := range b.LifecycleConfiguration.Rules {
		id := deref(r.Id)
		rules[id] = true
		if r.Status != "Enabled" {
			t.Errorf("rule %s: status %q", id, r.Status)
		}
		switch id {
		case "NoteHistory":
			nve := r.NoncurrentVersionExpiration
			if deref(r.Prefix) != "sub:${VaultPrefix}/" || nve == nil || nve.NoncurrentDays != 30 ||
				nve.NewerNoncurrentVersions == nil || *nve.NewerNoncurrentVersions != 10 {
				t.Errorf("NoteHistory: prefix %q, %+v; want the vault's notes, 30 days (HistoryDays) and 10 versions (HistoryVersions)", deref(r.Prefix), nve)
			}
			if r.ExpiredObjectDeleteMarker == nil || !*r.ExpiredObjectDeleteMarker || r.ExpirationInDays != nil {
				t.Errorf("NoteHistory must clean up delete markers with nothing left behind them, and never expire current notes")
			}
		case "SheafState":
			if deref(r.Prefix) != "sub:${VaultPrefix}/.sheaf/" || r.NoncurrentVersionExpiration == nil || r.NoncurrentVersionExpiration.NoncurrentDays != 1 {
				t.Errorf("SheafState: prefix %q, %+v", deref(r.Prefix), r.NoncurrentVersionExpiration)
			}
		case "HistoryTransactions":
			if deref(r.Prefix) != "sub:${VaultPrefix}/.sheaf/history/tx/" || r.ExpirationInDays == nil || *r.ExpirationInDays != 30 {
				t.Errorf("HistoryTransactions: prefix %q, expires after %v days", deref(r.Prefix), deref(r.ExpirationInDays))
			}
		case "IngestUploads":
			if deref(r.Prefix) != "sub:${VaultPrefix}/.sheaf/ingest/uploads/" || r.ExpirationInDays == nil || *r.ExpirationInDays != 1 {
				t.Errorf("IngestUploads: prefix %q, expires after %v days", deref(r.Prefix), deref(r.ExpirationInDays))
			}
		default:
			t.Errorf("unexpected lifecycle rule %q", id)
		}
		if r.ExpirationInDays != nil && id != "HistoryTransactions" && id != "IngestUploads" {
			t.Errorf("rule %s expires current objects: notes would be deleted", id)
		}
	}
	for _, id := range []string{"NoteHistory", "SheafState", "HistoryTransactions", "IngestUploads"} {
		if !rules[id] {
			t.Errorf("lifecycle rule %s missing", id)
		}
	}
}
