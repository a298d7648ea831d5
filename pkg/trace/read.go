package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	xtrace "golang.org/x/exp/trace"
)

// Read reads one execution trace from r and summarises the goroutines
// opts.Keep accepts. r is read once, as a stream, and at most
// opts.MaxBytes bytes of it.
//
// On a stream that ends inside a generation, is malformed, or exceeds
// MaxBytes, Read returns both a Summary (Truncated, covering the events
// read before the fault) and an error naming opts.Source (a *LimitError or
// a *TruncatedError); a caller may report the Summary with the error as a
// note. A stream that is not a Go 1.22+ trace returns a nil Summary and a
// *VersionError.
func Read(r io.Reader, opts Options) (sum *Summary, err error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	cr := &countingReader{r: r, limit: opts.MaxBytes}
	br := bufio.NewReader(cr)
	version, err := checkHeader(br, opts.Source)
	if err != nil {
		return nil, err
	}
	xr, err := xtrace.NewReader(br)
	if err != nil {
		return nil, &VersionError{Source: opts.Source, Header: version + ": " + err.Error()}
	}
	st := newState(opts)
	st.sum.Version = version
	defer func() {
		// x/exp/trace validates what it decodes, but a hostile stream must
		// never crash the caller: a panic becomes a truncation.
		if p := recover(); p != nil {
			sum, err = st.finish(cr, fmt.Errorf("decoder failed: %v", p))
		}
	}()
	for {
		ev, rerr := xr.ReadEvent()
		if rerr == io.EOF {
			return st.finish(cr, nil)
		}
		if rerr != nil {
			return st.finish(cr, rerr)
		}
		if !st.event(&ev, cr.n) {
			st.sum.StoppedEarly = true
			st.sum.Why = fmt.Sprintf("stopped by the caller after %d generations", st.sum.Generations)
			return st.finish(cr, nil)
		}
	}
}

// TruncatedError says that a trace ended or broke before its end: Summary
// covers what was read before Err.
type TruncatedError struct {
	Source string
	// Bytes were read, and Generations complete, before Err.
	Bytes       int64
	Generations int
	Err         error
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("execution trace %q cut short after %d bytes (%d complete generations): %v", e.Source, e.Bytes, e.Generations, e.Err)
}

func (e *TruncatedError) Unwrap() error { return e.Err }

// checkHeader reads the 16-byte header ("go 1.26 trace\x00\x00\x00",
// internal/trace/version in x/exp) itself, so that pre-1.22 traces, which
// x/exp/trace parses whole into memory, are refused before any decoding.
func checkHeader(br *bufio.Reader, source string) (string, error) {
	head, err := br.Peek(16)
	if err != nil && !errors.Is(err, io.EOF) {
		// The stream failed (a timeout, a reset) before its header was
		// whole: say so, not that it is no trace.
		return "", fmt.Errorf("execution trace %q: reading its 16-byte header (%d bytes read): %w", source, len(head), err)
	}
	if err != nil && len(head) == 0 {
		return "", &VersionError{Source: source, Header: ""}
	}
	var minor int
	var rest string
	if _, serr := fmt.Sscanf(string(head), "go 1.%d %s", &minor, &rest); serr != nil || len(head) < 16 ||
		len(rest) < 5 || rest[:5] != "trace" || minor < 22 {
		return "", &VersionError{Source: source, Header: string(head)}
	}
	return fmt.Sprintf("go 1.%d", minor), nil
}

// countingReader counts the bytes read and refuses to read past limit.
// err keeps the first error of r other than io.EOF: the decoder reports a
// stream that fails mid-batch as its own "failed to read full batch",
// without the cause (a transport's bound, a reset connection).
type countingReader struct {
	r        io.Reader
	n, limit int64
	exceeded bool
	err      error
}

var errLimit = errors.New("byte limit reached")

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		var one [1]byte
		if k, _ := io.ReadFull(c.r, one[:]); k > 0 {
			c.exceeded = true
			return 0, errLimit
		}
		return 0, io.EOF
	}
	if rem := c.limit - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return k, err
}

// wall converts a trace time to the traced process's wall clock.
func wall(c *xtrace.ClockSnapshot, t xtrace.Time) time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.Wall.Add(t.Sub(c.Trace))
}
