package bundle

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// cancelAt cancels its context once n bytes were read through it, and
// counts what is read after.
type cancelAt struct {
	r      io.Reader
	n      int64
	read   int64
	after  int64
	cancel context.CancelFunc
}

func (c *cancelAt) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	if c.read >= c.n {
		c.after += int64(k)
	}
	c.read += int64(k)
	if c.read >= c.n {
		c.cancel()
	}
	return k, err
}

// Ctrl-C during the load of a large dump ends it at its next read: the
// load returns context.Canceled, having read little more than what was
// read before the cancel (a second's work is tens of MB). The dump is a
// million goroutines (about 1 GB), generated as it is read.
func TestLoadContextStopsAMillionGoroutineDump(t *testing.T) {
	set, err := dumpgen.Repo()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := set.Write(pw, dumpgen.Config{Goroutines: 1_000_000, Stuck: 4})
		pw.CloseWithError(err)
	}()
	defer pr.Close() // ends the writer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &cancelAt{r: pr, n: 16 << 20, cancel: cancel}
	l, err := LoadContext(ctx, []string{"-"}, Options{Stdin: in, MaxDumpBytes: 2 << 30})
	if !errors.Is(err, context.Canceled) || l != nil {
		t.Fatalf("LoadContext returned %v, %v; want context.Canceled and nothing", l, err)
	}
	if in.after > 4<<20 {
		t.Errorf("read %d bytes after the cancel, want at most 4 MiB", in.after)
	}
}

// A cancelled context reads no file of a directory.
func TestLoadContextCancelledReadsNothing(t *testing.T) {
	dir := t.TempDir()
	data, _, err := dumpgen.Cached(dumpgen.Config{Goroutines: 10_000, Stuck: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "goroutines-debug2.txt"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l, err := LoadContext(ctx, []string{dir}, Options{}); !errors.Is(err, context.Canceled) || l != nil {
		t.Fatalf("LoadContext returned %v, %v; want context.Canceled and nothing", l, err)
	}
	if _, err := Load([]string{dir}, Options{}); err != nil {
		t.Fatalf("Load of the same directory: %v", err)
	}
}
