package stacks

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// The parallel scan (Scanner.Workers > 1) reads a dump in chunks cut
// where a goroutine starts after a blank line ("\n\ngoroutine "): there a
// sequential scan is always in the same state (no goroutine open, no
// header pending, looking for the next header), so a chunk parsed by a
// Scanner of its own yields the goroutines the sequential scan would,
// with line numbers counted from the chunk's start.
//
//	reader goroutine:  input -> chunk buffers (a fixed ring) -> work and order queues
//	workers:           work -> a chunk's goroutines, in an arena of the chunk
//	Next (the caller): order -> goroutines in input order, lines offset
//
// A worker's result is used only when its chunk is clean: no error, no
// cut, at least one goroutine (its skipped lines are merged, their lines
// offset, as the sequential scan would have logged them). At the first chunk that is
// not, and always for the last chunk (where the checks of a cut dump
// depend on the whole input), Next goes on sequentially: a Scanner
// started with the counts of the chunks before reads that chunk and
// every later one from the queue, so lines skipped, errors, cuts and
// Stats are those of the sequential scan, with the same line numbers.
//
// Memory is bounded by the ring: inFlight chunks of chunkSize bytes and
// their goroutines, whatever the input's size.

// defaultChunkSize is the size of a chunk buffer: about a thousand
// goroutines of a kube-apiserver dump.
const defaultChunkSize = 1 << 20

// boundary is where chunks are cut: a blank line, then a header.
var boundary = []byte("\n\ngoroutine ")

// chunk is one piece of the input and, once parsed, its goroutines.
// The reader goroutine fills buf and data; a worker fills the results and
// closes done; from then on the consumer owns it until it returns it to
// the ring.
type chunk struct {
	buf  []byte
	data []byte // the chunk: buf[:n], ending after a blank line unless final
	// final: data runs to the end of the input, where err (nil at EOF)
	// was read.
	final bool
	err   error
	// cut: data ends at a boundary (not final, a boundary was found).
	cut  bool
	done chan struct{}

	gs     []Goroutine
	frames []Frame
	flags  []string
	spans  []span
	clean  bool
	skips  skipLog
	lines  int
	counts [3]int // goroutines, createdBy, withParent
}

// span is where a goroutine's frames and flags sit in its chunk's arena.
type span struct{ frames, frameEnd, flags, flagEnd int32 }

// parallel is the state of a parallel scan. Its channels are its only
// shared state besides fallback; cur, at, g and seq belong to Next.
type parallel struct {
	free  chan *chunk
	work  chan *chunk
	order chan *chunk
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	// fallback: the scan went sequential; workers leave chunks unparsed.
	fallback atomic.Bool

	closed bool
	cur    *chunk
	at     int
	// base is the line before cur's first line.
	base int
	g    *Goroutine
	seq  *Scanner
}

// startParallel starts the reader and the workers.
func (s *Scanner) startParallel() {
	size := s.chunkSize
	if size <= 0 {
		size = defaultChunkSize
	}
	inFlight := 2*s.Workers + 2
	p := &parallel{
		free:  make(chan *chunk, inFlight),
		work:  make(chan *chunk, inFlight),
		order: make(chan *chunk, inFlight),
		stop:  make(chan struct{}),
	}
	for range inFlight {
		p.free <- &chunk{}
	}
	s.par = p
	p.wg.Add(1 + s.Workers)
	go p.read(s.r, size)
	for range s.Workers {
		w := &Scanner{SkipArgs: s.SkipArgs, KeepArgs: s.KeepArgs, SkipFiles: s.SkipFiles,
			names: make(map[string]internedName), recent: new([recentSize]internedName)}
		go p.parse(w)
	}
}

// read fills chunks from r and queues them, cut at boundaries, until the
// end of the input, a read error or stop.
func (p *parallel) read(r io.Reader, size int) {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	var carry []byte
	for {
		var c *chunk
		select {
		case c = <-p.free:
		case <-p.stop:
			return
		}
		if c.buf == nil {
			c.buf = make([]byte, size)
		}
		n := copy(c.buf, carry)
		var err error
		for n < len(c.buf) && err == nil {
			var k int
			k, err = r.Read(c.buf[n:])
			n += k
		}
		*c = chunk{buf: c.buf, data: c.buf[:n], done: make(chan struct{}),
			gs: c.gs[:0], frames: c.frames[:0], flags: c.flags[:0], spans: c.spans[:0]}
		switch {
		case err != nil:
			c.final = true
			if err != io.EOF {
				c.err = err
			}
		default:
			if i := bytes.LastIndex(c.data, boundary); i >= 0 {
				c.data, c.cut = c.data[:i+2], true
				carry = append(carry[:0], c.buf[i+2:n]...)
			} else {
				carry = carry[:0]
			}
		}
		if !p.send(p.order, c) || !p.send(p.work, c) || c.final {
			return
		}
	}
}

// send queues c on ch, or reports false after stop.
func (p *parallel) send(ch chan *chunk, c *chunk) bool {
	select {
	case ch <- c:
		return true
	case <-p.stop:
		return false
	}
}

// parse is a worker: it parses the chunks it is given with w, its own
// Scanner (and so its own interned names), and closes each chunk's done.
func (p *parallel) parse(w *Scanner) {
	defer p.wg.Done()
	for c := range p.work {
		if c.cut && !p.fallback.Load() {
			w.parseChunk(c)
		}
		close(c.done)
	}
}

