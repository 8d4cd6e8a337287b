package vault

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want error
	}{
		{"empty", nil, nil},
		{"text", []byte("# Title\r\n\tbody 日本語 🚀\f\n"), nil},
		{"NUL", []byte("text\x00more"), ErrBinary},
		{"PNG", []byte("\x89PNG\r\n\x1a\nrest"), ErrBinary},
		{"PDF", []byte("%PDF-1.7\n"), ErrBinary},
		{"controls", bytes.Repeat([]byte("ab\x01\x02\x03"), 100), ErrBinary},
		{"invalid UTF-8", []byte("caf\xe9"), ErrInvalidUTF8},
		{"invalid UTF-8 late", append(bytes.Repeat([]byte("a"), 10000), 0xff), ErrInvalidUTF8},
		{"NUL after 8 KiB", []byte(strings.Repeat("a", 9000) + "\x00"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(tt.src); !errors.Is(got, tt.want) {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
		})
	}
}
