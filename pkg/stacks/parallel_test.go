package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// scanWith is scan of r with workers and chunk set (chunk 0: the
// default), so the parallel scan is compared with the sequential one.
func scanWith(r io.Reader, workers, chunk int, skipArgs bool) scanResult {
	sc := NewScanner(r)
	sc.Workers, sc.chunkSize = workers, chunk
	sc.SkipArgs = skipArgs
	if skipArgs {
		sc.KeepArgs, sc.SkipFiles = keepSome, true
	}
	var res scanResult
	for sc.Next() {
		res.gs = append(res.gs, sc.Goroutine().Clone())
	}
	res.stats, res.err = sc.Stats(), sc.Err()
	if sc.par != nil {
		res.parallelChunks = sc.par.used
	}
	sc.Close()
	return res
}

// checkSame fails unless got is want: the same goroutines, Stats and error.
func checkSame(t *testing.T, what string, want, got scanResult) {
	t.Helper()
	if !sameGoroutines(want.gs, got.gs) {
		t.Fatalf("%s: goroutines differ (-sequential +parallel):\n%s", what, cmp.Diff(want.gs, got.gs, cmpopts.EquateEmpty()))
	}
	if !reflect.DeepEqual(want.stats, got.stats) {
		t.Fatalf("%s: Stats differ (-sequential +parallel):\n%s", what, cmp.Diff(want.stats, got.stats))
	}
	if fmt.Sprint(want.err) != fmt.Sprint(got.err) {
		t.Fatalf("%s: Err() = %v, want %v", what, got.err, want.err)
	}
}

