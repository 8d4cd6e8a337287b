package fnenv

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("SHEAF_VAULT", "s3://b/p")
	t.Setenv("SHEAF_SEARCH", "http://meili:7700")
	t.Setenv("SHEAF_MAX_ATTACHMENT_BYTES", "2097152")
	t.Setenv("SHEAF_IMMUTABLE_PATHS", "a/,b/")
	c, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	if c.Vault != "s3://b/p" || c.Search != "http://meili:7700" || c.MaxAttachmentBytes != 2<<20 || len(c.ImmutablePaths) != 2 {
		t.Errorf("config %+v", c)
	}
	if c.Profile != "full" || c.MaxNoteBytes != 16<<20 {
		t.Errorf("defaults lost: profile %q max note %d", c.Profile, c.MaxNoteBytes)
	}
	t.Setenv("SHEAF_MAX_NOTE_BYTES", "lots")
	if _, err := Config(); err == nil {
		t.Errorf("a bad SHEAF_MAX_NOTE_BYTES was accepted")
	}
}

func TestMemoryLimitFromLambda(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")
	setMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit(1024) || got != 1024<<20*85/100 {
		t.Errorf("limit %d, want 85%% of 1024 MiB", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
	setMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("outside Lambda the limit changed to %d", got)
	}
}
