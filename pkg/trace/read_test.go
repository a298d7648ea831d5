package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	rtrace "runtime/trace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// selfTrace is an execution trace of this test process, with a goroutine
// parked before the trace began and never woken (stuck), and one woken by
// another over a channel (pong, woken by ping).
type selfTrace struct {
	data              bytes.Buffer
	stuck, ping, pong int64
	deep              int64
	rounds            int
}

//go:noinline
func stuckLoop(id chan<- int64, never <-chan struct{}) {
	id <- golden.GoroutineID()
	<-never
}

// deepLoop parks under depth frames of itself: a stack far deeper than
// the tracer's 128 frames.
//
//go:noinline
func deepLoop(id chan<- int64, never <-chan struct{}, depth int) {
	if depth > 0 {
		deepLoop(id, never, depth-1)
		return
	}
	id <- golden.GoroutineID()
	<-never
}

//go:noinline
func pongLoop(id chan<- int64, in <-chan int, done *sync.WaitGroup) {
	defer done.Done()
	id <- golden.GoroutineID()
	for range in {
	}
}

//go:noinline
func pingLoop(id chan<- int64, out chan<- int, n int, done *sync.WaitGroup) {
	defer done.Done()
	id <- golden.GoroutineID()
	for i := range n {
		out <- i
	}
	close(out)
}

// parked reports whether goroutine id is parked in a channel receive, from
// the process's own dump: the trace must begin with it already parked.
func parked(id int64) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Contains(string(buf[:n]), "goroutine "+strconv.FormatInt(id, 10)+" [chan receive")
}

