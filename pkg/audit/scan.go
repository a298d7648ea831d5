package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

// checkEvery is how many records pass between two looks at the context.
const checkEvery = 1024

// firstBytes is how much of an unknown log its error shows.
const firstBytes = 64

// errTooMany is a log with more watch requests than its bound.
var errTooMany = errors.New("more watch requests than the bound")

// errTooManyRecords is a log with more records than its bound.
var errTooManyRecords = errors.New("more records than the bound")

// Scan reads an audit log in any form it recognises by its content, and
// calls each for every watch request (one per auditID, its stages
// merged): a request whose end the log shows as soon as both its start
// and end were read, the others at the end, in the order of their first
// line. The *Event is reused after each returns. ctx is checked every few
// thousand records; once it is done Scan returns ctx.Err(). A log larger
// than limits.Bytes, or with more watch requests than limits.Watches, is
// an error naming it; a gzip stream is read by its magic bytes, its size
// bounded after decompression; a log in no known form is an
// *UnknownFormatError. The Summary is returned with any error after the
// format was recognised.
func Scan(ctx context.Context, r io.Reader, name string, limits Limits, each func(*Event) error) (*Summary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	s := newScanner(ctx, name, limits, each)
	s.in = bufio.NewReaderSize(bounded.NewReader(br, limits.Bytes, name, "an audit log"), 64<<10)
	err := s.lines()
	if err == nil {
		err = s.flush()
	}
	if err == nil && s.sum.Format == "" {
		err = &UnknownFormatError{Name: name, Formats: Formats, First: s.first}
	}
	if err != nil {
		return &s.sum, err
	}
	return &s.sum, nil
}

// scanner is one Scan's state. Not safe for concurrent use.
type scanner struct {
	ctx    context.Context
	limits Limits
	in     *bufio.Reader
	sum    Summary
	// first are the first bytes read, for an UnknownFormatError.
	first []byte
	merger
}

func newScanner(ctx context.Context, name string, limits Limits, each func(*Event) error) *scanner {
	s := &scanner{ctx: ctx, limits: limits, sum: Summary{Name: name}}
	s.merger.init(name, limits, &s.sum, each)
	return s
}

// record counts a record read, failing past the bound and, every
// checkEvery records, once ctx is done.
func (s *scanner) record() error {
	s.sum.Records++
	if s.limits.Records > 0 && s.sum.Records > s.limits.Records {
		return fmt.Errorf("%s: line %d: %w (%d)", s.sum.Name, s.sum.Lines, errTooManyRecords, s.limits.Records)
	}
	if s.sum.Records%checkEvery == 0 {
		return s.ctx.Err()
	}
	return nil
}

// keepFirst keeps the first bytes read.
func (s *scanner) keepFirst(b []byte) {
	if n := firstBytes - len(s.first); n > 0 {
		s.first = append(s.first, b[:min(n, len(b))]...)
	}
}

// lines reads the log a line at a time.
func (s *scanner) lines() error {
	for {
		line, tooLong, err := s.readLine()
		if len(line) > 0 || tooLong {
			s.sum.Lines++
			if err := s.record(); err != nil {
				return err
			}
			if tooLong {
				s.sum.skip(s.sum.Lines, fmt.Sprintf("longer than %d bytes", s.limits.Line))
			} else if err := s.line(line); err != nil {
				return fmt.Errorf("%s: line %d: %w", s.sum.Name, s.sum.Lines, err)
			}
		} else if err == nil {
			s.sum.Lines++ // an empty line
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if cerr := s.ctx.Err(); cerr != nil {
				return cerr
			}
			return fmt.Errorf("%s: %w", s.sum.Name, err)
		}
	}
}

// line reads one line of the log.
func (s *scanner) line(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	return s.upstreamLine(line, s.sum.Lines)
}

// readLine reads one line of at most limits.Line bytes (without its
// newline); a longer one is consumed and reported tooLong. err is io.EOF
// at the end.
func (s *scanner) readLine() (line []byte, tooLong bool, err error) {
	var chunks int
	for {
		chunk, err := s.in.ReadSlice('\n')
		s.keepFirst(chunk)
		if !tooLong {
			if len(line)+len(chunk) > s.limits.Line+1 {
				tooLong, line = true, nil
			} else if line == nil && !errors.Is(err, bufio.ErrBufferFull) {
				line = chunk // the common case: no copy
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if chunks++; chunks%checkEvery == 0 {
				if err := s.ctx.Err(); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}
