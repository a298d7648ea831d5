package trace

import (
	"errors"
	"io"
)

// Read reads one execution trace from r and summarises the goroutines
// opts.Keep accepts. r is read once, as a stream, and at most
// opts.MaxBytes bytes of it.
//
// On a stream that ends inside a generation, is malformed, or exceeds
// MaxBytes, Read returns both a Summary (Truncated, covering the complete
// generations read before the fault) and an error naming opts.Source; a
// caller may report the Summary with the error as a note. A stream that is
// not a Go 1.22+ trace returns a nil Summary and a *VersionError.
func Read(r io.Reader, opts Options) (*Summary, error) {
	return nil, errors.New("trace: not implemented yet")
}
