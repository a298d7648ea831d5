package replay

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// settleTimeout bounds the wall time one Settle may take before the replay
// gives up with a diagnosis instead of hanging.
const settleTimeout = 30 * time.Second

// Ours is a column served by this repository's internal/cacher: "unpatched"
// with StallTimeout 0, "pr141899" with the scenario's stall timeout, and
// "complete" with the stall timeout and the request's stall hook
// (WatchRequest.OnStall), which ends the response stream. See the column
// constants for what each assumes.
//
// The caches run on the replay clock, except the dispatcher's time budget,
// which runs on a fake clock of its own (budget), as upstream's runs on the
// real clock: waiting out the budget moves the budget clock, never the
// replay clock. The budget clock follows the replay clock's progress (so
// the budget refills with virtual time, 50 ms per second) plus the budget
// waits, so it runs ahead of the replay clock by the time spent waiting.
//
// Not safe for concurrent use except Watch and Inspect (Backend).
type Ours struct {
	name         string
	stallTimeout time.Duration
	// endStream: a stall calls the request's OnStall (the complete fix).
	endStream bool
	// release is the release whose watcher loop the caches model
	// (Scenario.Release; "" until Run sets it: DefaultRelease).
	release string
	clock   *testingclock.FakeClock
	budget  *testingclock.FakeClock
	// synced is the replay clock time the budget clock last followed.
	synced time.Time
	caches map[string]*cacher.Cacher
	order  []string
}

// NewOurs returns a column of internal/cacher; stallTimeout 0 is the unpatched
// column, a positive one PR 141899 (nothing but the watcher is stopped).
func NewOurs(name string, stallTimeout time.Duration) *Ours {
	return &Ours{name: name, stallTimeout: stallTimeout}
}

// NewOursComplete returns the complete column: internal/cacher with stallTimeout
// whose stall also ends the request's response stream.
func NewOursComplete(stallTimeout time.Duration) *Ours {
	return &Ours{name: api.ColumnComplete, stallTimeout: stallTimeout, endStream: true}
}

// Name implements Backend.
func (o *Ours) Name() string { return o.name }

// modelRelease makes the column model release's watcher loop (Run calls
// it with the scenario's release before Start). What differs by release,
// and how sure we are:
//   - v1.37: the loop of v0.37.2 (processInterval, then process); the
//     pr141899 and complete columns as measured on real patched v1.37.2
//     servers (test/e2e TestPatchedServers, TestPatchedBlockedReplay).
//   - v1.38: the loop of v0.38.0-beta.0 (process, which replays the
//     interval in processInitialEvents); the stall as our rebase of the
//     patch onto that loop (test/e2e/patches/apiserver-v0.38.0-beta.0)
//     does it, measured on a real patched v1.38.0-beta.0 server
//     (TestPatchedBlockedReplay, docs/versions.md): the same outcomes as
//     v1.37's, on a quiet and on a busy resource. A goroutine dump of the
//     column reads in 1.38's shape.
func (o *Ours) modelRelease(release string) { o.release = release }

// loopOf is the internal/cacher watcher loop of a release.
func loopOf(release string) cacher.Loop {
	if release == ReleaseV138 {
		return cacher.LoopInput
	}
	return cacher.LoopInterval
}

// columnRelease is what the column's header says of its release: the
// release it models when that is not the default, else nothing.
func (o *Ours) columnRelease() string {
	if o.release == "" || o.release == DefaultRelease {
		return ""
	}
	return o.release
}

// Start implements Backend.
func (o *Ours) Start(resources []ResourceState, clk *testingclock.FakeClock) error {
	o.clock = clk
	o.budget = testingclock.NewFakeClock(clk.Now())
	o.synced = clk.Now()
	o.caches = map[string]*cacher.Cacher{}
	for _, r := range resources {
		c, err := cacher.New(cacher.Config{
			Resource:               r.Name,
			Clock:                  clk,
			BudgetClock:            o.budget,
			IndexedTrigger:         r.IndexedTrigger,
			StallTimeout:           o.stallTimeout,
			Loop:                   loopOf(o.release),
			Initial:                r.Objects,
			InitialResourceVersion: r.ResourceVersion,
		})
		if err != nil {
			o.Stop()
			return fmt.Errorf("starting the %s cache of %q: %w", o.name, r.Name, err)
		}
		o.caches[r.Name] = c
		o.order = append(o.order, r.Name)
	}
	return nil
}