// seedDump is the real v1.37 capture repeated until it is several chunks
// of every size the tests use, its goroutine ids made distinct.
func seedDump(t *testing.T, copies int) []byte {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture(captures[0], "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i := range copies {
		out.Write(bytes.ReplaceAll(b, []byte("goroutine "), fmt.Appendf(nil, "goroutine %d", i+1)))
		if !bytes.HasSuffix(b, []byte("\n\n")) {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// TestParallelIsSequential reads dumps, whole and damaged in a later
// chunk, both ways: the goroutines, their lines, Stats, skipped lines,
// cuts and errors are the same, whatever the chunk size.
func TestParallelIsSequential(t *testing.T) {
	seed := seedDump(t, 1)
	mid := len(seed) / 2
	at := func(b []byte, i int, s string) []byte { // s inserted at the line start at or after i
		i += bytes.IndexByte(b[i:], '\n') + 1
		return append(append(append([]byte(nil), b[:i]...), s...), b[i:]...)
	}
	inputs := map[string][]byte{
		"whole":                 seed,
		"junk line mid-file":    at(seed, mid, "junk outside any frame\n"),
		"malformed header":      at(seed, mid, "\ngoroutine x [select]:\nmain.f()\n\tmain.go:1\n\n"),
		"frame past MaxFrames":  at(seed, mid, "\ngoroutine 1 [select]:\n"+strings.Repeat("main.f()\n\tmain.go:1\n", MaxFrames+1)),
		"line too long":         at(seed, mid, strings.Repeat("x", MaxLineBytes+2)+"\n"),
		"cut mid-line":          seed[:len(seed)-30],
		"cut before created by": seed[:bytes.LastIndex(seed, []byte("created by "))],
		"CRLF":                  bytes.ReplaceAll(seed, []byte("\n"), []byte("\r\n")),
		"not a dump":            append([]byte("hello\n"), seed...),
		"no boundary":           bytes.ReplaceAll(seed, []byte("\n\ngoroutine "), []byte("\ngoroutine ")),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, skipArgs := range []bool{false, true} {
				want := scanWith(bytes.NewReader(in), 0, 0, skipArgs)
				for _, chunk := range []int{4096, 64 << 10, 0} {
					for _, workers := range []int{2, 3} {
						got := scanWith(bytes.NewReader(in), workers, chunk, skipArgs)
						checkSame(t, fmt.Sprintf("skipArgs %v, chunk %d, %d workers", skipArgs, chunk, workers), want, got)
						// The capture's largest goroutine is 16.7 KB: from 64 KiB
						// on every chunk has a boundary.
						if chunk == 64<<10 && (name == "whole" || name == "junk line mid-file") && 2*got.parallelChunks < len(in)/chunk-parallelFrom {
							t.Errorf("chunk %d, %d workers: %d chunks parsed by the workers, want most of the %d after the first %d", chunk, workers, got.parallelChunks, len(in)/chunk-parallelFrom, parallelFrom)
						}
					}
				}
			}
		})
	}
}

// TestParallelErrorLine: a fatal error in a later chunk names the line
// of the whole input, not of its chunk.
func TestParallelErrorLine(t *testing.T) {
	seed := seedDump(t, 2)
	lines := bytes.Count(seed, []byte("\n"))
	in := append(append([]byte(nil), seed...), "goroutine 5 [select]:\nmain.f()\n\tmain.go:1 +0x1\n"+strings.Repeat("y", MaxLineBytes+1)+"\n"...)
	got := scanWith(bytes.NewReader(in), 2, 4096, false)
	var se *SyntaxError
	if !errors.As(got.err, &se) || se.Line() != lines+4 {
		t.Fatalf("Err() = %v, want a *SyntaxError at line %d", got.err, lines+4)
	}
	if got.stats.Goroutines < 2 || len(got.gs) != got.stats.Goroutines {
		t.Fatalf("%d goroutines returned, Stats says %d: want those before the error", len(got.gs), got.stats.Goroutines)
	}
}

// TestParallelReadError: a read error mid-file ends the scan with the
// error, at the line the sequential scan names, after the same goroutines.
func TestParallelReadError(t *testing.T) {
	seed := seedDump(t, 2)
	errIO := errors.New("disk on fire")
	for _, n := range []int{len(seed) / 3, len(seed) - 100, 10} {
		want := scanWith(&errReader{data: string(seed[:n]), err: errIO}, 0, 0, true)
		got := scanWith(&errReader{data: string(seed[:n]), err: errIO}, 2, 2048, true)
		checkSame(t, fmt.Sprintf("error after %d bytes", n), want, got)
		if !errors.Is(got.err, errIO) {
			t.Fatalf("error after %d bytes: Err() = %v, want it to wrap %v", n, got.err, errIO)
		}
	}
}

// closedReader fails the test when read after closed is set.
type closedReader struct {
	t      *testing.T
	r      io.Reader
	closed atomic.Bool
	bytes  atomic.Int64
}

func (c *closedReader) Read(p []byte) (int, error) {
	if c.closed.Load() {
		c.t.Errorf("read after Close returned")
	}
	n, err := c.r.Read(p)
	c.bytes.Add(int64(n))
	return n, err
}

// TestParallelClose: a caller that stops early calls Close, which stops
// the reader and the workers: the input is read no more, and Next returns
// false from then on.
func TestParallelClose(t *testing.T) {
	seed := seedDump(t, 1)
	cr := &closedReader{t: t, r: bytes.NewReader(seed)}
	sc := NewScanner(cr)
	sc.Workers, sc.chunkSize = 2, 1024
	for range 30 {
		if !sc.Next() {
			t.Fatalf("Next = false, Err() = %v", sc.Err())
		}
	}
	if sc.par == nil {
		t.Fatalf("after %d bytes of goroutines the scan is not parallel", sc.bytes)
	}
	sc.Close()
	cr.closed.Store(true)
	if sc.Next() {
		t.Fatal("Next = true after Close")
	}
	sc.Close()
	// The ring bounds what was read ahead: a few chunks (through the
	// Scanner's 64 KiB buffer, which chunks this small are read through,
	// and which held the first chunk's start), not the input.
	if got, most := cr.bytes.Load(), int64(2*readBufferSize+(2*2+2+1)*1024); got > most || got >= int64(len(seed)) {
		t.Errorf("%d bytes read of %d before Close, want at most %d", got, len(seed), most)
	}
}

func TestLastBoundary(t *testing.T) {
	for _, in := range []string{"", "\n", "\n\n", "\n\ngoroutine ", "a\n\ngoroutine 1\n\ngoroutine 2", "goroutine 1\n\ngoroutine", "x\n\n\ngoroutine 3 [", "\n\ngoroutine \n\ngoroutin"} {
		if got, want := lastBoundary([]byte(in)), strings.LastIndex(in, "\n\ngoroutine "); got != want {
			t.Errorf("lastBoundary(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestParallelSmallDumpIsSequential: a dump that fits the read buffer
// starts no workers (the replay reads its own small dumps in a loop).
func TestParallelSmallDumpIsSequential(t *testing.T) {
	in := craftedDebug2()[0]
	sc := NewScanner(strings.NewReader(in))
	sc.Workers = 2
	n := 0
	for sc.Next() {
		n++
	}
	if sc.par != nil || n != 5 || sc.Err() != nil {
		t.Fatalf("%d goroutines, Err() = %v, workers started: %v; want 5, nil, false", n, sc.Err(), sc.par != nil)
	}
}

// TestParallelIsSequentialOnMutations: the parallel scan reads damaged
// dumps as the sequential one does, on a fixed series of random edits of
// real and crafted goroutines (fuzzing does this further, FuzzScanner).
func TestParallelIsSequentialOnMutations(t *testing.T) {
	// The capture's goroutines after its first are under 3 KB.
	base := append(seedDump(t, 1)[:128<<10:128<<10], strings.Join(craftedDebug2(), "\n")...)
	rng := rand.New(rand.NewPCG(29, 2026))
	used := 0
	for i := range 300 {
		b := append([]byte(nil), base...)
		for range 1 + rng.IntN(4) {
			j := rng.IntN(len(b))
			switch rng.IntN(4) {
			case 0:
				b[j] = "\n g()\t:x+"[rng.IntN(9)]
			case 1:
				b = append(b[:j], b[j+1:]...)
			case 2:
				b = slices.Insert(b, j, []byte("\n\ngoroutine ")...)
			case 3:
				b = b[:j]
			}
		}
		chunk := 3072 + rng.IntN(2048)
		want := scanWith(bytes.NewReader(b), 0, 0, i%2 == 0)
		got := scanWith(bytes.NewReader(b), 2, chunk, i%2 == 0)
		checkSame(t, fmt.Sprintf("edit %d, chunk %d", i, chunk), want, got)
		used += got.parallelChunks
	}
	if used < 1000 {
		t.Errorf("%d chunks parsed by the workers in 300 scans: the edits left the parallel scan untested", used)
	}
	t.Logf("%d chunks parsed by the workers", used)
}
