package live

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// probeParallel bounds the reachability probes in flight at once. A probe
// is one GET of /version (a few hundred bytes), so instances are probed
// many at a time: 500 listed instances that accept connections and never
// answer take ceil(500/64) x probeTimeout (80 s), not 500/4 x 10 s (21
// minutes) as when probes took Config.Parallel's slots.
const probeParallel = 64

// maxNamed is how many instances a progress line names before "and N
// more".
const maxNamed = 3

// probeAll builds a client for each instance and probes the pinned ones,
// at most probeParallel at once; clients[i] stays nil for an instance that
// cannot be read. While probes wait, a progress line every
// Config.ProgressEvery says how many answered and names the slowest.
func probeAll(ctx context.Context, c model.Config, insts []model.Instance, results []model.InstanceResult, clients []*model.Client) {
	w := &probeWatch{waiting: map[string]time.Time{}, total: len(insts)}
	stop := every(c, func() {
		if line := w.line(c.Clock.Now(), probeWait(c)); line != "" {
			c.Progressf("%s", line)
		}
	})
	defer stop()
	model.Parallel(ctx, max(c.Parallel, probeParallel), len(insts), func(i int) {
		inst := insts[i]
		results[i].Instance = inst
		cl, err := c.ClientFor(inst)
		if err != nil {
			results[i].Errors = append(results[i].Errors, err)
			return
		}
		if inst.Pinned {
			w.start(inst.Name, c.Clock.Now())
			err := probe(ctx, cl, c.RequestTimeout)
			w.end(inst.Name)
			if err != nil {
				results[i].Errors = append(results[i].Errors, fmt.Errorf("%s: not reachable directly: %w", inst.Name, err))
				return
			}
		}
		clients[i] = cl
	})
}

// probeWait is how long one probe waits for an answer.
func probeWait(c model.Config) time.Duration {
	if c.RequestTimeout > 0 && c.RequestTimeout < probeTimeout {
		return c.RequestTimeout
	}
	return probeTimeout
}

// every calls f every ProgressEvery on the config's clock until the
// returned stop is called; nothing without a Progress writer.
func every(c model.Config, f func()) (stop func()) {
	if c.Progress == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	t := c.Clock.NewTimer(c.ProgressEvery)
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C():
				t = c.Clock.NewTimer(c.ProgressEvery)
				f()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// probeWatch tracks the probes in flight. Safe for concurrent use.
type probeWatch struct {
	mu       sync.Mutex
	waiting  map[string]time.Time
	answered int
	total    int
}

func (w *probeWatch) start(name string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting[name] = at
}

func (w *probeWatch) end(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waiting, name)
	w.answered++
}

// line is the progress line for now, "" when no probe waits.
func (w *probeWatch) line(now time.Time, timeout time.Duration) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waiting) == 0 {
		return ""
	}
	names := make([]string, 0, len(w.waiting))
	for n := range w.waiting {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := w.waiting[names[i]], w.waiting[names[j]]
		return a.Before(b) || a.Equal(b) && names[i] < names[j]
	})
	oldest := now.Sub(w.waiting[names[0]]).Round(time.Second)
	return fmt.Sprintf("probing %d API server instance(s): %d done, %d not answering yet (the slowest for %s; each probe waits at most %s): %s", w.total, w.answered, len(names), oldest, timeout, firstOf(names, maxNamed))
}

// firstOf lists the first n names, then "and K more".
func firstOf(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// probeTimeout bounds the reachability probe of a pinned instance (at
// most the request timeout).
const probeTimeout = 10 * time.Second

// probe checks that an instance answers on its own address. Any HTTP
// answer counts, a refusal included: only the connection matters here.
func probe(ctx context.Context, c *model.Client, requestTimeout time.Duration) error {
	d := probeTimeout
	if requestTimeout > 0 && requestTimeout < d {
		d = requestTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r, err := c.Get(pctx, "/version")
	if err != nil {
		var he *model.HTTPError
		var fe *model.ForbiddenError
		var pe *model.ProfilingDisabledError
		if errors.As(err, &he) || errors.As(err, &fe) || errors.As(err, &pe) {
			return nil
		}
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("no answer within %s", d)
		}
		return err
	}
	r.Close()
	return nil
}

// unreachable reports whether err means the instance itself did not
// answer (a connection refused or reset, a timeout), as opposed to an
// HTTP error status: the other fetches of the sample would fail alike.
func unreachable(err error) bool {
	var he *model.HTTPError
	var fe *model.ForbiddenError
	var pe *model.ProfilingDisabledError
	return err != nil && !errors.As(err, &he) && !errors.As(err, &fe) && !errors.As(err, &pe) && !model.RefusedByGuard(err)
}
