package ingest

import (
	"encoding/base64"
	"mime"
	"strings"
	"unicode/utf8"
)

// DefaultMaxFileBytes is ingest_file's default size limit (decoded).
const DefaultMaxFileBytes = 10 << 20

// File is content a caller sent to ingest_file, decoded and checked.
type File struct {
	Name      string
	MediaType string // as declared, lowercased without parameters ("" when none was declared)
	Charset   string // the declared charset parameter, if any
	Body      []byte
}

// DecodeFile checks ingest_file's arguments: name (non-empty, at most 255
// bytes, no control characters; only its last path segment is kept),
// content_base64 (standard or URL-safe base64, padded or not, whitespace
// ignored; at most max bytes once decoded, checked before decoding) and
// media_type (optional; a parameter such as charset is kept). It does not
// decide the format: Convert checks the media type against the bytes.
func DecodeFile(name, contentBase64, mediaType string, max int64) (*File, error) {
	if max <= 0 {
		max = DefaultMaxFileBytes
	}
	f, err := CheckFile(name, mediaType)
	if err != nil {
		return nil, err
	}
	// Bound the work before decoding: base64 is 4 bytes for 3.
	chars := int64(0)
	for i := 0; i < len(contentBase64); i++ {
		if c := contentBase64[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			chars++
		}
	}
	if chars/4*3 > max+2 {
		return nil, tooLarge(max, chars/4*3)
	}
	s := strings.Join(strings.Fields(contentBase64), "")
	body, err := decodeBase64(s)
	if err != nil {
		return nil, &Error{Reason: ReasonBase64Invalid, Message: "content_base64 is not valid base64.", Err: err}
	}
	if int64(len(body)) > max {
		return nil, tooLarge(max, int64(len(body)))
	}
	if len(body) == 0 {
		return nil, refuse(ReasonEmpty, nil, "The file is empty.")
	}
	f.Body = body
	return f, nil
}

// CheckFile checks a file's name and declared media type (see DecodeFile)
// and returns the File without its body.
func CheckFile(name, mediaType string) (*File, error) {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case name == "" || name == "." || name == "..":
		return nil, refuse(ReasonNameInvalid, nil, "The name is empty: send the file's name, such as \"report.pdf\".")
	case len(name) > 255 || !utf8.ValidString(name):
		return nil, refuse(ReasonNameInvalid, nil, "The name must be valid UTF-8 of at most 255 bytes.")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return nil, refuse(ReasonNameInvalid, nil, "The name contains a control character.")
	}
	f := &File{Name: name}
	if mediaType = strings.TrimSpace(mediaType); mediaType != "" {
		mt, params, err := mime.ParseMediaType(mediaType)
		if err != nil {
			return nil, refuse(ReasonContentType, map[string]any{"accepted": acceptedTypes},
				"The media_type %q is malformed: send one such as \"application/pdf\" or \"text/markdown\".", clip(mediaType, 100))
		}
		f.MediaType, f.Charset = strings.ToLower(mt), params["charset"]
		if _, err := formatOfType(f.MediaType); err != nil && !sniffable(f.MediaType) {
			return nil, err
		}
	}
	return f, nil
}

// NewFile is DecodeFile of bytes already decoded (an uploaded object):
// name and media type checked, at most max bytes, not empty.
func NewFile(name, mediaType string, body []byte, max int64) (*File, error) {
	f, err := CheckFile(name, mediaType)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(body)) > max {
		return nil, tooLarge(max, int64(len(body)))
	}
	if len(body) == 0 {
		return nil, refuse(ReasonEmpty, nil, "The file is empty.")
	}
	f.Body = body
	return f, nil
}

// decodeBase64 accepts the standard and URL-safe alphabets, padded or not.
func decodeBase64(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
		s = strings.TrimRight(s, "=")
	}
	return enc.Strict().DecodeString(s)
}

// Source makes the Source Convert reads.
func (f *File) Source() Source {
	return Source{Body: f.Body, MediaType: f.MediaType, Charset: f.Charset, Name: f.Name}
}
