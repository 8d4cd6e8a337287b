package ingest

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/net/html/charset"
)

// TestDecodeHTMLAsBrowsers: for every charset Sheaf decodes, a page is
// decoded as golang.org/x/net/html/charset (the browsers' algorithm)
// decodes it; the legacy multi-byte charsets are refused by name.
func TestDecodeHTMLAsBrowsers(t *testing.T) {
	high := string([]byte{0x80, 0x93, 0x94, 0xa9, 0xc0, 0xe9, 0xf0, 0xff})
	pages := []struct{ body, contentCharset string }{
		{"<html><head><title>x</title></head><body>plain ascii</body></html>", ""},
		{"<p>Caf\xc3\xa9 in UTF-8</p>", ""},
		{"<p>Caf\xe9 undeclared, not UTF-8</p>" + high, ""},
		{"<meta charset=\"koi8-r\"><p>" + high + "</p>", ""},
		{"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"><p>" + high + "</p>", ""},
		{"<meta charset='ISO-8859-15'><p>" + high + "</p>", "iso-8859-2"},
		{"<meta charset=\"latin1\"><p>" + high + "</p>", "nonsense"},
		{"<meta charset=\"utf-16\"><p>Caf\xc3\xa9</p>", ""},
		{"\xef\xbb\xbf<meta charset=\"windows-1252\"><p>Caf\xc3\xa9</p>", ""},
		{"\xff\xfe<\x00p\x00>\x00\xe9\x00", ""},
		{"<p>" + high + "</p>", "ibm866"},
		{"<p>" + high + "</p>", "x-mac-cyrillic"},
		{"<p>" + high + "</p>", "cp1256"},
	}
	for _, p := range pages {
		ct := "text/html"
		if p.contentCharset != "" {
			ct += "; charset=" + p.contentCharset
		}
		r, err := charset.NewReader(bytes.NewReader([]byte(p.body)), ct)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := io.ReadAll(r)
		want = bytes.TrimPrefix(want, []byte("\ufeff")) // decodeHTML drops the byte order mark
		got, err := decodeHTML([]byte(p.body), p.contentCharset)
		if err != nil {
			t.Errorf("%q (%s): %v", p.body, p.contentCharset, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%q (%s):\n got %q\nwant %q", p.body, p.contentCharset, got, want)
		}
	}
	for _, p := range []struct{ body, contentCharset string }{
		{"<meta charset=\"Shift_JIS\"><p>\x82\xa0</p>", ""},
		{"<p>\xa4\xa4</p>", "big5"},
		{"<meta http-equiv=\"content-type\" content=\"text/html;charset=euc-kr\">", ""},
	} {
		if _, err := decodeHTML([]byte(p.body), p.contentCharset); ReasonOf(err) != ReasonUnreadable {
			t.Errorf("%q (%s): %v, want a refusal (unreadable)", p.body, p.contentCharset, err)
		}
	}
	if _, err := decodeText([]byte("\x82\xa0"), "sjis"); ReasonOf(err) != ReasonUnreadable {
		t.Errorf("text in sjis: %v, want a refusal", err)
	}
	if s, err := decodeText([]byte("Cr\xe8me"), "latin1"); err != nil || s != "Crème" {
		t.Errorf("text in latin1: %q, %v", s, err)
	}
}
