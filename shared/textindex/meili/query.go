package meili

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// quote renders s as a double-quoted Meilisearch filter value. Meilisearch
// ends the value at the first quote not escaped by a backslash, turns \" into
// a quote and then resolves backslash escapes, so escaping every backslash
// and every quote gives back s exactly; nothing in s can end the value or
// add to the expression.
func quote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// inFilter is `field IN ["a", "b"]`.
func inFilter(field string, values []string) string {
	var b strings.Builder
	b.WriteString(field + " IN [")
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(v))
	}
	b.WriteString("]")
	return b.String()
}

func kindFilter(kind string) string { return fKind + " = " + quote(kind) }

// noteFilter translates f into a filter on note documents.
func noteFilter(f textindex.Filter) string {
	parts := []string{kindFilter(kindNote)}
	if f.PathPrefix != "" {
		parts = append(parts, fPrefixes+" = "+quote(prefixHash(normPath(f.PathPrefix))))
	}
	if f.Author != "" {
		parts = append(parts, fAuthor+" = "+quote(foldKey(f.Author)))
	}
	for _, t := range f.Tags {
		parts = append(parts, fTagKeys+" = "+quote(vault.NormalizeTag(t)))
	}
	for _, e := range f.Entities {
		parts = append(parts, fEntities+" = "+quote(entityKey(e)))
	}
	if f.Paths != nil {
		ids := make([]string, len(f.Paths))
		for i, p := range f.Paths {
			ids[i] = noteID(normPath(p))
		}
		parts = append(parts, inFilter(fNote, ids))
	}
	return strings.Join(parts, " AND ")
}

// conj is one conjunction of a query, as Meilisearch q strings.
type conj struct {
	q        string // excluded terms, phrases, then bare words (the last one a prefix)
	positive string // the same without the excluded terms
}

// conjs translates q, dropping terms without words and conjunctions left
// without positive terms.
func conjs(q textindex.Query) []conj {
	var out []conj
	for _, c := range q.Any {
		var neg, phrases, bare []string
		for _, t := range c.All {
			frag, isBare, ok := termQ(t)
			switch {
			case !ok:
			case isBare:
				bare = append(bare, frag)
			default:
				phrases = append(phrases, frag)
			}
		}
		if len(phrases)+len(bare) == 0 {
			continue
		}
		for _, t := range c.Not {
			if frag, _, ok := termQ(t); ok {
				neg = append(neg, "-"+frag)
			}
		}
		pos := strings.Join(append(phrases, bare...), " ")
		out = append(out, conj{q: strings.TrimSpace(strings.Join(neg, " ") + " " + pos), positive: pos})
	}
	return out
}

// termQ renders one term for q. A single word typed bare is a bare word
// (Meilisearch matches the last one as a prefix); anything else (a phrase,
// a term of several words, a word that must match exactly, text of a script
// written without spaces) is a "phrase" of its words. ok is false when the
// term has no words. Only letters, digits, marks, spaces and the enclosing
// quotes reach q, so user text is never read as an operator.
func termQ(t textindex.Term) (frag string, bare, ok bool) {
	ws := queryWords(t.Text)
	if len(ws) == 0 {
		return "", false, false
	}
	r, _ := utf8.DecodeRuneInString(ws[0])
	if len(ws) == 1 && t.Prefix && !t.Phrase && !textindex.Unspaced(r) {
		return ws[0], true, true
	}
	return `"` + strings.Join(ws, " ") + `"`, false, true
}

// queryWords splits s into runs of letters, digits and marks, NFC; a run
// is also split where it passes between a script written without spaces and
// one written with spaces, so Meilisearch segments each part itself.
func queryWords(s string) []string {
	s = norm.NFC.String(strings.ToValidUTF8(s, " "))
	var (
		out      []string
		start    = -1
		unspaced bool
	)
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
		u := textindex.Unspaced(r)
		if start >= 0 && (!word || u != unspaced) {
			out = append(out, s[start:i])
			start = -1
		}
		if word && start < 0 {
			start, unspaced = i, u
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
