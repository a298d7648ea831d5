// Package upstream runs a replay column on k8s.io/apiserver's own watch
// cache (pkg/storage/cacher, v0.37.2, cacher.NewCacherFromConfig), fed from
// MemStore, an in-memory storage.Interface that passes upstream's storage
// behaviour tests for what the cacher uses. The plugin embeds no etcd.
//
// The upstream cacher runs its own goroutines and cannot count its parked
// ones as internal/cacher does, so the column settles by reading goroutine
// dumps of the process with watch-doctor's analyzer: the replay waits until
// no goroutine of the cacher, of MemStore or of the replay's handlers is
// running or runnable, none is waiting out the dispatcher's time budget,
// which upstream measures on the real clock (time_budget.go:62) and which
// is at most 100 ms, and the dispatcher is past its start-up poll (a 10 ms
// wall-clock wait for the first list, cacher.go:915). Those two are the
// only waits on the real clock; everything else runs on the replay's fake
// clock.
package upstream

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// SizeAnnotation carries an object's wire size in the upstream column.
const SizeAnnotation = "watch-doctor.io/bytes"

// runs numbers the backends of one process: each labels its metrics with
// its own group, so counters of two replays never mix.
var runs atomic.Int64

// Backend is the upstream column. Not safe for concurrent use, except
// Watch, Inspect, Alive and BlockedNow (replay.Backend): mu guards parents
// and lastView, which handler goroutines and the driver share; the rest is
// the driver's.
type Backend struct {
	clock  *testingclock.FakeClock
	group  string
	order  []string
	caches map[string]*resourceCache

	mu       sync.Mutex
	parents  map[watch.Interface]int64
	lastView *replay.DumpView

	dumper replay.StackDumper
	// last is Settle's last dump read (read); Settle's goroutine only.
	last lastDump
}

// resourceCache is one resource's store and cacher, set up by Start and
// not changed after; both are safe for concurrent use.
type resourceCache struct {
	store  *MemStore
	cacher *cacherstorage.Cacher
}

var _ replay.Backend = &Backend{}

// New returns an upstream column.
func New() *Backend {
	return &Backend{group: fmt.Sprintf("replay-%d.watch-doctor.io", runs.Add(1)), parents: map[watch.Interface]int64{}}
}

// Name implements replay.Backend.
func (b *Backend) Name() string { return api.ColumnUpstream }

var (
	setupOnce sync.Once
	setupErr  error
)

// setup registers the cacher's metrics (they count nothing until
// registered) and tells the cacher that its storage supports progress
// requests, which a watch-list request needs (cacher.go:576): the support
// checker asks the etcd endpoints for their version from a goroutine of
// its own, so it gets an endpoint that answers with a current one and
// signals the question. Once per process.
func setup() error {
	setupOnce.Do(func() {
		cachermetrics.Register()
		asked := make(chan struct{})
		etcdfeature.DefaultFeatureSupportChecker.CheckClient(context.Background(), versionOnly{asked: asked}, storage.RequestWatchProgress)
		timeout := time.NewTimer(settleTimeout)
		defer timeout.Stop()
		select {
		case <-asked:
		case <-timeout.C:
			setupErr = errors.New("the storage feature check never asked for the storage version")
			return
		}
		// The checker records the answer right after Status returns, under
		// its own lock, which Supports takes: a few yields at most. The
		// bound only turns a broken checker into an error.
		for i := 0; !etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress); i++ {
			if i == 1e6 {
				setupErr = errors.New("the cacher's storage feature check did not pass: watch-list requests would fail")
				return
			}
			goruntime.Gosched()
		}
	})
	return setupErr
}

// versionOnly is the part of an etcd client the feature checker uses: one
// endpoint, answering with an etcd version that supports progress
// requests. It closes asked at the first question. Safe for concurrent
// use.
type versionOnly struct{ asked chan struct{} }

var askedOnce sync.Once

