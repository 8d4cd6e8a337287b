package vault

import (
	"strings"
)

// Ignored reports whether the vault path p is kept out of the index and
// out of `sheaf sync`: hidden (IsHidden: Sheaf's .sheaf/, the editor's
// .obsidian/ and .trash/, Syncthing's .stfolder, .stversions and
// .syncthing.*.tmp files, ...) or a sync tool's own working file (see
// SyncToolFile). It is the one rule the indexer and the sync engine share.
func Ignored(p string) bool {
	return IsHidden(p) || SyncToolFile(p)
}

// Working files of the sync tools people keep vaults in step with, by
// file name. Only names that are never a person's note are listed: the
// tools' conflict copies (Syncthing's "x.sync-conflict-....md", rclone
// bisync's "x.md.conflict1") hold real text and stay indexed.
var (
	// syncToolNames are exact file names.
	syncToolNames = []string{
		// Remotely Save (Obsidian plugin): its metadata on the remote, the
		// JSON form and the later obfuscated one.
		"_remotely-save-metadata-on-remote.json",
		"_remotely-save-metadata-on-remote.bin",
		// rclone bisync's --check-access marker.
		"RCLONE_TEST",
	}
	// syncToolPrefixes start file names.
	syncToolPrefixes = []string{
		// Syncthing's temporary file on Windows (on Unix it is
		// ".syncthing.NAME.tmp", hidden).
		"~syncthing~",
	}
	// syncToolSuffixes end file names.
	syncToolSuffixes = []string{
		// rclone's partial upload, NAME.XXXXXXXX.partial, renamed into
		// place when complete (the default --partial-suffix).
		".partial",
	}
)

// SyncToolFile reports whether the last segment of p names a sync tool's
// working file (metadata, a partial transfer, a temporary file) rather
// than the vault's content. Hidden ones are caught by IsHidden already.
func SyncToolFile(p string) bool {
	name := p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		name = p[i+1:]
	}
	for _, n := range syncToolNames {
		if name == n {
			return true
		}
	}
	for _, pre := range syncToolPrefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	for _, suf := range syncToolSuffixes {
		if len(name) > len(suf) && strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}
