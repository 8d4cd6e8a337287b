package core

import (
	"context"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// missingFolder explains an empty list of the folder dir (clean, not the
// root): "" when some note or file is in it, else that none is, and what
// was probably meant (the folder of another case, a note or attachment
// named instead). It reads the catalog, and the store only under dir (so
// a folder that leads out of the vault, a symlink, is path-invalid, as
// list_folders says); never the whole vault's listing.
func missingFolder(ctx context.Context, v *Vault, cat *vault.Catalog, dir string) (string, error) {
	prefix := dir + "/"
	alike := ""
	seen := func(p string) bool {
		if strings.HasPrefix(p, prefix) {
			return true
		}
		if alike == "" && len(p) > len(prefix) && strings.EqualFold(p[:len(prefix)], prefix) {
			alike = p[:len(dir)]
		}
		return false
	}
	for _, p := range cat.Paths() {
		if seen(p) {
			return "", nil
		}
	}
	file := ""
	for _, a := range cat.Attachments() {
		if seen(a.Path) {
			return "", nil
		}
		if a.Path == dir {
			file = a.Path
		}
	}
	if _, err := v.Store.Folders(ctx, dir); err != nil {
		return "", argPathError("path", err)
	}
	switch n, ok := cat.Note(dir); {
	case file != "":
		return "\"" + file + "\" is an attachment, not a folder: read_attachment reads it; path takes a folder.", nil
	case ok:
		return "\"" + n.Path + "\" is a note, not a folder: read_note reads it; path takes a folder.", nil
	}
	if n, ok := cat.Note(dir + ".md"); ok {
		return "\"" + dir + "\" is a note (" + n.Path + "), not a folder: read_note reads it; path takes a folder.", nil
	}
	hint := "No note or file is in a folder \"" + dir + "\""
	if alike != "" {
		return hint + ": folder names are case-sensitive; did you mean \"" + alike + "\"?", nil
	}
	return hint + ": list_folders lists the folders.", nil
}