func (versionOnly) Endpoints() []string { return []string{"memstore"} }
func (v versionOnly) Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	askedOnce.Do(func() { close(v.asked) })
	return &clientv3.StatusResponse{Version: "3.6.0"}, nil
}

// Start implements replay.Backend.
func (b *Backend) Start(resources []replay.ResourceState, clk *testingclock.FakeClock) error {
	if err := setup(); err != nil {
		return err
	}
	b.clock = clk
	b.caches = map[string]*resourceCache{}
	for _, r := range resources {
		prefix := "/" + r.Name
		first := int64(r.ResourceVersion) + 1
		if len(r.Objects) > 0 {
			first = int64(r.Objects[0].ResourceVersion)
		}
		st := NewMemStore(codec, NewPod, NewPodList, prefix, first)
		for _, o := range r.Objects {
			out := &example.Pod{}
			if err := st.Create(context.Background(), prefix+o.Key(), toPod(o), out, 0); err != nil {
				return fmt.Errorf("storing %s: %w", o.Key(), err)
			}
			if out.ResourceVersion != strconv.FormatUint(o.ResourceVersion, 10) {
				return fmt.Errorf("storing %s: got resource version %s, want %d", o.Key(), out.ResourceVersion, o.ResourceVersion)
			}
		}
		indexers, err := indexerFuncs(r.IndexedTrigger)
		if err != nil {
			return fmt.Errorf("resource %q: %w", r.Name, err)
		}
		c, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
			IndexerFuncs:        indexers,
			Storage:             st,
			Versioner:           storage.APIObjectVersioner{},
			GroupResource:       schema.GroupResource{Group: b.group, Resource: r.Name},
			EventsHistoryWindow: cacherstorage.DefaultEventFreshDuration,
			ResourcePrefix:      prefix,
			KeyFunc:             func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc(prefix+"/", obj) },
			GetAttrsFunc:        storage.DefaultNamespaceScopedAttr,
			NewFunc:             NewPod,
			NewListFunc:         NewPodList,
			Codec:               codec,
			Clock:               clk,
		})
		if err != nil {
			return fmt.Errorf("starting the upstream cacher of %q: %w", r.Name, err)
		}
		b.caches[r.Name] = &resourceCache{store: st, cacher: c}
		b.order = append(b.order, r.Name)
		// Ready once the reflector's first list is in; the dispatcher may
		// still be in its start-up poll, which Settle waits out (busy).
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		err = c.Wait(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("the upstream cacher of %q did not get ready: %w", r.Name, err)
		}
	}
	return nil
}

// indexerFuncs returns the IndexerFuncs of a resource with the given
// indexed trigger, as kube-apiserver's pod storage sets them
// (pkg/registry/core/pod/storage/storage.go:96): nil for none.
func indexerFuncs(trigger string) (storage.IndexerFuncs, error) {
	switch trigger {
	case "":
		return nil, nil
	case replay.IndexedTriggerNodeName:
		return storage.IndexerFuncs{trigger: func(obj runtime.Object) string {
			if p, ok := obj.(*example.Pod); ok {
				return p.Spec.NodeName
			}
			return ""
		}}, nil
	}
	return nil, fmt.Errorf("unsupported indexed trigger %q: use %q", trigger, replay.IndexedTriggerNodeName)
}

func toPod(o *cacher.Object) *example.Pod {
	return &example.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:   o.Namespace,
		Name:        o.Name,
		Annotations: map[string]string{SizeAnnotation: strconv.Itoa(o.Size)},
	}}
}

