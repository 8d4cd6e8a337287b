package meilifake

import "strings"

// The fake finds the documents a filter may match through an index of
// field values when the filter pins a field to a few strings (the
// adapter's deletions name the notes they touch): without it every
// deletion scans every document, so a big index would time the fake, not
// the adapter. The filter is still evaluated on each candidate; this only
// skips documents that cannot match.

// pinned returns a field and the lower-cased strings it must equal in any
// document f matches, when f says so: a condition `field = "x"` or `field
// IN ["x", ...]` with no numeric literal (a number may match a numeric
// field), an AND holding one, or an OR whose every branch pins the same
// field.
func pinned(f filter) (field string, vals []string, ok bool) {
	switch f := f.(type) {
	case cond:
		if f.op != "=" && f.op != "IN" {
			return "", nil, false
		}
		for _, v := range f.values {
			if v.isNum {
				return "", nil, false
			}
			vals = append(vals, v.lower)
		}
		return f.field, vals, true
	case andFilter:
		for _, g := range f {
			if field, vals, ok := pinned(g); ok {
				return field, vals, true
			}
		}
	case orFilter:
		for i, g := range f {
			gf, gv, ok := pinned(g)
			if !ok || i > 0 && gf != field {
				return "", nil, false
			}
			field, vals = gf, append(vals, gv...)
		}
		return field, vals, len(f) > 0
	}
	return "", nil, false
}

// candidates returns the ids of the documents f may match: those holding
// one of the pinned strings, or every document when f pins nothing. s.mu
// must be held.
func (ix *index) candidates(f filter) []string {
	field, vals, ok := ix.narrowest(f)
	if !ok {
		ids := make([]string, 0, len(ix.docs))
		for id := range ix.docs {
			ids = append(ids, id)
		}
		return ids
	}
	byValue := ix.valueIndex(field)
	var ids []string
	for _, v := range vals {
		for id := range byValue[v] {
			ids = append(ids, id)
		}
	}
	return ids
}

// narrowest is pinned, but of an AND the pinning branch holding the fewest
// documents: the adapter's deletions say `kind = "passage" AND (note = ...
// OR ...)`, and the kind alone pins every passage. s.mu must be held.
func (ix *index) narrowest(f filter) (field string, vals []string, ok bool) {
	and, isAnd := f.(andFilter)
	if !isAnd {
		return pinned(f)
	}
	best := -1
	for _, g := range and {
		gf, gv, gok := pinned(g)
		if !gok {
			continue
		}
		n, byValue := 0, ix.valueIndex(gf)
		for _, v := range gv {
			n += len(byValue[v])
		}
		if best < 0 || n < best {
			field, vals, ok, best = gf, gv, true, n
		}
	}
	return field, vals, ok
}

// valueIndex returns the documents by lower-cased string value of field,
// built on first use and kept current by indexValues.
func (ix *index) valueIndex(field string) map[string]map[string]bool {
	if m := ix.byValue[field]; m != nil {
		return m
	}
	if ix.byValue == nil {
		ix.byValue = map[string]map[string]map[string]bool{}
	}
	m := map[string]map[string]bool{}
	ix.byValue[field] = m
	for id, d := range ix.docs {
		addValues(m, id, d[field], true)
	}
	return m
}

// indexValues adds document id (or removes it) in every value index.
func (ix *index) indexValues(id string, d map[string]any, add bool) {
	for field, m := range ix.byValue {
		addValues(m, id, d[field], add)
	}
}

func addValues(m map[string]map[string]bool, id string, v any, add bool) {
	switch x := v.(type) {
	case string:
		k := strings.ToLower(x)
		if add {
			if m[k] == nil {
				m[k] = map[string]bool{}
			}
			m[k][id] = true
		} else if ids := m[k]; ids != nil {
			delete(ids, id)
			if len(ids) == 0 {
				delete(m, k)
			}
		}
	case []any:
		for _, e := range x {
			addValues(m, id, e, add)
		}
	}
}
