package audit

import (
	"errors"
	"fmt"
	"io"
)

// This file reads a log that is one JSON document (gcloud's array of
// LogEntry, CloudWatch's {"events":[...]}, AKS's {"records":[...]}, a
// Log Analytics query's array of rows) element by element, never whole:
// each element is read up to limits.Line bytes, a longer one is skipped
// and counted like a long line.

// errTruncated is a document that ends before it closes.
var errTruncated = errors.New("the document ends before it closes (truncated?)")

// stream reads top-level JSON values one after another: arrays of
// records or, when wrapped, objects whose events or records member is
// one.
func (s *scanner) stream(wrapped bool) error {
	err := s.streamValues(wrapped)
	if errors.Is(err, errTruncated) {
		s.sum.skip(s.sum.Lines, err.Error())
		return nil
	}
	return err
}

func (s *scanner) streamValues(wrapped bool) error {
	for {
		c, err := s.nextByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case c == '[':
			err = s.array(inArray)
		case c == '{' && wrapped:
			err = s.wrapper()
		default:
			return fmt.Errorf("line %d: %q where a JSON %s should start", s.sum.Lines+1, c, map[bool]string{false: "array", true: "object"}[wrapped])
		}
		if err != nil {
			return err
		}
	}
}

// nextByte returns the next byte that is not whitespace, counting lines.
func (s *scanner) nextByte() (byte, error) {
	for {
		c, err := s.in.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, s.readErr(err)
		}
		if c == '\n' {
			s.sum.Lines++
		}
		if !isSpace(c) {
			return c, nil
		}
	}
}

func (s *scanner) readErr(err error) error {
	if cerr := s.ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("%s: %w", s.sum.Name, err)
}

// array reads the elements of an array whose '[' was read, each a record.
func (s *scanner) array(in where) error {
	c, err := s.nextByte()
	if err != nil {
		return truncated(err)
	}
	if c == ']' {
		return nil
	}
	for {
		line := s.sum.Lines + 1
		val, tooLong, err := s.readValue(c)
		if err != nil {
			return truncated(err)
		}
		if err := s.record(); err != nil {
			return err
		}
		if tooLong {
			s.sum.skip(line, fmt.Sprintf("an element longer than %d bytes", s.limits.Line))
		} else if err := s.element(val, line, in, ""); err != nil {
			return fmt.Errorf("%s: line %d: %w", s.sum.Name, line, err)
		}
		var closed bool
		if c, closed, err = s.after(']', "array"); err != nil || closed {
			return err
		}
	}
}

// after reads what follows a member or an element: a ',' (c is then the
// next one's first byte) or close (closed).
func (s *scanner) after(close byte, what string) (c byte, closed bool, err error) {
	if c, err = s.nextByte(); err != nil {
		return 0, false, truncated(err)
	}
	switch c {
	case close:
		return 0, true, nil
	case ',':
		c, err = s.nextByte()
		return c, false, truncated(err)
	}
	return 0, false, fmt.Errorf("%s: line %d: %q between the members of an %s, not ',' or %q", s.sum.Name, s.sum.Lines+1, c, what, close)
}

// wrapper reads an object whose '{' was read: the records of its events
// or records member, the other members skipped.
func (s *scanner) wrapper() error {
	c, err := s.nextByte()
	if err != nil {
		return truncated(err)
	}
	if c == '}' {
		return nil
	}
	for {
		key, _, err := s.readValue(c)
		if err != nil {
			return truncated(err)
		}
		if c, err = s.nextByte(); err != nil {
			return truncated(err)
		}
		if c != ':' {
			return fmt.Errorf("%s: line %d: an object key not followed by ':'", s.sum.Name, s.sum.Lines+1)
		}
		if c, err = s.nextByte(); err != nil {
			return truncated(err)
		}
		k := string(key)
		wraps := k == `"events"` || k == `"records"`
		if wraps && c == '[' {
			err = s.array(inWrapper)
		} else {
			line := s.sum.Lines + 1
			var v []byte
			v, _, err = s.readValue(c) // skipped, bounded like an element
			if wraps && err == nil && string(v) != "null" {
				// Records that are not an array are not read: said,
				// never a silent gap.
				s.sum.skip(line, k[1:len(k)-1]+": not an array")
			}
		}
		if err != nil {
			return truncated(err)
		}
		var closed bool
		if c, closed, err = s.after('}', "object"); err != nil || closed {
			return err
		}
	}
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// readValue reads the JSON value whose first byte c was read, up to
// limits.Line bytes into s.elem; a longer one is read to its end and
// reported tooLong. It walks nesting with a count, never recursion.
func (s *scanner) readValue(c byte) (val []byte, tooLong bool, err error) {
	s.elem = append(s.elem[:0], c)
	depth, inString, escaped := 0, c == '"', false
	switch c {
	case '{', '[':
		depth = 1
	case '"':
	default: // a number or literal: up to a delimiter
		for {
			b, err := s.in.ReadByte()
			if err != nil {
				return s.elem, false, err
			}
			if b == ',' || b == ']' || b == '}' || isSpace(b) {
				_ = s.in.UnreadByte()
				return s.elem, false, nil
			}
			if len(s.elem) <= s.limits.Line {
				s.elem = append(s.elem, b)
			} else {
				tooLong = true
			}
		}
	}
	for n := 0; ; n++ {
		b, err := s.in.ReadByte()
		if err != nil {
			return nil, false, err
		}
		if n%(1<<20) == 0 && n > 0 {
			if err := s.ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		if !tooLong {
			if len(s.elem) < s.limits.Line {
				s.elem = append(s.elem, b)
			} else {
				tooLong, s.elem = true, s.elem[:0]
			}
		}
		switch {
		case b == '\n':
			s.sum.Lines++
		case inString:
			if escaped {
				escaped = false
			} else if b == '\\' {
				escaped = true
			} else if b == '"' {
				inString = false
				if depth == 0 {
					return s.elem, tooLong, nil
				}
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			if depth--; depth == 0 {
				return s.elem, tooLong, nil
			}
		}
	}
}