// Apply implements replay.Backend: a write to the store, which the
// cacher's reflector picks up from its watch.
func (b *Backend) Apply(resource string, t watch.EventType, o *cacher.Object) error {
	rc, ok := b.caches[resource]
	if !ok {
		return fmt.Errorf("unknown resource %q", resource)
	}
	if t != watch.Modified {
		return fmt.Errorf("unsupported change %q: the upstream column replays updates", t)
	}
	key := "/" + resource + o.Key()
	out := &example.Pod{}
	err := rc.store.GuaranteedUpdate(context.Background(), key, out, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		p := toPod(o)
		p.Labels = map[string]string{"watch-doctor.io/generation": strconv.FormatUint(o.ResourceVersion, 10)}
		return p, nil, nil
	}, nil)
	if err != nil {
		return fmt.Errorf("updating %s: %w", key, err)
	}
	if out.ResourceVersion != strconv.FormatUint(o.ResourceVersion, 10) {
		return fmt.Errorf("updating %s: got resource version %s, want %d", key, out.ResourceVersion, o.ResourceVersion)
	}
	return nil
}

// initSignal records when APF would release the request's seats. Safe for
// concurrent use.
type initSignal struct {
	once sync.Once
	fn   func()
}

func (s *initSignal) Signal() {
	s.once.Do(func() {
		if s.fn != nil {
			s.fn()
		}
	})
}
func (s *initSignal) Wait() {}

// Watch implements replay.Backend: the request a watch handler would make
// of the registry (generic registry Store.Watch: namespace in the context,
// key root per namespace, recursive).
func (b *Backend) Watch(ctx context.Context, req replay.WatchRequest) (watch.Interface, error) {
	rc, ok := b.caches[req.Resource]
	if !ok {
		return nil, fmt.Errorf("unknown resource %q", req.Resource)
	}
	key := "/" + req.Resource
	if req.Namespace != "" {
		ctx = request.WithNamespace(ctx, req.Namespace)
		key += "/" + req.Namespace
	}
	ctx = utilflowcontrol.WithInitializationSignal(ctx, &initSignal{fn: req.OnInitialized})
	w, err := rc.cacher.Watch(ctx, key, storage.ListOptions{
		ResourceVersion:   req.ResourceVersion,
		SendInitialEvents: req.SendInitialEvents,
		Recursive:         true,
		Predicate: storage.SelectionPredicate{
			Label:               labels.Everything(),
			Field:               fields.Everything(),
			GetAttrs:            storage.DefaultNamespaceScopedAttr,
			AllowWatchBookmarks: req.AllowWatchBookmarks,
		},
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.parents[w] = goroutineID()
	b.mu.Unlock()
	return w, nil
}

// Inspect implements replay.Backend.
func (b *Backend) Inspect(ev watch.Event) replay.EventInfo {
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return replay.EventInfo{}
	}
	if ev.Type == watch.Bookmark {
		return replay.EventInfo{Bookmark: true, InitialEventsEnd: m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"}
	}
	n, _ := strconv.ParseInt(m.GetAnnotations()[SizeAnnotation], 10, 64)
	return replay.EventInfo{Bytes: n}
}

// Counters implements replay.Backend from the cacher's metrics, read
// directly from the registered collectors.
func (b *Backend) Counters() []api.Counters {
	out := make([]api.Counters, 0, len(b.order))
	for _, name := range b.order {
		c := api.Counters{Resource: name}
		if v, ok := counterValue(cachermetrics.TerminatedWatchersCounter.WithLabelValues(b.group, name)); ok {
			c.TerminatedWatchers = int64(v)
		}
		if v, ok := counterValue(cachermetrics.InitCounter.WithLabelValues(b.group, name)); ok {
			c.InitEvents = int64(v)
		}
		out = append(out, c)
	}
	return out
}

// counterValue reads a counter through the prometheus Metric it wraps
// (component-base hands out the client_golang counter once registered, a
// no-op before).
func counterValue(m any) (float64, bool) {
	w, ok := m.(interface{ Write(*dto.Metric) error })
	if !ok {
		return 0, false
	}
	var pb dto.Metric
	if err := w.Write(&pb); err != nil || pb.Counter == nil {
		return 0, false
	}
	return pb.Counter.GetValue(), true
}

// Stop implements replay.Backend.
func (b *Backend) Stop() {
	for _, name := range b.order {
		b.caches[name].cacher.Stop()
	}
}
