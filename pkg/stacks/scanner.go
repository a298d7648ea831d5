package stacks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes is the longest line a dump may have. Real frames are a few
// hundred bytes; anything longer is not a goroutine dump.
const MaxLineBytes = 1 << 20

// Scanner reads a debug=2 goroutine dump one goroutine at a time, in a
// single pass, keeping only the goroutine being read. Function and file
// names are interned, so a dump with a million goroutines costs a few
// allocations per goroutine and memory bounded by its distinct names.
// With Workers above 1 the pass is parsed on that many goroutines, in
// chunks of a fixed ring (parallel.go; memory is bounded by the ring),
// and the goroutines come out in the dump's order all the same.
//
// Use it like bufio.Scanner:
//
//	sc := stacks.NewScanner(r)
//	for sc.Next() {
//		g := sc.Goroutine() // valid until the next call to Next
//	}
//	if err := sc.Err(); err != nil { ... }
//
// A Scanner is not safe for concurrent use.
type Scanner struct {
	// SkipArgs, set before the first Next, leaves Frame.Args empty, which
	// saves one allocation per frame when the caller needs no arguments.
	SkipArgs bool
	// KeepArgs, with SkipArgs, names the functions whose arguments are
	// kept anyway (the caller needs a few frames' arguments). It is asked
	// once per distinct function name (the answer is kept with the
	// interned name), not once per frame.
	KeepArgs func(fn string) bool
	// SkipFiles, set before the first Next, leaves Frame.File empty: each
	// file line is still read and checked, and Frame.Line set, but its
	// path is not interned, which spares a caller that reads no paths a
	// lookup per frame.
	SkipFiles bool
	// Workers, set before the first Next, parses the dump on that many
	// goroutines at once when above 1 (parallel.go): the goroutines, their
	// order, Stats and errors are those of a sequential scan. KeepArgs is
	// then called from several goroutines at once, and a caller that stops
	// before Next returns false must call Close.
	Workers int

	r *bufio.Reader
	// src, in srcMode, is the rest of a parallel scan's chunk, read in
	// place instead of through r.
	src     []byte
	srcMode bool
	par     *parallel
	// chunkSize is the parallel scan's chunk buffer, defaultChunkSize
	// when 0 (tests set it smaller).
	chunkSize int

	line int // number of the last line read
	err  error

	g       Goroutine
	pending []byte // a header line read past the end of the previous goroutine
	pendAt  int
	done    bool

	names map[string]internedName
	// recent is a direct-mapped cache in front of names: a hit costs a
	// cheap hash and one comparison instead of a map lookup.
	recent *[recentSize]internedName
	skips  skipLog
	// long holds a line longer than the reader's buffer while it is read.
	long []byte

	// partial says why the dump is known to be cut ("" when whole).
	partial string

	goroutines     int
	createdBy      int
	withParent     int
	bytes          int64
	sawAnyHeader   bool
	lastIncomplete bool
}

// NewScanner returns a Scanner reading from r.
//
// A *bufio.Reader of at least 64 KiB is read directly, without a second
// buffer; NewScanner itself allocates little, so it is cheap to call for
// every small dump.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{
		r:      bufio.NewReaderSize(r, readBufferSize),
		names:  make(map[string]internedName),
		recent: new([recentSize]internedName),
	}
}

// readBufferSize is the read buffer; lines longer than it (up to
// MaxLineBytes) are assembled in Scanner.long.
const readBufferSize = 64 << 10

// Stats describes what a Scanner has read so far.
type Stats struct {
	Lines      int   `json:"lines"`
	Bytes      int64 `json:"bytes"`
	Goroutines int   `json:"goroutines"`
	// CreatedBy counts goroutines with a "created by" line; WithParentID
	// those of them that name the parent goroutine (Go >= 1.21).
	CreatedBy    int `json:"createdBy"`
	WithParentID int `json:"withParentID"`
	// SkippedLines counts lines left out; Skipped keeps the first few.
	SkippedLines int `json:"skippedLines"`
	// Partial says why the dump is known to be cut, "" when it looks
	// whole. A cut dump is still read: every goroutine that ended before
	// the cut is returned, the one cut in the middle is left out. The
	// runtime cuts a debug=2 dump at exactly 64 MiB (runtime/pprof
	// writeGoroutineStacks), usually in the middle of a line.
	Partial string    `json:"partial,omitempty"`
	Skipped []Skipped `json:"skipped,omitempty"`
}

