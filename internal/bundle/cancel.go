package bundle

import (
	"context"
	"io"
)

// ctxReader is an input read under a context: once ctx is done, every
// read fails with ctx.Err(), so the parser reading it stops at its next
// read (a few hundred KiB), whatever the size of the input.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
