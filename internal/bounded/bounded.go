// Package bounded reads input the tool does not control (files, bodies)
// with a size bound: past the bound, a read fails with a TooLargeError
// naming the input and the bound, never a silent cut. It imports nothing
// of ours, so every layer may use it.
package bounded

import (
	"fmt"
	"io"
)

// TooLargeError is an input that holds more than its bound.
type TooLargeError struct {
	// Name is the input, as messages show it (a path, "<stdin>").
	Name string
	// What says what the input was read as ("a scenario", "/metrics").
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s holds more than %s, the most %s may hold", e.Name, Bytes(e.Limit), e.What)
}

// Reader reads r up to limit bytes; one byte more fails the read with a
// *TooLargeError. Not safe for concurrent use.
type Reader struct {
	r    io.Reader
	left int64
	err  *TooLargeError
}

// NewReader bounds r to limit bytes; name and what are for the error.
func NewReader(r io.Reader, limit int64, name, what string) *Reader {
	return &Reader{r: r, left: limit, err: &TooLargeError{Name: name, What: what, Limit: limit}}
}

// Read implements io.Reader.
func (b *Reader) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err
	}
	return n, err
}

// ReadAll reads all of r, failing with a *TooLargeError beyond limit
// bytes.
func ReadAll(r io.Reader, limit int64, name, what string) ([]byte, error) {
	return io.ReadAll(NewReader(r, limit, name, what))
}

// Bytes prints a size in the unit that makes it round: "16 MiB", "256 B".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// Exceeded returns the *TooLargeError once a read went past the bound, nil
// before: a parser that turned the failed read into an error of its own
// (or stopped there) still did not read the whole input.
func (b *Reader) Exceeded() error {
	if b.left < 0 {
		return b.err
	}
	return nil
}
