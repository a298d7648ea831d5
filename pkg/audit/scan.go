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
	return scan(ctx, r, name, limits, &merger{each: each})
}

// Filter decides, from the first record of a watch request, whether a
// read keeps it. It may refuse only what no later record of the request
// could make worth keeping: the user, the path, the time received and
// the timeout are the first record's (Scan keeps the first of each), the
// end and the code come later.
type Filter func(*Event) bool

// ScanFilter is Scan keeping only the watch requests keep accepts: a
// request refused is counted (Summary.Watches) but never merged or
// passed on, and holds 8 bytes until the end (the hash that tells its
// later stages), so memory grows with the requests kept, not with the
// log, whether or not the log shows their ends.
func ScanFilter(ctx context.Context, r io.Reader, name string, limits Limits, keep Filter, each func(*Event) error) (*Summary, error) {
	return scan(ctx, r, name, limits, &merger{each: each, keep: keep})
}

// errDetected ends the read of Detect once the form is known.
var errDetected = errors.New("form recognised")

// Detect reads r until it recognises the form of the log (its first
// record read as an audit event) and returns the form's name. A log that
// ends in no known form is an *UnknownFormatError naming the forms read
// and showing its first bytes; a log that ends before its first record
// is one too. Detect reads no further than its first record needs (and
// a 64 KiB buffer): a caller can look at the head of a log before a run
// that reads it whole at its end.
func Detect(ctx context.Context, r io.Reader, name string, limits Limits) (string, error) {
	sum, err := scan(ctx, r, name, limits, &merger{each: func(*Event) error { return nil }, detect: true})
	if errors.Is(err, errDetected) {
		return sum.Format, nil
	}
	if err != nil {
		return "", err
	}
	return sum.Format, nil
}

// scan is Scan with m's each, filter and mode.
func scan(ctx context.Context, r io.Reader, name string, limits Limits, m *merger) (*Summary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	s := newScanner(ctx, name, limits, m)
	s.in = bufio.NewReaderSize(bounded.NewReader(br, limits.Bytes, name, "an audit log"), 64<<10)
	var err error
	switch s.sniff() {
	case '[':
		err = s.stream(false)
	case '{':
		err = s.stream(true)
	default:
		err = s.lines()
	}
	if err == nil {
		err = s.flush()
	}
	if err == nil && s.sum.Format == "" {
		err = &UnknownFormatError{Name: name, Formats: Formats(), First: s.first}
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
	dec   decoder
	// elem holds the element of a JSON document being read.
	elem []byte
	*merger
}

func newScanner(ctx context.Context, name string, limits Limits, m *merger) *scanner {
	s := &scanner{ctx: ctx, limits: limits, sum: Summary{Name: name}, merger: m}
	s.merger.init(name, limits, &s.sum)
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

// wrapperKeys are the first keys of an object that wraps the records
// in an array: CloudWatch's events (and the pages' tokens), AKS's
// records.
var wrapperKeys = map[string]bool{"events": true, "records": true, "searchedLogStreams": true, "nextToken": true, "nextForwardToken": true, "nextBackwardToken": true}

// sniff keeps the first bytes and tells the form from them: '[' for a
// JSON array, '{' for an object wrapping an array of records, 0 for
// lines.
func (s *scanner) sniff() byte {
	peek, _ := s.in.Peek(4096)
	s.first = append([]byte(nil), peek[:min(firstBytes, len(peek))]...)
	if bom := []byte("\xef\xbb\xbf"); bytes.HasPrefix(peek, bom) { // as Windows tools save JSON
		_, _ = s.in.Discard(len(bom))
		peek, _ = s.in.Peek(4096)
	}
	i := skipSpace(peek, 0)
	if i >= len(peek) {
		return 0
	}
	switch peek[i] {
	case '[':
		return '['
	case '{':
		j := skipSpace(peek, i+1)
		if j < len(peek) && peek[j] == '"' {
			if end, err := stringEnd(peek, j); err == nil && wrapperKeys[string(peek[j+1:end-1])] {
				return '{'
			}
		}
	}
	return 0
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

// line reads one line of the log: a record, an object wrapping records,
// or a record after aws logs tail's time and stream.
func (s *scanner) line(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	n := s.sum.Lines
	if line[0] == '{' {
		return s.element(line, n, inLines, "")
	}
	if i := bytes.IndexByte(line, '{'); i > 0 && tailPrefix(line[:i]) {
		return s.element(line[i:], n, inLines, formatTail)
	}
	s.sum.skip(n, "not a JSON object")
	return nil
}

// tailPrefix reports what aws logs tail writes before an event: a time
// (RFC 3339), then, unless --format short, the log stream's name.
func tailPrefix(p []byte) bool {
	f := bytes.Fields(p)
	if len(f) < 1 || len(f) > 2 {
		return false
	}
	_, ok := parseTime(f[0])
	return ok
}

// element reads one record (a line, or an element of an array); format,
// when set, names the form instead of the record's own.
func (s *scanner) element(b []byte, n int, in where, format string) error {
	r, got, reason := s.dec.object(b, n, in)
	if r == nil {
		if reason == reasonWrapper && in == inLines {
			return s.inlineWrapper(n)
		}
		s.sum.skip(n, reason)
		return nil
	}
	if format == "" {
		format = got
	}
	if s.sum.Format == "" {
		s.sum.Format, s.sum.Lacks = format, lacks[format]
		if s.detect {
			return errDetected
		}
	}
	return s.add(r)
}

// inlineWrapper reads the records of a line that wraps them (an event
// hub's {"records":[...]} one a line).
func (s *scanner) inlineWrapper(n int) error {
	arr := s.dec.f[kRecords]
	if arr == nil {
		arr = s.dec.f[kEvents]
	}
	var err error
	if perr := elements(arr, func(e []byte) {
		if err == nil {
			err = s.element(e, n, inWrapper, "")
		}
	}); perr != nil {
		s.sum.skip(n, "records: "+perr.Error())
	}
	return err
}

// readLine reads one line of at most limits.Line bytes (without its
// newline); a longer one is consumed and reported tooLong. err is io.EOF
// at the end.
func (s *scanner) readLine() (line []byte, tooLong bool, err error) {
	var chunks int
	for {
		chunk, err := s.in.ReadSlice('\n')
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
			if chunks++; chunks%16 == 0 { // a MiB
				if err := s.ctx.Err(); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}
