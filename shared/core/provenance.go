package core

import (
	"time"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Provenance is where a note comes from and how fresh it is, on every hit
// and listing, filled from the catalog (no note is read for it).
type Provenance struct {
	UpdatedAt      string         `json:"updated_at,omitempty" jsonschema:"when the note last changed (RFC 3339)"`
	SourceURL      string         `json:"source_url,omitempty" jsonschema:"the frontmatter source_url: where the note's content came from"`
	DerivedFromIDs []string       `json:"derived_from_ids,omitempty" jsonschema:"the frontmatter derived_from_ids: the ids of the notes it was written from"`
	ExpiresAt      string         `json:"expires_at,omitempty" jsonschema:"the frontmatter expires_at, when the note has one"`
	IsStale        *bool          `json:"is_stale,omitempty" jsonschema:"true when expires_at is in the past: check the note against its source before relying on it"`
	Metadata       map[string]any `json:"metadata,omitempty" jsonschema:"with include: [\"metadata\"]: the note's whole frontmatter"`
}

// IncludeArg is the include argument of the tools that list notes.
type IncludeArg struct {
	Include []string `json:"include,omitempty" jsonschema:"Extra fields on each item: \"metadata\" adds the note's frontmatter as metadata." schema:"maxItems=4,itemEnum=metadata"`
}

func (a IncludeArg) metadata() bool {
	for _, s := range a.Include {
		if s == "metadata" {
			return true
		}
	}
	return false
}

// noteProvenance is n's provenance at now.
func noteProvenance(n vault.Note, now time.Time, metadata bool) Provenance {
	stale := false
	p := Provenance{SourceURL: n.SourceURL, DerivedFromIDs: n.DerivedFromIDs, IsStale: &stale}
	if !n.Modified.IsZero() {
		p.UpdatedAt = n.Modified.UTC().Format(time.RFC3339)
	}
	if exp, ok := expiry(n.Frontmatter["expires_at"]); ok {
		p.ExpiresAt = exp.UTC().Format(time.RFC3339)
		stale = !exp.After(now)
	}
	if metadata && len(n.Frontmatter) > 0 {
		p.Metadata = n.Frontmatter
	}
	return p
}

// expiry reads an expires_at value: a YAML timestamp, or a string holding
// an RFC 3339 date-time or a date (which expires at its start, UTC).
func expiry(v any) (time.Time, bool) {
	switch v := v.(type) {
	case time.Time:
		return v, true
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", time.DateOnly} {
			if t, err := time.Parse(layout, v); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}