// captureSelf traces this process while the three loops run; release
// ends the stuck loop.
func captureSelf() (st *selfTrace, release func(), err error) {
	st = &selfTrace{rounds: 200}
	never := make(chan struct{})
	release = func() { close(never) }
	ids := make(chan int64, 4)
	go stuckLoop(ids, never)
	st.stuck = <-ids
	go deepLoop(ids, never, 500)
	st.deep = <-ids
	for !parked(st.stuck) || !parked(st.deep) {
		runtime.Gosched()
	}
	if err := rtrace.Start(&st.data); err != nil {
		release()
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Add(2)
	ch := make(chan int)
	go pongLoop(ids, ch, &wg)
	st.pong = <-ids
	go pingLoop(ids, ch, st.rounds, &wg)
	st.ping = <-ids
	wg.Wait()
	rtrace.Stop()
	return st, release, nil
}

func newSelfTrace(tb testing.TB) *selfTrace {
	tb.Helper()
	st, release, err := captureSelf()
	if err != nil {
		tb.Fatalf("runtime/trace.Start: %v", err)
	}
	tb.Cleanup(release)
	return st
}

// keepOurs keeps the goroutines of the three loops above.
func keepOurs(stack []trace.Frame) bool {
	for _, f := range stack {
		if strings.HasSuffix(f.Func, "Loop") && strings.Contains(f.Func, "trace_test.") {
			return true
		}
	}
	return false
}

func byID(s *trace.Summary) map[int64]trace.Goroutine {
	m := map[int64]trace.Goroutine{}
	for _, g := range s.Goroutines {
		m[g.ID] = g
	}
	return m
}

func TestReadSelfTrace(t *testing.T) {
	st := newSelfTrace(t)
	sum, err := trace.Read(bytes.NewReader(st.data.Bytes()), trace.Options{Source: "self", Keep: keepOurs})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if sum.Truncated || sum.StoppedEarly || sum.Bytes != int64(st.data.Len()) || sum.Window <= 0 || sum.Generations < 1 {
		t.Errorf("summary: truncated %v stopped %v bytes %d of %d window %v generations %d",
			sum.Truncated, sum.StoppedEarly, sum.Bytes, st.data.Len(), sum.Window, sum.Generations)
	}
	if sum.Start.IsZero() || !sum.End.After(sum.Start) {
		t.Errorf("wall clock window %v - %v, want a clock snapshot (Go 1.25+)", sum.Start, sum.End)
	}
	gs := byID(sum)
	stuck, ok := gs[st.stuck]
	if !ok {
		t.Fatalf("stuck goroutine %d not kept; kept %v", st.stuck, sum.Goroutines)
	}
	gotStuck := []any{stuck.StartState, stuck.EndState, stuck.Transitions, stuck.Wakeups, stuck.FirstSeen, stuck.LongestGap}
	wantStuck := []any{trace.StateWaiting, trace.StateWaiting, 0, 0, time.Duration(0), sum.Window}
	if diff := cmp.Diff(wantStuck, gotStuck); diff != "" {
		t.Errorf("stuck goroutine (-want +got):\n%s", diff)
	}
	if len(stuck.Stack) == 0 || !strings.HasSuffix(stuck.Stack[len(stuck.Stack)-1].Func, "stuckLoop") && !keepOurs(stuck.Stack) {
		t.Errorf("stuck stack %v, want stuckLoop in it", stuck.Stack)
	}
	pong, ok := gs[st.pong]
	if !ok {
		t.Fatalf("pong goroutine %d not kept", st.pong)
	}
	if pong.Transitions < 2 || pong.Wakeups < 1 || pong.EndState != trace.StateNotExist || pong.LongestGap >= sum.Window {
		t.Errorf("pong: transitions %d wakeups %d end %s gap %v (window %v)", pong.Transitions, pong.Wakeups, pong.EndState, pong.LongestGap, sum.Window)
	}
	if !wokenBy(pong, st.ping) {
		t.Errorf("pong woken by %v, want ping %d among them", pong.WokenBy, st.ping)
	}
}

func wokenBy(g trace.Goroutine, id int64) bool {
	for _, w := range g.WokenBy {
		if w.ID == id && w.Count > 0 {
			return true
		}
	}
	return false
}

func TestReadFaults(t *testing.T) {
	st := newSelfTrace(t)
	data := st.data.Bytes()
	var limit *trace.LimitError
	var cut *trace.TruncatedError
	var version *trace.VersionError
	tests := []struct {
		name   string
		in     []byte
		opts   trace.Options
		is     func(error) bool
		noSum  bool
		inText string
	}{
		{"over the byte bound", data, trace.Options{Source: "big", MaxBytes: int64(len(data) / 2)}, func(e error) bool { return errors.As(e, &limit) }, false, `"big" exceeds`},
		{"cut in half", data[:len(data)/2], trace.Options{Source: "half"}, func(e error) bool { return errors.As(e, &cut) }, false, `"half" cut short`},
		{"stream failing mid-batch", nil, trace.Options{Source: "reset"}, func(e error) bool { return errors.As(e, &cut) && errors.Is(e, errReset) }, false, `"reset" cut short after 4000 bytes (0 complete generations): connection reset`},
		{"empty", nil, trace.Options{Source: "empty"}, func(e error) bool { return errors.As(e, &version) }, true, `"empty" is not`},
		{"old version", append([]byte("go 1.21 trace\x00\x00\x00"), data[16:]...), trace.Options{Source: "old"}, func(e error) bool { return errors.As(e, &version) }, true, `"old" is not a Go 1.22`},
		{"not a trace", []byte("goroutine 1 [running]:\nmain.main()\n"), trace.Options{Source: "dump"}, func(e error) bool { return errors.As(e, &version) }, true, `"dump" is not`},
		{"future version", append([]byte("go 1.99 trace\x00\x00\x00"), data[16:]...), trace.Options{Source: "new"}, func(e error) bool { return errors.As(e, &version) }, true, `unsupported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(tt.in)
			if tt.in == nil && tt.opts.Source == "reset" {
				// The transport fails inside the first generation: the
				// error names its cause, not only the decoder's short batch.
				r = io.MultiReader(bytes.NewReader(data[:4000]), iotest.ErrReader(errReset))
			}
			sum, err := trace.Read(r, tt.opts)
			if err == nil || !tt.is(err) || !strings.Contains(err.Error(), tt.inText) {
				t.Fatalf("error %v (%T), want one containing %q", err, err, tt.inText)
			}
			if tt.noSum != (sum == nil) {
				t.Fatalf("summary %v, want nil: %v", sum, tt.noSum)
			}
			if sum != nil && (!sum.Truncated || sum.Why == "") {
				t.Errorf("summary truncated %v why %q, want it flagged", sum.Truncated, sum.Why)
			}
		})
	}
}

var errReset = errors.New("connection reset")

func TestReadStopsEarly(t *testing.T) {
	st := newSelfTrace(t)
	calls := 0
	sum, err := trace.Read(bytes.NewReader(st.data.Bytes()), trace.Options{Keep: keepOurs, Progress: func(p trace.Progress) bool {
		calls++
		if p.Generations != 1 || len(p.Goroutines) == 0 {
			t.Errorf("progress: generations %d goroutines %d", p.Generations, len(p.Goroutines))
		}
		return false
	}})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if calls != 1 || !sum.StoppedEarly || sum.Truncated || sum.Why == "" || sum.Bytes > int64(st.data.Len()) {
		t.Errorf("calls %d stopped %v truncated %v why %q bytes %d", calls, sum.StoppedEarly, sum.Truncated, sum.Why, sum.Bytes)
	}
}

// A stack deeper than MaxFrames keeps its innermost frames and is counted.
func TestReadHugeStack(t *testing.T) {
	st := newSelfTrace(t)
	sum, err := trace.Read(bytes.NewReader(st.data.Bytes()), trace.Options{Keep: keepOurs})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	deep, ok := byID(sum)[st.deep]
	if !ok || len(deep.Stack) != trace.DefaultMaxFrames || sum.CutStacks != 1 || !strings.HasPrefix(deep.Stack[0].Func, "runtime.") {
		t.Errorf("deep goroutine kept %v, %d frames, %d stacks cut; want %d innermost frames, one stack cut", ok, len(deep.Stack), sum.CutStacks, trace.DefaultMaxFrames)
	}
}

func TestReadBounds(t *testing.T) {
	st := newSelfTrace(t)
	sum, err := trace.Read(bytes.NewReader(st.data.Bytes()), trace.Options{Keep: keepOurs, MaxGoroutines: 1, MaxFrames: 1})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(sum.Goroutines) != 1 || sum.DroppedGoroutines < 1 || len(sum.Goroutines[0].Stack) != 1 || sum.CutStacks != 1 {
		t.Errorf("kept %d dropped %d frames %v cut %d", len(sum.Goroutines), sum.DroppedGoroutines, sum.Goroutines, sum.CutStacks)
	}
}

// The real kube-apiserver trace of testdata/kube-apiserver-v1.37.2/trace-seed:
// slow-informer's watcher (35799) parked the whole window, paced-reader's
// (38014) woken by its handler (37868), between the samples' capture times.
func TestReadSeedTrace(t *testing.T) {
	f, err := os.Open(seedTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	sum, err := trace.Read(f, trace.Options{Source: "seed", Keep: keepWatchPath})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	sampleA := time.Date(2026, 12, 1, 22, 21, 17, 560826659, time.UTC)
	sampleB := time.Date(2026, 12, 1, 22, 21, 37, 807238512, time.UTC)
	if sum.Bytes != st.Size() || sum.Version != "go 1.26" || sum.Window < 19*time.Second || sum.Window > 21*time.Second ||
		sum.Start.Before(sampleA) || sum.End.After(sampleB) || sum.Generations < 15 {
		t.Errorf("summary: %d of %d bytes, %s, window %v (%v - %v), %d generations", sum.Bytes, st.Size(), sum.Version, sum.Window, sum.Start, sum.End, sum.Generations)
	}
	// Its 20 generations are 107,813 to 154,027 bytes (113,712 the first,
	// header included): the smallest is the third.
	if sum.SmallestGeneration != 107_813 {
		t.Errorf("smallest generation %d bytes, want 107813", sum.SmallestGeneration)
	}
	gs := byID(sum)
	stuck, paced := gs[35799], gs[38014]
	if diff := cmp.Diff([]any{trace.StateWaiting, trace.StateWaiting, 0, time.Duration(0), sum.Window},
		[]any{stuck.StartState, stuck.EndState, stuck.Transitions, stuck.FirstSeen, stuck.LongestGap}); diff != "" {
		t.Errorf("slow-informer's watcher (-want +got):\n%s", diff)
	}
	if paced.Transitions == 0 || len(paced.WokenBy) == 0 || paced.WokenBy[0].ID != 37868 || paced.LongestGap > 2*time.Second {
		t.Errorf("paced-reader's watcher: %d transitions, woken by %v, longest gap %v", paced.Transitions, paced.WokenBy, paced.LongestGap)
	}
}
