package vault

import "testing"

func TestIgnored(t *testing.T) {
	for p, want := range map[string]bool{
		"Note.md":       false,
		"a/b/Note.md":   false,
		"img/photo.png": false,
		"Note.sync-conflict-20260101-120000-ABCD.md": false, // a conflict copy is text
		"Note.md.conflict1":                          false,
		"partial.md":                                 false,
		".partial":                                   true, // hidden
		".sheaf/catalog/manifest.json":               true,
		".obsidian/app.json":                         true,
		"a/.trash/Old.md":                            true,
		".stfolder":                                  true,
		".stversions/Note~20260101-120000.md":        true,
		"a/.syncthing.Note.md.tmp":                   true,
		"a/~syncthing~Note.md.tmp":                   true,
		"_remotely-save-metadata-on-remote.json":     true,
		"_remotely-save-metadata-on-remote.bin":      true,
		"sub/_remotely-save-metadata-on-remote.json": true,
		"_remotely-save-metadata-on-remote.json.md":  false,
		"Projects/Plan.md.k3J9aB2x.partial":          true,
		"RCLONE_TEST":                                true,
		"docs/RCLONE_TEST":                           true,
		"RCLONE_TEST.md":                             false,
	} {
		if got := Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}
