package replay

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Backend is one column of a replay: a watch cache that the driver feeds
// with the scenario's objects and changes and that the replay's handlers
// watch through the same transport model. Implementations: Ours (this
// repository's internal/cacher: unpatched, pr141899 or complete) and
// internal/replay/upstream (k8s.io/apiserver's cacher).
//
// The driver calls every method from one goroutine, except Watch and
// Inspect, which handler goroutines call; implementations make those two
// safe for concurrent use.
type Backend interface {
	// Name is the column: upstream, unpatched, pr141899 or complete.
	Name() string
	// Start builds one cache per resource holding its initial objects;
	// clk drives all of the backend's time.
	Start(resources []ResourceState, clk *testingclock.FakeClock) error
	// Apply applies one change. An error wrapping cacher.ErrBackpressure asks
	// the driver to settle and apply it again; any other error, such as
	// cacher.ErrStopped, ends the replay.
	Apply(resource string, t watch.EventType, o *cacher.Object) error
	// Watch opens a watch from the calling goroutine, which is the request
	// handler's: the watcher goroutine it starts is its child.
	Watch(ctx context.Context, req WatchRequest) (watch.Interface, error)
	// Inspect tells what an event is on the wire.
	Inspect(ev watch.Event) EventInfo
	// Settle returns once every goroutine of the backend is parked and
	// others() holds. It never moves clk: a wait on the dispatcher's time
	// budget runs out on a clock of the backend's own (upstream's real
	// clock, Ours' budget clock).
	Settle(ctx context.Context, others func() bool) error
	// Alive reports whether the watcher goroutine serving w still runs.
	// Valid after Settle.
	Alive(w watch.Interface) bool
	// BlockedNow counts watcher goroutines blocked sending to a full result
	// channel, as of the last Settle.
	BlockedNow() int
	// Dump writes a debug=2 goroutine dump of the process and says how to
	// read this backend's goroutines in it.
	Dump() (dump []byte, rename func(string) string, err error)
	// Counters returns per-resource counters.
	Counters() []api.Counters
	// Stop releases everything the backend started.
	Stop()
}

// ResourceState is a resource's initial objects and how its cache is
// configured. A plain value; Objects are shared, not copied, and must not
// be modified.
type ResourceState struct {
	Name            string
	Objects         []*cacher.Object
	ResourceVersion uint64
	// IndexedTrigger is Resource.IndexedTrigger: the field the cache
	// indexes watchers by, "" for none.
	IndexedTrigger string
}

// WatchRequest is one client's watch request. A plain value, except the
// counter and the function it points to, which the handler goroutine and
// the backend use concurrently: Received is an atomic, OnInitialized must
// be safe for concurrent use.
type WatchRequest struct {
	Resource            string
	Namespace           string
	ResourceVersion     string
	SendInitialEvents   *bool
	AllowWatchBookmarks bool
	// Received counts the handler's receives from the result channel.
	Received *atomic.Int64
	// OnInitialized records when APF would release the request's seats.
	OnInitialized func()
	// OnStall ends the response stream, as the complete fix's stall hook
	// does; a backend calls it when its stall timeout stops the watcher,
	// if it models the complete fix. Safe for concurrent use, idempotent.
	OnStall func()
}

// EventInfo is what the transport needs to know of an event. A plain value.
type EventInfo struct {
	// Bytes is the event's size on the wire; 0 for bookmarks, whose size
	// the transport model sets.
	Bytes            int64
	Bookmark         bool
	InitialEventsEnd bool
}