// Apply implements Backend.
func (o *Ours) Apply(resource string, t watch.EventType, obj *cacher.Object) error {
	c, ok := o.caches[resource]
	if !ok {
		return fmt.Errorf("unknown resource %q", resource)
	}
	o.followReplayClock()
	return c.Apply(t, obj)
}

// followReplayClock moves the budget clock by as much as the replay clock
// moved since the last call. The driver only moves the replay clock
// forward, between a Settle and the next.
func (o *Ours) followReplayClock() {
	if now := o.clock.Now(); now.After(o.synced) {
		o.budget.Step(now.Sub(o.synced))
		o.synced = now
	}
}

// Watch implements Backend.
func (o *Ours) Watch(ctx context.Context, req WatchRequest) (watch.Interface, error) {
	c, ok := o.caches[req.Resource]
	if !ok {
		return nil, fmt.Errorf("unknown resource %q", req.Resource)
	}
	opts := cacher.WatchOptions{
		Namespace:           req.Namespace,
		ResourceVersion:     req.ResourceVersion,
		SendInitialEvents:   req.SendInitialEvents,
		AllowWatchBookmarks: req.AllowWatchBookmarks,
		OnInitialized:       req.OnInitialized,
		Received:            req.Received,
	}
	if o.endStream {
		opts.OnStall = req.OnStall
	}
	return c.Watch(ctx, opts)
}

// Inspect implements Backend.
func (o *Ours) Inspect(ev watch.Event) EventInfo {
	obj, _ := ev.Object.(*cacher.Object)
	if obj == nil {
		return EventInfo{}
	}
	if ev.Type == watch.Bookmark {
		return EventInfo{Bookmark: true, InitialEventsEnd: obj.InitialEventsEnd}
	}
	return EventInfo{Bytes: int64(obj.Size)}
}

// Settle implements Backend with the caches' own accounting
// (cacher.Quiescent), which is exact and cheap: no goroutine dump. A
// dispatcher that waits for nothing but its budget deadline gets there by
// a step of the budget clock; the replay clock stays where it is.
//
// While goroutines still run it yields to them between checks (they are
// runnable, not waiting on anything this loop could signal); it never
// sleeps. settleTimeout bounds the whole wait in wall time, to turn a
// replay bug into an error instead of a hang.
func (o *Ours) Settle(ctx context.Context, others func() bool) error {
	o.followReplayClock()
	start := time.Now()
	for spins := 0; ; spins++ {
		if o.quiescent() && others() {
			runtime.Gosched()
			if o.quiescent() && others() {
				stepped := false
				for _, name := range o.order {
					if d, ok := o.caches[name].BudgetDeadline(); ok {
						o.budget.SetTime(d)
						stepped = true
						break
					}
				}
				if !stepped {
					return nil
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if spins%1024 == 1023 && time.Since(start) > settleTimeout {
			return fmt.Errorf("the cache did not settle within %v: a goroutine kept running (this is a bug in the replay)", settleTimeout)
		}
		runtime.Gosched()
	}
}

func (o *Ours) quiescent() bool {
	for _, name := range o.order {
		if !o.caches[name].Quiescent() {
			return false
		}
	}
	return true
}

// Alive implements Backend.
func (o *Ours) Alive(w watch.Interface) bool {
	cw, ok := w.(cacher.Watch)
	return ok && cw.Info().Phase != cacher.PhaseDone
}

// BlockedNow implements Backend.
func (o *Ours) BlockedNow() int {
	n := 0
	for _, name := range o.order {
		n += o.caches[name].BlockedWatchers()
	}
	return n
}

// Dump implements Backend.
func (o *Ours) Dump() ([]byte, func(string) string, error) {
	d, err := GoroutineDump()
	return d, RenameOurCacher, err
}

// Counters implements Backend.
func (o *Ours) Counters() []api.Counters {
	out := make([]api.Counters, 0, len(o.order))
	for _, name := range o.order {
		out = append(out, o.caches[name].Counters())
	}
	return out
}

// Stop implements Backend.
func (o *Ours) Stop() {
	for _, name := range o.order {
		o.caches[name].Stop()
	}
}