// MaxDumpBytes is where the runtime cuts a debug=2 dump: runtime/pprof
// writeGoroutineStacks (pprof.go:813-827 in Go 1.26) doubles its buffer
// from 1 MiB and, once it holds 64 MiB, writes what fitted.
const MaxDumpBytes = 64 << 20

// HasParentIDs reports whether the dump names parent goroutines. Dumps
// written by Go before 1.21 say "created by X" without "in goroutine N".
func (s Stats) HasParentIDs() bool { return s.WithParentID > 0 || s.CreatedBy == 0 }

// Stats returns counters for the input read so far.
func (s *Scanner) Stats() Stats {
	if s.par != nil && s.par.seq != nil {
		return s.par.seq.Stats()
	}
	return Stats{
		Lines: s.line, Bytes: s.bytes, Goroutines: s.goroutines,
		CreatedBy: s.createdBy, WithParentID: s.withParent,
		SkippedLines: s.skips.count, Skipped: append([]Skipped(nil), s.skips.kept...),
		Partial: s.partialReason(),
	}
}

func (s *Scanner) partialReason() string {
	if s.err != nil {
		return ""
	}
	if s.partial == "" && s.done && s.bytes == MaxDumpBytes {
		return fmt.Sprintf("the dump is exactly %d MiB, where the runtime cuts a debug=2 dump: goroutines after the last one read are missing", MaxDumpBytes>>20)
	}
	return s.partial
}

// Goroutine returns the goroutine read by the last successful Next. The
// value, its Frames and its strings other than Func and File are reused by
// the next call to Next; use Clone to keep it.
func (s *Scanner) Goroutine() *Goroutine {
	if s.par != nil {
		return s.par.g
	}
	return &s.g
}

// Err returns the first fatal error: an I/O error, a line over
// MaxLineBytes, input that is not a debug=2 dump, or a dump cut before its
// first goroutine ended. Unknown lines are not errors: see
// Stats().Skipped; a dump cut later is not one either: see
// Stats().Partial.
func (s *Scanner) Err() error {
	if s.par != nil && s.par.seq != nil {
		return s.par.seq.err
	}
	return s.err
}

// readLine returns the next line without its line ending, or nil at EOF.
func (s *Scanner) readLine() ([]byte, bool) {
	if s.err != nil {
		return nil, false
	}
	if s.srcMode {
		return s.readSrcLine()
	}
	b, err := s.r.ReadSlice('\n')
	s.bytes += int64(len(b))
	if err != nil && errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: assemble it, up to MaxLineBytes.
		s.long = append(s.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) && len(s.long) <= MaxLineBytes {
			b, err = s.r.ReadSlice('\n')
			s.bytes += int64(len(b))
			s.long = append(s.long, b...)
		}
		b = s.long
		if len(b) > MaxLineBytes+1 || errors.Is(err, bufio.ErrBufferFull) {
			s.line++
			s.err = &SyntaxError{LineNo: s.line, Msg: fmt.Sprintf("line is longer than %d bytes: not a goroutine dump", MaxLineBytes)}
			return nil, false
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, io.EOF):
			if len(b) == 0 {
				return nil, false
			}
			// A last line without its newline: the dump was cut.
			s.line++
			s.lastIncomplete = true
			return bytes.TrimRight(b, "\r"), true
		default:
			s.err = fmt.Errorf("reading line %d: %w", s.line+1, err)
			return nil, false
		}
	}
	s.line++
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, true
}

var (
	goroutinePrefix = []byte("goroutine ")
	createdByPrefix = []byte("created by ")
	inGoroutine     = []byte(" in goroutine ")
	elided          = []byte("...additional frames elided...")
	originating     = []byte("[originating from goroutine ")
	unavailable     = []byte("goroutine running on other thread; stack unavailable")
)

// Next reads the next goroutine. It returns false at the end of the input
// or on a fatal error (see Err).
func (s *Scanner) Next() bool {
	if s.par != nil {
		return s.nextParallel()
	}
	ok := s.next()
	if ok && s.Workers > 1 && !s.srcMode && s.bytes >= parallelFrom*int64(s.chunkBytes()) && s.pending == nil && !s.done {
		// Past the first chunks, at a blank line: the rest in parallel.
		s.startParallel()
	}
	return ok
}

