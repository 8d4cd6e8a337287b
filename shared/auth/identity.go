// Package auth holds who is calling and what they may carry between calls:
// the caller's Identity (from the transport) and signed, stateless cursors.
package auth

import "context"

// LocalSubject is the subject of an unauthenticated local caller (stdio, or
// HTTP without a token).
const LocalSubject = "local"

// Identity is the caller of a tool, as the transport established it.
type Identity struct {
	Subject string // stable id of the token's owner; LocalSubject on stdio
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx, or the local identity when the
// transport set none (or set an empty subject).
func IdentityFrom(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok && id.Subject != "" {
		return id
	}
	return Identity{Subject: LocalSubject}
}
