package watches

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// withProcs runs f with GOMAXPROCS n: ReadDump parses on that many
// workers (one: the sequential scan).
func withProcs(n int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

// TestReadDumpParallelIsSequential: on two workers ReadDump returns what
// the sequential scan makes of the same dump, and a second dump
// concatenated after the first is refused at the same line, in a later
// chunk than the first.
func TestReadDumpParallelIsSequential(t *testing.T) {
	seed := seedFile(t, "goroutine-debug2.txt")
	twice := append(append(append([]byte(nil), seed...), '\n'), seed...)
	for name, in := range map[string][]byte{"the capture": seed, "two captures concatenated": twice} {
		t.Run(name, func(t *testing.T) {
			var seq, par *Dump
			var seqErr, parErr error
			withProcs(1, func() { seq, seqErr = ReadDump(bytes.NewReader(in), ReadOptions{}) })
			withProcs(2, func() { par, parErr = ReadDump(bytes.NewReader(in), ReadOptions{}) })
			if fmt.Sprint(seqErr) != fmt.Sprint(parErr) {
				t.Fatalf("two workers: err = %v, want %v", parErr, seqErr)
			}
			if !reflect.DeepEqual(seq, par) {
				t.Fatalf("two workers: the Dump differs from the sequential scan's")
			}
		})
	}
	var se *stacks.SyntaxError
	withProcs(2, func() { _, err := ReadDump(bytes.NewReader(twice), ReadOptions{}); errors.As(err, &se) })
	if lines := bytes.Count(seed, []byte("\n")); se == nil || se.Line() <= lines {
		t.Fatalf("concatenated: error %v, want a *stacks.SyntaxError past line %d", se, lines)
	}
}

// lateReader fails the test when read after ReadDump returned.
type lateReader struct {
	t        *testing.T
	r        io.Reader
	returned atomic.Bool
}

func (l *lateReader) Read(p []byte) (int, error) {
	if l.returned.Load() {
		l.t.Error("the dump was read after ReadDump returned")
	}
	return l.r.Read(p)
}

// TestReadDumpStopsItsWorkers: an Each error ends ReadDump early with
// that error, and the workers reading ahead stop before it returns.
func TestReadDumpStopsItsWorkers(t *testing.T) {
	errStop := errors.New("enough")
	withProcs(2, func() {
		lr := &lateReader{t: t, r: bytes.NewReader(seedFile(t, "goroutine-debug2.txt"))}
		n := 0
		_, err := ReadDump(lr, ReadOptions{Each: func(*stacks.Goroutine) error {
			if n++; n == 100 {
				return errStop
			}
			return nil
		}})
		lr.returned.Store(true)
		if !errors.Is(err, errStop) || n != 100 {
			t.Fatalf("err = %v after %d goroutines, want %v after 100", err, n, errStop)
		}
	})
}
