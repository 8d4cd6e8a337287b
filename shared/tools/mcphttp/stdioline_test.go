package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// FuzzIDScanner: on any JSON object with one top-level "id" of a short
// number or string, the scanner finds what encoding/json finds; on any
// input it never panics.
func FuzzIDScanner(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"params":{"id":"inner"},"id":"outer"}`,
		`{"a":"\"id\":3","id":-2.5e3}`, `{"id" : "x\\\"y"}`, `{"id":null}`, `[1,{"id":2}]`, `{"id":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var sc idScanner
		sc.feed([]byte(s))
		got := sc.id()
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &obj) != nil || strings.Count(s, `"id"`) != 1 {
			return
		}
		want, ok := obj["id"]
		if !ok || len(want) > 60 || (want[0] != '"' && (want[0] < '0' || want[0] > '9') && want[0] != '-') {
			return
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: id %s, want %s", s, got, want)
		}
	})
}

// TestIDScannerLongID: an id longer than the scanner keeps is not echoed
// cut (a cut number is another valid id).
func TestIDScannerLongID(t *testing.T) {
	var sc idScanner
	sc.feed([]byte(`{"id":` + strings.Repeat("7", 70) + `,"method":"x"}`))
	if got := sc.id(); got != nil {
		t.Errorf("id %s, want none", got)
	}
}

// TestReadLineBounded: lines up to the limit come whole; a longer one is
// skipped to its end, its length counted.
func TestReadLineBounded(t *testing.T) {
	in := "short\n" + strings.Repeat("y", 200000) + "\nlast"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	if l, err := readLine(r, 100); string(l) != "short\n" || err != nil {
		t.Fatalf("first: %q %v", l, err)
	}
	var tooLong *errLineTooLong
	if _, err := readLine(r, 100); !errors.As(err, &tooLong) || tooLong.n != 200001 {
		t.Fatalf("second: %v", err)
	}
	if l, err := readLine(r, 100); string(l) != "last" || err == nil {
		t.Fatalf("last: %q %v", l, err)
	}
}

// TestWarnAndUp: mcp-go's info records (a refused event-stream GET, on
// every connect) are dropped, its warnings kept.
func TestWarnAndUp(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(warnAndUp{slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})}).With("k", "v")
	log.Info("Rejected GET request: streaming is disabled")
	log.Warn("something wrong")
	if out := b.String(); strings.Contains(out, "Rejected GET") || !strings.Contains(out, "something wrong") || !strings.Contains(out, "k=v") {
		t.Errorf("logged:\n%s", out)
	}
}
