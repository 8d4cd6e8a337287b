package functions_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestSAMLocalEnv: sam local applies only the variables a function declares
// in the template, silently dropping others; infra/sam/env.json must name
// declared variables of existing functions, and the Makefile's sam targets
// must pass the host's architecture to both the build and the template.
func TestSAMLocalEnv(t *testing.T) {
	tmpl, _ := loadTemplate(t)
	fns := tmpl.GetAllServerlessFunctionResources()
	data, err := os.ReadFile("../infra/sam/env.json")
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]map[string]string
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	for name, vars := range env {
		fn, ok := fns[name]
		if !ok {
			t.Errorf("env.json names %s, not a function of template.yaml", name)
			continue
		}
		for k, v := range vars {
			if _, ok := fn.Environment.Variables[k]; !ok {
				t.Errorf("%s: %s is not declared in the template, so sam local would drop it", name, k)
			}
			if k == "SHEAF_VAULT" && !strings.Contains(v, "endpoint=http://host.docker.internal:7070") {
				t.Errorf("%s: SHEAF_VAULT %q is not the local S3 of make s3-local", name, v)
			}
		}
	}
	if len(env) != 2 {
		t.Errorf("env.json configures %d functions, want both", len(env))
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LAMBDA_ARCH=$(HOST_LAMBDA_ARCH) sam build", "Architecture=$(HOST_LAMBDA_ARCH)", "--env-vars infra/sam/env.json"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("Makefile: the sam targets lack %q", want)
		}
	}
}

// TestDockerfile checks the container image definition statically (no
// Docker engine here): a static non-root base, the binary built static and
// trimmed, serve as the command, and the MCP registry's name label equal to
// server.json's name. hadolint runs when installed.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) < 2 || !strings.HasPrefix(froms[len(froms)-1][1], "gcr.io/distroless/static") {
		t.Errorf("the final stage is %v, want a distroless static base", froms)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "USER nonroot", `ENTRYPOINT ["/sheaf"]`, `CMD ["serve"]`, "SHEAF_HTTP=0.0.0.0:8787", "EXPOSE 8787"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	var sj struct {
		Schema   string `json:"$schema"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Desc     string `json:"description"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			Transport    struct {
				Type string `json:"type"`
			} `json:"transport"`
		} `json:"packages"`
	}
	raw, err := os.ReadFile("../server.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sj); err != nil {
		t.Fatal(err)
	}
	// The rules of the registry's schema (2025-12-11) that a mistake here
	// would break.
	if !regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(sj.Name) || len(sj.Desc) == 0 || len(sj.Desc) > 100 ||
		!regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(sj.Version) || !strings.Contains(sj.Schema, "/server.schema.json") {
		t.Errorf("server.json: name %q, version %q, description of %d characters, $schema %q", sj.Name, sj.Version, len(sj.Desc), sj.Schema)
	}
	if len(sj.Packages) != 1 || sj.Packages[0].RegistryType != "oci" || sj.Packages[0].Transport.Type != "stdio" ||
		!strings.HasSuffix(sj.Packages[0].Identifier, ":"+sj.Version) {
		t.Errorf("server.json packages %+v, want the OCI image at version %s over stdio", sj.Packages, sj.Version)
	}
	if !strings.Contains(df, `io.modelcontextprotocol.server.name="`+sj.Name+`"`) {
		t.Errorf("the image's io.modelcontextprotocol.server.name label is not %q", sj.Name)
	}
	if hl, err := exec.LookPath("hadolint"); err == nil {
		if out, err := exec.Command(hl, "../Dockerfile").CombinedOutput(); err != nil {
			t.Errorf("hadolint: %v\n%s", err, out)
		}
	} else {
		t.Log("hadolint not installed: the Dockerfile was checked by this test only")
	}
}

// TestScriptsLint runs bash -n and shellcheck on the release, quick start
// and local S3 scripts.
func TestScriptsLint(t *testing.T) {
	bash := tool(t, "bash", "bash")
	sc := tool(t, "shellcheck", "shellcheck")
	for _, s := range []string{"../infra/release/release.sh", "../infra/quickstart/local.sh", "../infra/s3local.sh"} {
		if fi, err := os.Stat(s); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
		if out, err := exec.Command(bash, "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
		if out, err := exec.Command(sc, "--severity=style", s).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", s, err, out)
		}
	}
}

// TestGoInstallable: `go install github.com/sheaf-dev/sheaf/cmd/sheaf@v…`
// (the README's install) refuses a module whose go.mod has a replace or
// exclude directive, so a patched dependency must never be wired that way
// (go.work wires third_party/jsonschema), and must build without it.
func TestGoInstallable(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*(replace|exclude)\b.*$`).FindAllString(string(data), -1) {
		t.Errorf("go.mod: %q: go install would refuse the module", strings.TrimSpace(m))
	}
	// go.work's patched copy of a dependency is for builds from this
	// checkout; go install builds without the workspace, from go.sum.
	cmd := exec.Command("go", "build", "-o", os.DevNull, "../cmd/sheaf")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("building sheaf without the workspace, as go install does: %v\n%s", err, out)
	}
}
