package fnenv

import "testing"

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
