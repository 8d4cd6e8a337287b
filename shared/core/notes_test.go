package core

import (
	"testing"
)

func TestTruncateText(t *testing.T) {
	text := "First paragraph here.\n\nSecond paragraph is longer. It has two sentences.\n\nThird."
	for _, c := range []struct {
		max  int
		want string
	}{
		{1000, text},
		{60, "First paragraph here.\n\nSecond paragraph is longer."},
		{30, "First paragraph here."},
	} {
		got, cut := truncateText(text, c.max)
		if got != c.want || cut != (c.want != text) {
			t.Errorf("truncateText(%d) = %q, %v; want %q", c.max, got, cut, c.want)
		}
		if len([]rune(got)) > c.max {
			t.Errorf("truncateText(%d) returned %d characters", c.max, len([]rune(got)))
		}
	}
	if got, _ := truncateText("日本語のテキストです。とても長い文章。", 12); len([]rune(got)) > 12 {
		t.Errorf("CJK truncation too long: %q", got)
	}
}