// next is Next of the sequential scan.
func (s *Scanner) next() bool {
	// A loop, not recursion: hostile input with millions of malformed
	// headers in a row must not grow the stack.
	for {
		if s.done || s.err != nil {
			return false
		}
		header, headerAt, ok := s.nextHeader()
		if !ok {
			return false
		}
		if s.lastIncomplete {
			s.cut(headerAt, fmt.Sprintf("it ends in the middle of a goroutine header (line %d)", headerAt))
			return false
		}
		s.reset()
		if !s.parseHeader(header) {
			s.skips.add(headerAt, header, "malformed goroutine header")
			// The frames that follow belong to no goroutine.
			if !s.skipBody() {
				return false
			}
			continue
		}
		s.sawAnyHeader = true
		s.g.Line = headerAt
		cutAt := s.readBody()
		if s.err != nil {
			return false
		}
		// The runtime prints "created by" for every goroutine but
		// goroutine 1 (runtime/traceback.go traceback2): in a dump that has
		// such lines, the last goroutine of the input without one was cut
		// at a line boundary (head -n).
		complete := s.g.CreatedBy.Func != "" || s.g.ID == 1 || s.g.StackUnavailable || s.createdBy == 0
		switch {
		case cutAt != "":
			s.cut(s.g.Line, fmt.Sprintf("%s, in goroutine %d (line %d), which is left out", cutAt, s.g.ID, s.g.Line))
			return false
		case s.done && !complete:
			s.cut(s.g.Line, fmt.Sprintf("its last goroutine (%d, line %d) ends before its \"created by\" line, so it is left out", s.g.ID, s.g.Line))
			return false
		}
		s.goroutines++
		return true
	}
}

// nextHeader returns the next goroutine header line and its number.
func (s *Scanner) nextHeader() ([]byte, int, bool) {
	if s.pending != nil {
		header, at := s.pending, s.pendAt
		s.pending = nil
		return header, at, true
	}
	for {
		line, ok := s.readLine()
		if !ok {
			s.finish()
			return nil, 0, false
		}
		if len(line) == 0 {
			continue
		}
		if bytes.HasPrefix(line, goroutinePrefix) {
			return line, s.line, true
		}
		if !s.sawAnyHeader {
			s.err = &SyntaxError{LineNo: s.line, Msg: fmt.Sprintf("not a debug=2 goroutine dump: want %q, got %q", "goroutine N [state]:", preview(line))}
			return nil, 0, false
		}
		s.skips.add(s.line, line, "outside any goroutine")
	}
}

func (s *Scanner) finish() {
	s.done = true
	if s.err == nil && !s.sawAnyHeader {
		if s.line == 0 {
			s.err = errors.New("empty input: no goroutines")
		} else {
			s.err = &SyntaxError{LineNo: s.line, Msg: "no goroutine header (\"goroutine N [state]:\") found"}
		}
	}
}

// skipBody drops lines up to the next blank line or header (kept for
// Next). It returns false at the end of the input.
func (s *Scanner) skipBody() bool {
	for {
		line, ok := s.readLine()
		if !ok {
			s.finish()
			return false
		}
		if len(line) == 0 {
			return true
		}
		if bytes.HasPrefix(line, goroutinePrefix) {
			s.pending = append(s.pending[:0], line...)
			s.pendAt = s.line
			return true
		}
		s.skips.add(s.line, line, "inside a malformed goroutine")
	}
}

func (s *Scanner) reset() {
	g := &s.g
	frames := g.Frames[:0]
	flags := g.Flags[:0]
	*g = Goroutine{Frames: frames, Flags: flags}
}

// cut ends the scan of a dump cut at line: the goroutine being read is
// left out. A dump cut before any goroutine ended is an error: nothing in
// it can be read.
func (s *Scanner) cut(line int, why string) {
	s.done = true
	if s.goroutines == 0 {
		s.err = &SyntaxError{LineNo: line, Msg: "dump is truncated before its first goroutine ended: " + why}
		return
	}
	s.partial = "the dump is cut: " + why
	if s.bytes == MaxDumpBytes {
		s.partial += fmt.Sprintf("; it is exactly %d MiB, where the runtime cuts a debug=2 dump", MaxDumpBytes>>20)
	}
}

func preview(b []byte) string {
	const max = 60
	if len(b) > max {
		b = b[:max]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// ParseDebug2 reads a whole debug=2 dump into memory. It is meant for small
// dumps and tests; use Scanner for anything that may be large.
func ParseDebug2(r io.Reader) ([]*Goroutine, Stats, error) {
	sc := NewScanner(r)
	var out []*Goroutine
	for sc.Next() {
		out = append(out, sc.Goroutine().Clone())
	}
	return out, sc.Stats(), sc.Err()
}
