package vault

import (
	"bytes"
	"strings"
	"unicode"
)

// LedgerLine is the log.md line of an entry: "- YYYY-MM-DD op: title",
// the form ParseLedger reads and AGENTS.md asks for. Line breaks and other
// control characters in the title become spaces.
func LedgerLine(e LedgerEntry) string {
	title := strings.Join(strings.FieldsFunc(e.Title, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if title == "" {
		title = "(untitled)"
	}
	return "- " + e.Date + " " + strings.ToLower(e.Op) + ": " + title
}

// AppendLedger returns log.md with the entry added as its last line, in
// the file's own line endings. An empty file gets a "# Log" heading first.
func AppendLedger(src []byte, e LedgerEntry) []byte {
	eol := lineEnding(src)
	out := bytes.Clone(src)
	if len(bytes.TrimSpace(out)) == 0 {
		out = []byte("# Log" + eol + eol)
	} else if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, eol...)
	}
	return append(append(out, LedgerLine(e)...), eol...)
}
