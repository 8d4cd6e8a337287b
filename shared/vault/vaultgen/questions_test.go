package vaultgen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestQuestions(t *testing.T) {
	opt := Options{Notes: 300, Seed: 3}
	qs := Questions(opt, 60)
	if len(qs) != 60 {
		t.Fatalf("%d questions, want 60", len(qs))
	}
	if !reflect.DeepEqual(qs, Questions(opt, 60)) {
		t.Fatal("Questions is not deterministic")
	}
	dir := filepath.Join(t.TempDir(), "v")
	if _, err := Generate(dir, opt); err != nil {
		t.Fatal(err)
	}
	if err := WriteQuestions(dir, opt, 60); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, QuestionsFile))
	if err != nil || strings.Count(string(data), "\n") != 60 {
		t.Fatalf("questions file: %v, %d lines", err, strings.Count(string(data), "\n"))
	}
	for _, q := range qs {
		if !strings.HasSuffix(q.Question, "?") || len(q.Expected) != 1 {
			t.Errorf("question %+v: want a sentence ending in ? and one expected note", q)
		}
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(q.Expected[0])))
		if err != nil {
			t.Errorf("%q: expected note: %v", q.Question, err)
			continue
		}
		// At least one of the question's longer words is in its note as written.
		found := false
		for _, w := range strings.FieldsFunc(q.Question, func(r rune) bool { return r == ' ' || r == ',' || r == '?' }) {
			if len(w) >= 4 && strings.Contains(strings.ToLower(string(body)), w) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q shares no word with %s", q.Question, q.Expected[0])
		}
	}
	if testing.Verbose() {
		for _, q := range qs[:15] {
			t.Logf("%s -> %s", q.Question, q.Expected[0])
		}
	}
}
