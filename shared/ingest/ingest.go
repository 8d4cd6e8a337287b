// Package ingest turns a web page or a file sent by a caller into a source
// note: it fetches URLs safely (http and https only, every connection's
// address checked after DNS resolution, redirects re-checked, size and time
// bounded), converts HTML, Markdown, plain text and PDF to Markdown, and
// builds the note (frontmatter with provenance, a path under sources/).
//
// It knows no protocol and writes nothing: the ingest_url and ingest_file
// tools call Fetch or DecodeFile, then Convert, then NewNote, and write the
// note with the store's conditional Put. docs/ingest.md says what is fetched
// and refused, and why.
package ingest

import (
	"errors"
	"fmt"
)

// Reason is a stable, machine-readable refusal class. The MCP surface puts
// it beside the error kind (as the field "reason"), so an agent can branch
// on it; the message is for people.
type Reason string

// The refusal reasons.
const (
	ReasonURLInvalid         Reason = "url-invalid"          // not an absolute http(s) URL, or malformed
	ReasonSchemeNotAllowed   Reason = "scheme-not-allowed"   // a scheme other than http or https
	ReasonCredentialsInURL   Reason = "credentials-in-url"   // user:password@ in the URL
	ReasonAddressForbidden   Reason = "address-forbidden"    // the host is (or resolves to) a private, loopback, link-local, ... address
	ReasonHostNotFound       Reason = "host-not-found"       // DNS has no address for the host
	ReasonTooManyRedirects   Reason = "too-many-redirects"   // more redirects than Limits.MaxRedirects
	ReasonTooLarge           Reason = "too-large"            // the body (or the file) is over the size limit
	ReasonTimeout            Reason = "timeout"              // the server was too slow (total or between reads)
	ReasonHTTPStatus         Reason = "http-status"          // the server answered with a status other than 2xx
	ReasonFetchFailed        Reason = "fetch-failed"         // the connection failed (refused, reset, TLS, ...)
	ReasonContentType        Reason = "content-type"         // a media type other than HTML, Markdown, plain text or PDF
	ReasonContentMismatch    Reason = "content-mismatch"     // the bytes are not what the media type says
	ReasonUnreadable         Reason = "unreadable"           // the document cannot be parsed (a broken PDF, ...)
	ReasonEncrypted          Reason = "encrypted"            // a password-protected PDF
	ReasonEmpty              Reason = "empty"                // nothing readable in it (an image-only PDF, an empty page)
	ReasonBase64Invalid      Reason = "base64-invalid"       // ingest_file's content is not base64
	ReasonNameInvalid        Reason = "name-invalid"         // ingest_file's name is empty or unusable
	ReasonDocumentTooComplex Reason = "document-too-complex" // more pages or decoded content than the converter accepts
)

// Error is a refusal or failure of an ingest step. Message is written for a
// person and never holds Go error text, addresses of the server's own
// network or file paths; the underlying error (for the log) is Unwrap's.
type Error struct {
	Reason    Reason
	Message   string
	Retryable bool           // true when the same call may succeed later (a timeout, a 503)
	Fields    map[string]any // extra structured detail: status, limit, media_type, ...
	Err       error          // the cause, for the log only
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Err }

func refuse(r Reason, fields map[string]any, format string, args ...any) *Error {
	return &Error{Reason: r, Fields: fields, Message: fmt.Sprintf(format, args...)}
}

// ReasonOf returns err's Reason, or "" when err is not an ingest Error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}
