package model

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// CostMeter is one instance's cost as the run goes: the pause histogram at
// its first /metrics read and the bytes of reads not recorded as a fetch.
// Used by one goroutine at a time (an instance's samples are sequential).
type CostMeter struct {
	First *metrics.Pauses
	// Note is why no pause figure can be given (no histogram, a parse
	// error), set by the first read that tells.
	Note string
	// ExtraBytes are bytes read outside the samples' fetches (the final
	// /metrics read, the load-balancer check).
	ExtraBytes int64
}

// NotePauses records the histogram of a /metrics read, when it is the
// first successful one of the run.
func (m *CostMeter) NotePauses(s *metrics.Sample) {
	if m.First != nil {
		return
	}
	p, ok, err := metrics.SchedPauses(s)
	switch {
	case err != nil:
		m.Note = err.Error()
	case !ok:
		m.Note = fmt.Sprintf("the server exports no %s (a Go runtime older than 1.22, or no runtime metrics collector): its stop-the-world pauses cannot be measured", metrics.SchedPausesOther)
	default:
		m.First, m.Note = &p, ""
	}
}

// PathOf is the path, with its query, fetched from each instance for a
// kind (bundle.Kinds, the one table of the input kinds).
func PathOf(k api.FileKind) string { return bundle.Path(k) }

// StoreError is a failure of the target (a parse error, a full disk), not
// of the server.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }

func (e *StoreError) Unwrap() error { return e.Err }

// StartFamily is the family of the process start time, all that a check
// of which process answered reads of /metrics: a new slice each call, so
// no caller can change another's.
func StartFamily() []string { return []string{"process_start_time_seconds"} }

type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// Mixed reports whether a sample of the instance reached several
// processes.
func (r InstanceResult) Mixed() bool {
	for _, s := range r.Samples {
		if s.Mixed != "" {
			return true
		}
	}
	return false
}

// InstanceResult is the record of one instance: its samples (the manifest
// of a bundle) and its errors.
type InstanceResult struct {
	Instance Instance
	Version  string
	// GoVersion is /version's goVersion ("go1.26.8"): an execution trace
	// needs Go 1.22 or later.
	GoVersion string
	Samples   []api.Sample
	Errors    []error
	Notes     []string
	// Withheld are the debug=2 dumps not taken because their estimated
	// pause exceeded Config.MaxPause, one per sample concerned.
	Withheld []*PauseBudgetError
	// Cost is what the run cost the instance (see finishCost); nil when
	// it was not measured (the metrics command, an instance never read).
	Cost *api.ServerCost
	// Trace is the execution trace taken between the samples, nil when
	// none was attempted.
	Trace *TraceResult

	Meter CostMeter
	// Spread says how one connection through the kubeconfig host reached
	// two API server processes, "" when none did (live/pin.go).
	Spread string
	// DumpEvidence is why the debug=2 dump was chosen over a trace.
	DumpEvidence string
}

// Failed reports whether nothing at all could be read.
func (r InstanceResult) Failed() bool {
	for _, s := range r.Samples {
		for _, f := range s.Fetches {
			if f.Error == "" {
				return false
			}
		}
	}
	return true
}

// Parallel runs f(0..n-1) with at most limit at once and returns when all
// have returned. Calls not yet started when ctx ends are skipped.
func Parallel(ctx context.Context, limit, n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}(i)
	}
	wg.Wait()
}
