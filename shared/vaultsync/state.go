package vaultsync

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
)

// stateVersion is the version of the state file written.
const stateVersion = 1

// State is what the last sync of one local folder with one remote vault
// left: per path, the content both sides held then. It is what tells a
// change on one side from a change on the other, and a conflict from both.
// It lives outside the vault (see StatePath), never inside it: a vault is
// often synced by other tools too, which would carry it to other machines.
type State struct {
	Version int              `json:"version"`
	Local   string           `json:"local"`  // the local folder, absolute
	Remote  string           `json:"remote"` // the remote vault's URL, without keys
	Files   map[string]Entry `json:"files"`

	path string
	mu   sync.Mutex
}

// Entry is one path as last synced.
type Entry struct {
	Hash          string `json:"hash"`                     // hex SHA-256 of the content both sides held
	LocalETag     string `json:"local_etag"`               // the local file's ETag then (modification time and size)
	RemoteETag    string `json:"remote_etag"`              // the remote object's ETag then
	RemoteVersion string `json:"remote_version,omitempty"` // its version id, where the remote has versions
}

// StatePath is where the state of syncing local with remote is kept: under
// dir when given (--state), else in the user's cache folder
// (~/.cache/sheaf/sync on Linux), named after the local folder's name and
// a hash of both ends.
func StatePath(dir, local, remote string) (string, error) {
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder for the sync state (set --state): %w", err)
		}
		dir = filepath.Join(cache, "sheaf", "sync")
	}
	sum := sha256.Sum256([]byte(local + "\x00" + remote))
	name := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, filepath.Base(local))
	if len(name) > 40 {
		name = name[:40]
	}
	return filepath.Join(dir, "sync-"+name+"-"+hex.EncodeToString(sum[:6])+".json"), nil
}

// LoadState reads the state at path, or starts an empty one when there is
// none. A state file of another pair of ends is refused: it says nothing
// about this one.
func LoadState(path, local, remote string) (*State, error) {
	s := &State{Version: stateVersion, Local: local, Remote: remote, Files: map[string]Entry{}, path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var got State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&got); err != nil {
		return nil, fmt.Errorf("sync state %s: %w (delete it to start over: the next sync compares contents)", path, err)
	}
	switch {
	case got.Version != stateVersion:
		return nil, fmt.Errorf("sync state %s: version %d, want %d (delete it to start over)", path, got.Version, stateVersion)
	case got.Local != local || got.Remote != remote:
		return nil, fmt.Errorf("sync state %s is of %s and %s, not %s and %s", path, got.Local, got.Remote, local, remote)
	}
	if got.Files != nil {
		s.Files = got.Files
	}
	return s, nil
}

// Path is where Save writes.
func (s *State) Path() string { return s.path }

// Get returns the entry of p.
func (s *State) Get(p string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.Files[p]
	return e, ok
}

// Set records p as synced.
func (s *State) Set(p string, e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Files[p] = e
}

// Forget drops p: it is on neither side.
func (s *State) Forget(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.Files, p)
}

// Snapshot returns a copy of the entries.
func (s *State) Snapshot() map[string]Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.Files)
}

// Save writes the state atomically (a temporary file renamed into place),
// creating its folder. A state with no path (a dry run's) is not written.
func (s *State) Save() error {
	if s.path == "" {
		return nil
	}
	s.mu.Lock()
	data, err := json.Marshal(s)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".sync-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}
