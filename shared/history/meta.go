package history

import (
	"net/url"
	"strings"
	"time"
)

// Object metadata keys (S3 x-amz-meta-*, lower case as S3 returns them)
// that carry a version's attribution on stores that keep metadata with
// each object version. Values are URL-path-escaped: S3 metadata is HTTP
// headers, ASCII only.
const (
	MetaHash        = "sheaf-hash"
	MetaOp          = "sheaf-op"
	MetaSubject     = "sheaf-author"
	MetaName        = "sheaf-author-name"
	MetaTool        = "sheaf-tool"
	MetaTransaction = "sheaf-tx"
	MetaFrom        = "sheaf-from"
	MetaMerged      = "sheaf-merged"
	MetaRestored    = "sheaf-restored"
	MetaTime        = "sheaf-time"
)

// MaxMeta is the most bytes of metadata Metadata returns: S3 allows 2 KB of
// user metadata per object, keys and values together.
const MaxMeta = 2048

// Metadata is the attribution of c as object metadata: the write path puts
// it in store.PutOptions.Meta of the write it is about to make, so that the
// object version carries it (stores without metadata ignore it). Fields
// that do not fit in MaxMeta are left out, the least needed first (the
// author's name, then the tool); the content hash and op always fit.
func Metadata(c Change) map[string]string {
	m := map[string]string{
		MetaHash: Hash(c.Data),
		MetaOp:   string(c.Op),
	}
	set := func(k, v string) {
		if v != "" {
			m[k] = url.PathEscape(v)
		}
	}
	set(MetaSubject, c.Author.Subject)
	set(MetaTransaction, c.Transaction)
	set(MetaFrom, c.From)
	set(MetaMerged, c.Merged)
	set(MetaRestored, c.Restored)
	if !c.Time.IsZero() {
		m[MetaTime] = c.Time.UTC().Format(time.RFC3339Nano)
	}
	for _, kv := range [][2]string{{MetaTool, c.Tool}, {MetaName, c.Author.Name}} {
		if v := url.PathEscape(kv[1]); kv[1] != "" && metaSize(m)+len(kv[0])+len(v) <= MaxMeta {
			m[kv[0]] = v
		}
	}
	return m
}

func metaSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// FromMetadata fills v's attribution from object metadata written by
// Metadata. ok is false when meta holds none (an object written outside
// Sheaf): v is then an OpExternal version by ExternalAuthor.
func FromMetadata(v *Version, meta map[string]string) (ok bool) {
	get := func(k string) string {
		raw, found := meta[k]
		if !found {
			raw = meta[strings.ToLower(k)]
		}
		s, err := url.PathUnescape(raw)
		if err != nil {
			return raw
		}
		return s
	}
	op := Op(get(MetaOp))
	if op == "" {
		v.Op, v.Author = OpExternal, ExternalAuthor
		return false
	}
	v.Op = op
	if h := get(MetaHash); h != "" {
		v.Hash = h
	}
	v.Author = Author{Subject: get(MetaSubject), Name: get(MetaName)}
	v.Tool = get(MetaTool)
	v.Transaction = get(MetaTransaction)
	v.From = get(MetaFrom)
	v.Merged = get(MetaMerged)
	v.Restored = get(MetaRestored)
	if t, err := time.Parse(time.RFC3339Nano, get(MetaTime)); err == nil {
		v.Time = t
	}
	return true
}
