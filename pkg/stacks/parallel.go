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
//	workers, in turn:  input -> a chunk buffer (of a fixed ring) -> order queue
//	each worker:       its chunk -> the chunk's goroutines, in an arena of the chunk
//	Next (the caller): order -> goroutines in input order, lines offset
//
// A worker's result is used only when its chunk is clean: no error, no
// cut, at least one goroutine (its skipped lines are merged, their lines
// offset, as the sequential scan would have logged them). At the first
// chunk that is not, and always for the last chunk (where the checks of a
// cut dump depend on the whole input), Next goes on sequentially: a Scanner
// started with the counts of the chunks before reads that chunk and
// every later one from the queue, so lines skipped, errors, cuts and
// Stats are those of the sequential scan, with the same line numbers.
//
// Memory is bounded by the ring: inFlight chunks of chunkSize bytes and
// their goroutines, whatever the input's size.

// defaultChunkSize is the size of a chunk buffer: about 250 goroutines of
// a kube-apiserver dump. Of 64 KiB to 1 MiB, it cost the least CPU on the
// 300k-goroutine dump (bench/README.md, "The floor"): smaller chunks cost
// more hand-offs, larger ones more cache misses.
const defaultChunkSize = 256 << 10

// lastBoundary is bytes.LastIndex(b, []byte("\n\ngoroutine ")), where
// chunks are cut (a blank line, then a header), found from the end line
// by line: it is a goroutine's lines away.
func lastBoundary(b []byte) int {
	for i := len(b); ; {
		i = bytes.LastIndexByte(b[:i], '\n')
		if i < 1 {
			return -1
		}
		if b[i-1] == '\n' && bytes.HasPrefix(b[i+1:], goroutinePrefix) {
			return i - 1
		}
	}
}

// chunk is one piece of the input and, once parsed, its goroutines. One
// goroutine at a time owns it: the worker that fills buf and data, then
// the results, and closes done; then Next (or chunkReader), until it
// returns the chunk to the ring (parallel.free).
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

// parallel is the state of a parallel scan. The workers share the input
// (under mu), the channels, stop and fallback; closed, cur, at, base, g
// and seq belong to the goroutine calling Next.
type parallel struct {
	// mu guards the input: in, carry (the start of the next chunk) and
	// ended (the final chunk was read).
	mu    sync.Mutex
	in    io.Reader
	carry []byte
	ended bool
	size  int

	free  chan *chunk
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
	// used counts the chunks whose workers' goroutines Next returned.
	used int
}

// chunkBytes is the size of a chunk.
func (s *Scanner) chunkBytes() int {
	if s.chunkSize > 0 {
		return s.chunkSize
	}
	return defaultChunkSize
}

// parallelFrom is where a scan with Workers goes parallel, in chunks: the
// first parallelFrom chunks' bytes are read sequentially, so that a small
// dump (the real captures are about 2 MB) costs no ring, no workers and
// no names interned again by each worker.
const parallelFrom = 8

// startParallel starts the workers, from the end of the goroutine the
// sequential scan just returned (a blank line ended it): what the read
// buffer holds past it is the first chunk's start.
func (s *Scanner) startParallel() {
	size := s.chunkBytes()
	inFlight := 2*s.Workers + 2
	buffered, _ := s.r.Peek(s.r.Buffered())
	p := &parallel{
		in:    s.r,
		carry: bytes.Clone(buffered),
		g:     &s.g,
		size:  size,
		free:  make(chan *chunk, inFlight),
		order: make(chan *chunk, inFlight),
		stop:  make(chan struct{}),
	}
	s.r.Discard(len(buffered))
	for range inFlight {
		p.free <- &chunk{}
	}
	s.par = p
	p.wg.Add(s.Workers)
	for range s.Workers {
		w := &Scanner{SkipArgs: s.SkipArgs, KeepArgs: s.KeepArgs, SkipFiles: s.SkipFiles,
			names: make(map[string]internedName), recent: new([recentSize]internedName)}
		go p.work(w)
	}
}

