package ingest

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// Pages are decoded from UTF-8, UTF-16 and the single-byte charsets of the
// WHATWG Encoding standard (windows-1252, which also serves ISO-8859-1 and
// ASCII, the other ISO-8859 and windows-125x code pages, KOI8, IBM866,
// macintosh). The legacy multi-byte charsets (Shift_JIS, EUC-JP,
// ISO-2022-JP, GBK, GB18030, Big5, EUC-KR) are refused with a clear
// error rather than decoded: their tables (about 0.6 MB, through
// golang.org/x/net/html/charset) kept the Lambda bootstrap over 30 MB,
// and such pages are now rare (over 98% of the web is UTF-8).

// singleByte maps a WHATWG label to its single-byte decoding.
var singleByte = map[string]encoding.Encoding{}

// multiByte lists the labels of the legacy multi-byte charsets, which are
// refused by name.
var multiByte = map[string]string{}

func init() {
	add := func(e encoding.Encoding, labels ...string) {
		for _, l := range labels {
			singleByte[l] = e
		}
	}
	add(charmap.Windows1252, "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
		"iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252")
	add(charmap.Windows1254, "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9", "iso_8859-9:1989",
		"l5", "latin5", "windows-1254", "cp1254", "x-cp1254")
	add(charmap.Windows874, "dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874")
	iso := map[int]encoding.Encoding{2: charmap.ISO8859_2, 3: charmap.ISO8859_3, 4: charmap.ISO8859_4, 5: charmap.ISO8859_5,
		6: charmap.ISO8859_6, 7: charmap.ISO8859_7, 8: charmap.ISO8859_8, 10: charmap.ISO8859_10, 13: charmap.ISO8859_13,
		14: charmap.ISO8859_14, 15: charmap.ISO8859_15, 16: charmap.ISO8859_16}
	for n, e := range iso {
		add(e, fmt.Sprintf("iso-8859-%d", n), fmt.Sprintf("iso8859-%d", n), fmt.Sprintf("iso8859%d", n), fmt.Sprintf("iso_8859-%d", n))
	}
	add(charmap.ISO8859_2, "csisolatin2", "iso-ir-101", "iso_8859-2:1987", "l2", "latin2")
	add(charmap.ISO8859_5, "csisolatincyrillic", "cyrillic", "iso-ir-144", "iso_8859-5:1988")
	add(charmap.ISO8859_7, "csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-ir-126", "iso_8859-7:1987", "sun_eu_greek")
	add(charmap.ISO8859_8, "csisolatinhebrew", "hebrew", "iso-ir-138", "iso_8859-8:1988", "visual")
	add(charmap.ISO8859_8I, "csiso88598i", "iso-8859-8-i", "logical")
	add(charmap.ISO8859_15, "csisolatin9", "l9")
	for n, e := range map[int]encoding.Encoding{1250: charmap.Windows1250, 1251: charmap.Windows1251, 1253: charmap.Windows1253,
		1255: charmap.Windows1255, 1256: charmap.Windows1256, 1257: charmap.Windows1257, 1258: charmap.Windows1258} {
		add(e, fmt.Sprintf("windows-%d", n), fmt.Sprintf("cp%d", n), fmt.Sprintf("x-cp%d", n))
	}
	add(charmap.KOI8R, "cskoi8r", "koi", "koi8", "koi8-r", "koi8_r")
	add(charmap.KOI8U, "koi8-ru", "koi8-u")
	add(charmap.CodePage866, "866", "cp866", "csibm866", "ibm866")
	add(charmap.Macintosh, "csmacintosh", "mac", "macintosh", "x-mac-roman")
	add(charmap.MacintoshCyrillic, "x-mac-cyrillic", "x-mac-ukrainian")
	add(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le")
	add(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "unicodefffe", "utf-16be")
	for name, labels := range map[string][]string{
		"Shift_JIS":   {"csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"},
		"EUC-JP":      {"cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"},
		"ISO-2022-JP": {"csiso2022jp", "iso-2022-jp"},
		"GBK":         {"chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58", "x-gbk"},
		"GB18030":     {"gb18030"},
		"Big5":        {"big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"},
		"EUC-KR":      {"cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"},
	} {
		for _, l := range labels {
			multiByte[l] = name
		}
	}
}

// isUTF8Label reports whether label names UTF-8.
func isUTF8Label(label string) bool {
	switch label {
	case "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8":
		return true
	}
	return false
}

// decodeLabel decodes body from the charset label names: known is false
// for a label that names no charset (the caller looks further); a legacy
// multi-byte charset is refused.
func decodeLabel(body []byte, label string) (out []byte, known bool, err error) {
	label = strings.ToLower(strings.TrimSpace(label))
	switch {
	case isUTF8Label(label):
		return body, true, nil
	case singleByte[label] != nil:
		out, err := singleByte[label].NewDecoder().Bytes(body)
		if err != nil {
			return nil, true, &Error{Reason: ReasonUnreadable, Message: fmt.Sprintf("The text could not be decoded from %s.", label), Err: err}
		}
		return out, true, nil
	case multiByte[label] != "":
		return nil, true, refuse(ReasonUnreadable, map[string]any{"charset": multiByte[label]},
			"The document is encoded in %s, a legacy charset Sheaf does not decode: save it as UTF-8 and ingest that copy.", multiByte[label])
	}
	return nil, false, nil
}

// decodeHTML returns an HTML page as UTF-8, its charset found as browsers
// find it: a byte order mark, then the Content-Type's charset, then a
// <meta> in the first 1024 bytes, else UTF-8 when those bytes are valid
// UTF-8 and windows-1252 when not.
func decodeHTML(body []byte, contentCharset string) ([]byte, error) {
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return body[3:], nil
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		out, _, err := decodeLabel(body[2:], "utf-16le")
		return out, err
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		out, _, err := decodeLabel(body[2:], "utf-16be")
		return out, err
	}
	if contentCharset != "" {
		if out, known, err := decodeLabel(body, contentCharset); known {
			return out, err
		}
	}
	head := body[:min(len(body), 1024)]
	if label := metaCharset(head); label != "" {
		if strings.HasPrefix(label, "utf-16") {
			label = "utf-8" // a meta cannot be read in UTF-16: the HTML standard takes it as UTF-8
		}
		if out, known, err := decodeLabel(body, label); known {
			return out, err
		}
	}
	if validPrefix(head) {
		return body, nil
	}
	out, _, err := decodeLabel(body, "windows-1252")
	return out, err
}

// validPrefix reports whether b is valid UTF-8 but for a rune cut at its end.
func validPrefix(b []byte) bool {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return true
		}
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return false
		}
		b = b[:len(b)-1]
	}
	return utf8.Valid(b)
}

// metaCharset is the charset a <meta charset> or <meta http-equiv
// content-type> in head declares, "" when none does.
func metaCharset(head []byte) string {
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content string
			var httpEquiv bool
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch strings.ToLower(string(k)) {
				case "charset":
					cs = string(v)
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(string(v), "content-type")
				}
			}
			if cs != "" {
				return cs
			}
			if httpEquiv {
				if cs := contentCharset(content); cs != "" {
					return cs
				}
			}
		}
	}
}

// contentCharset is the charset parameter of a Content-Type value.
func contentCharset(ct string) string {
	i := strings.Index(strings.ToLower(ct), "charset")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(ct[i+len("charset"):], " \t")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.Trim(strings.TrimLeft(rest[1:], " \t"), `"'`)
	if j := strings.IndexAny(rest, `;"' `); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