// parseChunk parses c.data from its start, as a dump of its own, into
// c's arena, and says whether the result is clean.
func (s *Scanner) parseChunk(c *chunk) {
	*s = Scanner{SkipArgs: s.SkipArgs, KeepArgs: s.KeepArgs, SkipFiles: s.SkipFiles,
		names: s.names, recent: s.recent, g: s.g, src: c.data, srcMode: true}
	for s.Next() {
		g := &s.g
		sp := span{frames: int32(len(c.frames)), flags: int32(len(c.flags))}
		c.frames = append(c.frames, g.Frames...)
		c.flags = append(c.flags, g.Flags...)
		sp.frameEnd, sp.flagEnd = int32(len(c.frames)), int32(len(c.flags))
		c.spans = append(c.spans, sp)
		c.gs = append(c.gs, *g)
	}
	for i, sp := range c.spans {
		c.gs[i].Frames = c.frames[sp.frames:sp.frameEnd:sp.frameEnd]
		c.gs[i].Flags = nil
		if sp.flagEnd > sp.flags {
			c.gs[i].Flags = c.flags[sp.flags:sp.flagEnd:sp.flagEnd]
		}
	}
	c.clean = s.err == nil && s.partial == "" && !s.lastIncomplete &&
		s.goroutines > 0 && len(s.src) == 0 && s.pending == nil
	c.skips = s.skips
	c.lines = s.line
	c.counts = [3]int{s.goroutines, s.createdBy, s.withParent}
}

// nextParallel is Next of a parallel scan.
func (s *Scanner) nextParallel() bool {
	if s.par == nil {
		s.startParallel()
	}
	p := s.par
	for !p.closed {
		if p.seq != nil {
			if p.seq.Next() {
				p.g = p.seq.Goroutine()
				return true
			}
			s.Close()
			return false
		}
		if p.cur != nil && p.at < len(p.cur.gs) {
			p.g = &p.cur.gs[p.at]
			p.g.Line += p.base
			p.at++
			return true
		}
		if p.cur != nil {
			p.free <- p.cur
			p.cur = nil
		}
		c, ok := <-p.order
		if !ok {
			// Only after Close.
			return false
		}
		<-c.done
		if !c.clean || p.fallback.Load() {
			s.goSequential(c)
			continue
		}
		p.cur, p.at, p.base = c, 0, s.line
		s.line += c.lines
		s.bytes += int64(len(c.data))
		s.goroutines += c.counts[0]
		s.createdBy += c.counts[1]
		s.withParent += c.counts[2]
		s.sawAnyHeader = true
		for _, k := range c.skips.kept {
			if len(s.skips.kept) < maxSkippedKept {
				k.Line += p.base
				s.skips.kept = append(s.skips.kept, k)
			}
		}
		s.skips.count += c.skips.count
	}
	return false
}

// goSequential goes on from chunk c with one Scanner, as a sequential
// scan would be at c's start.
func (s *Scanner) goSequential(c *chunk) {
	p := s.par
	p.fallback.Store(true)
	p.seq = &Scanner{SkipArgs: s.SkipArgs, KeepArgs: s.KeepArgs, SkipFiles: s.SkipFiles,
		r:     bufio.NewReaderSize(&chunkReader{p: p, c: c}, readBufferSize),
		names: s.names, recent: s.recent,
		line: s.line, bytes: s.bytes, goroutines: s.goroutines, createdBy: s.createdBy,
		withParent: s.withParent, sawAnyHeader: s.sawAnyHeader,
		skips: skipLog{kept: slices.Clone(s.skips.kept), count: s.skips.count}}
}

// chunkReader reads the queued chunks' bytes in order, from c on, and
// returns each to the ring once read; after the final chunk, its error
// (io.EOF at the end of the input).
type chunkReader struct {
	p   *parallel
	c   *chunk
	off int
}

func (r *chunkReader) Read(b []byte) (int, error) {
	for r.c != nil && r.off == len(r.c.data) {
		if r.c.final {
			if r.c.err != nil {
				return 0, r.c.err
			}
			return 0, io.EOF
		}
		r.p.free <- r.c
		r.c, r.off = nil, 0
		c, ok := <-r.p.order
		if !ok {
			return 0, io.ErrUnexpectedEOF
		}
		<-c.done
		r.c = c
	}
	if r.c == nil {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(b, r.c.data[r.off:])
	r.off += n
	return n, nil
}

// Close stops a parallel scan (Workers > 1) and waits for its goroutines,
// which then read the input no more. Next calls it when it returns false;
// a caller that stops before must call it. It does nothing for a
// sequential scan, and may be called more than once.
func (s *Scanner) Close() {
	p := s.par
	if p == nil {
		return
	}
	p.closed = true
	p.once.Do(func() {
		p.fallback.Store(true)
		close(p.stop)
		// Chunks queued to no one: the workers drain work until the
		// reader closes it.
		p.wg.Wait()
	})
}

// readSrcLine is readLine in srcMode. A chunk ends with a newline, so a
// line without one, or one longer than MaxLineBytes, is an error here: the
// chunk is then read again sequentially, which says what is wrong.
func (s *Scanner) readSrcLine() ([]byte, bool) {
	if len(s.src) == 0 {
		return nil, false
	}
	i := bytes.IndexByte(s.src, '\n')
	if i < 0 || i > MaxLineBytes {
		s.err = errNotClean
		return nil, false
	}
	b := s.src[:i]
	s.src = s.src[i+1:]
	s.line++
	s.bytes += int64(i + 1)
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, true
}

// errNotClean marks a chunk a worker could not read as the sequential scan
// would; it never leaves the package.
var errNotClean = errors.New("stacks: chunk left to the sequential scan")
