package core

import (
	"context"
	"path"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// missingFolder explains an empty list of the folder dir (clean, not the
// root): "" when the folder exists, else what is wrong and what to send
// instead. A folder that leads out of the vault (a symlink) is
// path-invalid, as list_folders says.
func missingFolder(ctx context.Context, v *Vault, cat *vault.Catalog, dir string) (string, error) {
	prefix := dir + "/"
	for _, p := range cat.Paths() {
		if strings.HasPrefix(p, prefix) {
			return "", nil
		}
	}
	file := ""
	for _, a := range cat.Attachments() {
		if strings.HasPrefix(a.Path, prefix) {
			return "", nil
		}
		if a.Path == dir {
			file = a.Path
		}
	}
	if file != "" {
		return "\"" + file + "\" is an attachment, not a folder: read_attachment reads it; path takes a folder.", nil
	}
	if _, err := v.Store.Folders(ctx, dir); err != nil {
		return "", argPathError("path", err)
	}
	parent := path.Dir(dir)
	if parent == "." {
		parent = ""
	}
	folders, err := v.Store.Folders(ctx, parent)
	if err != nil {
		return "", nil // the list stands; no hint rather than a failure
	}
	var alike string
	for _, f := range folders {
		if f == dir {
			return "", nil
		}
		if alike == "" && strings.EqualFold(f, dir) {
			alike = f
		}
	}
	if n, ok := cat.Note(dir); ok {
		return "\"" + n.Path + "\" is a note, not a folder: read_note reads it; path takes a folder.", nil
	}
	if n, ok := cat.Note(dir + ".md"); ok {
		return "\"" + dir + "\" is a note (" + n.Path + "), not a folder: read_note reads it; path takes a folder.", nil
	}
	hint := "No folder \"" + dir + "\" in the vault"
	if alike != "" {
		return hint + ": folder names are case-sensitive; did you mean \"" + alike + "\"?", nil
	}
	return hint + ": list_folders lists the folders.", nil
}
