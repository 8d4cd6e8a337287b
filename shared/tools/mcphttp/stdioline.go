package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// errLineTooLong is a stdio message longer than the limit; readLine has
// read it to its end and kept none of it.
type errLineTooLong struct {
	n  int64           // its length in bytes, line break included
	id json.RawMessage // its top-level "id", when one was seen (else nil)
}

func (e *errLineTooLong) Error() string { return fmt.Sprintf("a message of %d bytes", e.n) }

// readLine reads one newline-ended message of at most max bytes. A longer
// one is read to its end without keeping it (memory stays bounded whatever
// a client sends) and returned as *errLineTooLong, with the request's id
// when a top-level "id" came with it. At the end of input it returns what
// is left and io.EOF.
func readLine(r *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > max {
			return nil, skipLine(r, append(line, chunk...), err)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// skipLine reads the rest of an oversized message, head being what was
// read of it so far and err the error that read ended with, while an idScanner
// looks for its id.
func skipLine(r *bufio.Reader, head []byte, err error) error {
	var sc idScanner
	n := int64(len(head))
	sc.feed(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = r.ReadSlice('\n')
		n += int64(len(chunk))
		sc.feed(chunk)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return &errLineTooLong{n: n, id: sc.id()}
}

// idScanner finds the value of the top-level "id" member of a JSON object
// streamed through feed, without holding the object: it tracks strings
// and nesting, and keeps only the last key at depth one and a short id.
type idScanner struct {
	depth   int
	inStr   bool
	esc     bool
	str     []byte // the string being read at depth one (keys, or an id), up to 64 bytes
	key     string // the last key read at depth one
	afterID bool   // a value for "id" is expected next
	val     []byte // the id's text
	over    bool   // the id was longer than kept
	done    bool
}

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		if s.done {
			return
		}
		s.step(c)
	}
}

func (s *idScanner) step(c byte) {
	if s.afterID && s.val != nil && !s.inStr && s.depth == 1 && (c == ',' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
		s.done = true // a number, true/false/null ended
		return
	}
	if s.inStr {
		if s.depth == 1 && len(s.str) < 64 {
			s.str = append(s.str, c)
		}
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			if s.depth == 1 {
				if s.afterID {
					s.val = append([]byte{'"'}, s.str...)
					s.done = true
				} else {
					s.key = string(s.str[:max(len(s.str)-1, 0)])
				}
			}
		}
		return
	}
	switch {
	case c == '"':
		s.inStr, s.str = true, s.str[:0]
	case c == '{' || c == '[':
		s.depth++
	case c == '}' || c == ']':
		s.depth--
	case c == ':' && s.depth == 1:
		s.afterID = s.key == "id"
	case c == ',' && s.depth == 1:
		s.afterID = false
	case s.afterID && s.depth == 1 && c != ' ' && c != '\t' && c != '\n' && c != '\r':
		if len(s.val) < 64 {
			s.val = append(s.val, c)
		} else {
			s.over = true // an id this long is not echoed cut: it would be another id
		}
	}
}

// id returns the id found, as JSON, or nil.
func (s *idScanner) id() json.RawMessage {
	if s.val == nil || s.over || !json.Valid(s.val) {
		return nil
	}
	return bytes.Clone(s.val)
}