// work is a worker: it reads the next chunk of the input (in turn with
// the other workers, so the chunk is still in its core's cache when it
// parses it), queues it in order, parses it with w, its own Scanner (and
// so its own interned names), and closes the chunk's done; until the end
// of the input, a read error or stop.
func (p *parallel) work(w *Scanner) {
	defer p.wg.Done()
	for {
		var c *chunk
		select {
		case c = <-p.free:
		case <-p.stop:
			return
		}
		p.mu.Lock()
		if p.ended || p.stopped() {
			p.mu.Unlock()
			return
		}
		p.fillLocked(c)
		// order has room for every chunk: this never waits.
		p.order <- c
		p.mu.Unlock()
		if c.cut && !p.fallback.Load() {
			w.parseChunk(c)
		}
		close(c.done)
	}
}

// stopped reports whether Close was called.
func (p *parallel) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// fillLocked reads the next chunk into c: the carry of the chunk before,
// then the input up to c's size, cut at the last boundary (the rest
// carried to the next chunk), or to the end of the input. p.mu is held.
func (p *parallel) fillLocked(c *chunk) {
	if c.buf == nil || len(c.buf) <= len(p.carry) {
		// The first chunk's carry is what the read buffer held, which
		// may be more than a small chunk (tests).
		c.buf = make([]byte, p.size+len(p.carry))
	}
	n := copy(c.buf, p.carry)
	var err error
	for n < len(c.buf) && err == nil {
		var k int
		k, err = p.in.Read(c.buf[n:])
		n += k
	}
	*c = chunk{buf: c.buf, data: c.buf[:n], done: make(chan struct{}),
		gs: c.gs[:0], frames: c.frames[:0], flags: c.flags[:0], spans: c.spans[:0]}
	p.carry = p.carry[:0]
	switch {
	case err != nil:
		c.final, p.ended = true, true
		if err != io.EOF {
			c.err = err
		}
	default:
		if i := lastBoundary(c.data); i >= 0 {
			c.data, c.cut = c.data[:i+2], true
			p.carry = append(p.carry, c.buf[i+2:n]...)
		}
	}
}

// parseChunk parses c.data from its start, as a dump of its own, into
// c's arena, and says whether the result is clean.
func (s *Scanner) parseChunk(c *chunk) {
	*s = Scanner{SkipArgs: s.SkipArgs, KeepArgs: s.KeepArgs, SkipFiles: s.SkipFiles,
		names: s.names, recent: s.recent, g: s.g, src: c.data, srcMode: true}
	// The frames are parsed into the arena's free end (Next keeps g.Frames'
	// array), copied only when they outgrow it.
	s.g.Frames = c.frames[len(c.frames):len(c.frames)]
	for s.Next() {
		g := &s.g
		sp := span{frames: int32(len(c.frames)), flags: int32(len(c.flags))}
		if n := len(c.frames); len(g.Frames) > 0 && cap(c.frames)-n >= len(g.Frames) && &c.frames[:n+1][n] == &g.Frames[0] {
			c.frames = c.frames[:n+len(g.Frames)]
		} else {
			c.frames = append(c.frames, g.Frames...)
		}
		c.flags = append(c.flags, g.Flags...)
		sp.frameEnd, sp.flagEnd = int32(len(c.frames)), int32(len(c.flags))
		c.spans = append(c.spans, sp)
		c.gs = append(c.gs, *g)
		g.Frames = c.frames[len(c.frames):len(c.frames)]
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
		c := <-p.order
		<-c.done
		if !c.clean || p.fallback.Load() {
			s.goSequential(c)
			continue
		}
		p.cur, p.at, p.base = c, 0, s.line
		p.used++
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
		c := <-r.p.order
		<-c.done
		r.c = c
	}
	n := copy(b, r.c.data[r.off:])
	r.off += n
	return n, nil
}

// Close stops a parallel scan (Workers > 1) and waits for its goroutines
// (a Read of the input in progress included), which then read the input
// no more. Next calls it when it returns false;
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
