// Package auth is who is calling and what they may do: the caller's
// Identity (established by the transport from an API key or an OAuth access
// token), its scopes and folder allowlist, the keys file, signed stateless
// cursors and the per-identity rate limit of paid tools.
package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// LocalSubject is the subject of an unauthenticated local caller (stdio, or
// HTTP on loopback with no credentials configured).
const LocalSubject = "local"

// Scope is what a caller may do. Scopes nest: admin includes write, write
// includes read.
type Scope string

// The scopes, weakest first.
const (
	ScopeRead  Scope = "read"  // every read tool
	ScopeWrite Scope = "write" // note edits, proposals' review
	ScopeAdmin Scope = "admin" // whole-vault maintenance (reindexing)
)

// Scopes lists the scopes, weakest first.
var Scopes = []Scope{ScopeRead, ScopeWrite, ScopeAdmin}

func (s Scope) rank() int { return slices.Index(Scopes, s) }

// ParseScope reads a scope name.
func ParseScope(s string) (Scope, error) {
	sc := Scope(strings.ToLower(strings.TrimSpace(s)))
	if sc.rank() < 0 {
		return "", fmt.Errorf("unknown scope %q (read, write or admin)", s)
	}
	return sc, nil
}

// Profiles a caller may be limited to: the dozen most used tools, or all.
const (
	ProfileCore = "core"
	ProfileFull = "full"
)

// Identity is the caller of a tool, as the transport established it.
type Identity struct {
	// Subject is the stable id of the caller: "key:<id>" for an API key,
	// "oauth:<sub>" for an access token, "token:<hash>" for the single
	// --token, LocalSubject on stdio. Cursors and rate limits key on it.
	Subject string
	// Name is a label for people: a key's name, a token's client.
	Name string
	// Granted are the scopes held (each implies the weaker ones).
	Granted []Scope
	// Folders limits the paths the caller may see and touch; nil (or an
	// empty allowlist) means the whole vault, always excepting AlwaysDenied.
	Folders *Folders
	// ProposeOnly turns the caller's writes into proposals.
	ProposeOnly bool
	// Profile limits the caller's tools to ProfileCore; "" or ProfileFull
	// leaves the server's profile.
	Profile string
}

// Local is the identity of a caller the transport did not authenticate
// because nothing asks it to (stdio; loopback HTTP without credentials):
// the machine's own user, who may do everything.
func Local() Identity {
	return Identity{Subject: LocalSubject, Name: LocalSubject, Granted: []Scope{ScopeAdmin}}
}

// Has reports whether the identity holds scope s (directly or through a
// stronger scope).
func (id Identity) Has(s Scope) bool {
	want := s.rank()
	for _, g := range id.Granted {
		if g.rank() >= want && want >= 0 {
			return true
		}
	}
	return false
}

// Scoped reports whether the identity is limited to some folders.
func (id Identity) Scoped() bool { return id.Folders.Limited() }

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx, or Local when the transport set
// none (stdio, in-process calls). An authenticating transport always sets
// one, or rejects the request.
func IdentityFrom(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok && id.Subject != "" {
		return id
	}
	return Local()
}
