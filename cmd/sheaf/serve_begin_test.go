package main

import (
	"bytes"
	"testing"
)

// TestAfterFirstWrite: the function runs once, after the first write has
// reached the writer.
func TestAfterFirstWrite(t *testing.T) {
	var out bytes.Buffer
	var calls int
	var seen string
	w := &afterFirstWrite{w: &out, fn: func() { calls++; seen = out.String() }}
	for _, line := range []string{"{\"id\":1}\n", "{\"id\":2}\n"} {
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 || seen != "{\"id\":1}\n" {
		t.Errorf("fn ran %d times, first after %q; want once, after the first line", calls, seen)
	}
}
