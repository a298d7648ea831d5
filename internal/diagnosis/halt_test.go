package diagnosis

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// stopAfter is a context whose Err turns context.Canceled at its n+1-th
// call: it cancels a diagnosis after n checks, by event, not by time, and
// counts the checks.
type stopAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func newStopAfter(n int64) *stopAfter { return &stopAfter{Context: context.Background(), n: n} }

func (c *stopAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// apfStorm is a server without a goroutine dump whose two APF dumps list
// the same n executing watches, of one resource whose
// apiserver_watch_events_total did not grow: every row is stuck.
func apfStorm(n int) []watches.Server {
	reqs := make([]apf.Request, n)
	for i := range reqs {
		reqs[i] = watchRequest(fmt.Sprintf("client-%d", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	a, b := t0.Add(10*time.Minute), t0.Add(11*time.Minute+30*time.Second)
	return []watches.Server{{Name: "storm", Samples: []watches.Sample{apfSample(a, 404, 10, reqs...), apfSample(b, 404, 10, reqs...)}}}
}

// DiagnoseContext stops at the first check after its context is done and
// returns context.Canceled and no report, wherever it is: before the
// first server, mid-way through the rows of a storm (APF-only, and a
// goroutine dump matched with its APF dump), or at the end.
func TestDiagnoseContextStops(t *testing.T) {
	const n = 20_000
	storm := apfStorm(n)
	// Every check of the whole diagnosis, counted once.
	whole := newStopAfter(1 << 62)
	if r, err := DiagnoseContext(whole, storm, Options{}); err != nil || r.Summary.StuckWatches != n {
		t.Fatalf("uncanceled: %v, want %d stuck watches", err, n)
	}
	total := whole.calls.Load()
	if total < n {
		t.Fatalf("%d checks for %d rows: want one a row at least", total, n)
	}
	for _, tc := range []struct {
		name  string
		after int64
	}{
		{"canceled before", 0},
		{"after 100 rows", 100},
		{"half-way", total / 2},
		{"at the last check", total - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := newStopAfter(tc.after)
			r, err := DiagnoseContext(ctx, storm, Options{})
			if !errors.Is(err, context.Canceled) || r != nil {
				t.Fatalf("got a report (%v) and %v, want none and context.Canceled", r != nil, err)
			}
			// Every loop breaks at its first check once canceled: a few
			// checks on the way out, not one per row left.
			if extra := ctx.calls.Load() - tc.after; extra > 10 {
				t.Errorf("%d checks after the cancel: the diagnosis went on", extra)
			}
		})
	}
}

// TestAPFOnlyIsLinear: without a goroutine dump, the work and the memory
// allocated grow linearly with the APF rows. The diagnosis checks its
// context once a row and per step, so the checks count the work; the
// bytes allocated catch a pass over every row made per row (the
// quadratic ages lookup before: 50,000 rows took hours). 4x the rows must
// cost less than 6x (quadratic is 16x).
func TestAPFOnlyIsLinear(t *testing.T) {
	const n = 500 // small enough that the quadratic code fails in seconds
	cost := func(n int) (checks, bytes uint64) {
		storm := apfStorm(n)
		ctx := newStopAfter(1 << 62)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := DiagnoseContext(ctx, storm, Options{})
		runtime.ReadMemStats(&after)
		if err != nil || r.Summary.StuckWatches != n {
			t.Fatalf("%d rows: %v, want %d stuck watches", n, err, n)
		}
		return uint64(ctx.calls.Load()), after.TotalAlloc - before.TotalAlloc
	}
	c1, b1 := cost(n)
	c4, b4 := cost(4 * n)
	if c4 > 6*c1 || b4 > 6*b1 {
		t.Errorf("rows %d -> %d: checks %d -> %d, bytes allocated %d -> %d: more than 6x (quadratic)", n, 4*n, c1, c4, b1, b4)
	}
}

// The stuck findings of a storm keep one copy of the texts they share
// word for word (the message, the ages rounded to the second, the seats).
func TestAPFOnlySharesTexts(t *testing.T) {
	r := Diagnose(apfStorm(3), Options{})
	if len(r.Findings) != 3 {
		t.Fatalf("%d findings, want 3", len(r.Findings))
	}
	for _, f := range r.Findings {
		if f.Type != api.StuckInitialEvents || len(f.Evidence) < 3 {
			t.Fatalf("finding %s with evidence %q, want stuck with its ages", f.Type, f.Evidence)
		}
	}
	a, b := r.Findings[0], r.Findings[1]
	if unsafeData(a.Message) != unsafeData(b.Message) || unsafeData(a.Evidence[1]) != unsafeData(b.Evidence[1]) {
		t.Errorf("two findings of one storm hold their own copies of the shared texts")
	}
}

// unsafeData is where s's bytes are: two strings sharing it are one copy.
func unsafeData(s string) *byte { return unsafe.StringData(s) }
