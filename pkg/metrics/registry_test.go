package metrics

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
	epmetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// apiserverExposition registers k8s.io/apiserver v0.37.2's own watch, cacher
// and flowcontrol collectors in component-base's registry (legacyregistry is
// a metrics.KubeRegistry, the one kube-apiserver serves on /metrics, with its
// Go and process collectors), drives them through their exported API as the
// server would during the seed reproduction, and returns the text exposition
// gathered from it.
//
// The registry is process-global: the test resets it first, so -count=N
// gives the same text.
func apiserverExposition(t *testing.T) []byte {
	t.Helper()
	cachermetrics.Register()
	epmetrics.Register()
	fcmetrics.Register()
	legacyregistry.Reset()

	ctx := context.Background()
	pods := schema.GroupResource{Resource: "pods"}
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}

	// The watch cache of pods: initialised once, 2000 pods received and
	// dispatched, capacity grown to 3200; one replay finished (2000 init
	// events); deployments had one watcher closed for a full buffer.
	cachermetrics.WatchCacheInitializations.WithLabelValues(pods.Group, pods.Resource).Inc()
	cachermetrics.WatchCacheInitializations.WithLabelValues(deployments.Group, deployments.Resource).Inc()
	cachermetrics.EventsReceivedCounter.WithLabelValues(pods.Group, pods.Resource).Add(2000)
	cachermetrics.EventsCounter.WithLabelValues(pods.Group, pods.Resource).Add(4001)
	cachermetrics.InitCounter.WithLabelValues(pods.Group, pods.Resource).Add(2000)
	cachermetrics.TerminatedWatchersCounter.WithLabelValues(deployments.Group, deployments.Resource).Inc()
	cachermetrics.RecordResourceVersion(pods, 2234)
	cachermetrics.RecordResourceVersion(deployments, 2237)
	cachermetrics.RecordsWatchCacheCapacityChange(pods, 100, 3200)
	cachermetrics.RecordsWatchCacheCapacityChange(deployments, 0, 100)

	// What the watch handlers wrote, and one finished watch-list.
	epmetrics.WatchEvents.WithContext(ctx).WithLabelValues("", "v1", "pods").Add(4698)
	for i := 0; i < 3; i++ {
		epmetrics.WatchEventsSizes.WithContext(ctx).WithLabelValues("", "v1", "pods").Observe(21000)
	}
	epmetrics.RecordWatchListLatency(ctx, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "namespace", 960*time.Millisecond)

	// APF: two watches in their initial phase hold one seat each in
	// global-default, whose nominal limit is 49.
	fcmetrics.SetPriorityLevelConfiguration("global-default", 49, 0, 98)
	fcmetrics.SetPriorityLevelConfiguration("exempt", 0, 0, 0)
	fcmetrics.AddRequestsExecuting(ctx, "global-default", "global-default", 2)
	fcmetrics.AddSeatConcurrencyInUse("global-default", "global-default", 2)

	// Three open watches on pods in rand2, held open while gathering.
	var text []byte
	watch := func(next func()) func() {
		return func() {
			req := httptest.NewRequest("GET", "/api/v1/namespaces/rand2/pods?watch=true", nil)
			info := &request.RequestInfo{IsResourceRequest: true, Verb: "watch", APIVersion: "v1", Resource: "pods", Namespace: "rand2"}
			epmetrics.RecordLongRunning(req, info, epmetrics.APIServerComponent, next)
		}
	}
	gather := func() {
		fams, err := legacyregistry.DefaultGatherer.Gather()
		if err != nil {
			t.Fatalf("gathering: %v", err)
		}
		var buf bytes.Buffer
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range fams {
			if err := enc.Encode(f); err != nil {
				t.Fatal(err)
			}
		}
		text = buf.Bytes()
	}
	watch(watch(watch(gather)))()
	return text
}

// TestGoldenAPIServerCollectors runs the pipeline on the exposition of
// k8s.io/apiserver v0.37.2's own collectors.
func TestGoldenAPIServerCollectors(t *testing.T) {
	text := apiserverExposition(t)
	s, err := Parse(bytes.NewReader(text), "k8s.io/apiserver@v0.37.2 collectors")
	if err != nil {
		t.Fatal(err)
	}

	// The exposition of the catalog families, as the collectors wrote it.
	var fams bytes.Buffer
	enc := expfmt.NewEncoder(&fams, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, name := range knownNames() {
		if f := s.Family(name); f != nil && name != "go_goroutines" && name[:8] != "process_" {
			if err := enc.Encode(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	golden(t, "apiserver-v0.37.2-collectors.prom", fams.Bytes())

	snap := Extract(s)
	var buf bytes.Buffer
	dumpSnapshot(&buf, snap, true)
	golden(t, "apiserver-v0.37.2-collectors.txt", buf.Bytes())

	// The registry's own Go and process collectors are read.
	if snap.Goroutines < 1 || snap.ResidentMemoryBytes <= 0 || snap.ProcessStartTime <= 0 {
		t.Errorf("process totals: goroutines %v, rss %v, start %v", snap.Goroutines, snap.ResidentMemoryBytes, snap.ProcessStartTime)
	}
	// Without kubernetes_build_info, the names and labels say 1.37.
	if snap.Version.Release != (Release{1, 37}) {
		t.Errorf("release = %s, want v1.37 from names and labels (%v)", snap.Version, snap.Version.Evidence)
	}
	nan := cmpopts.EquateNaNs()
	wantPods := Resource{Resource: "pods", Watchers: 3, RegisteredWatchers: nan64(),
		InitEvents: 2000, TerminatedWatchers: 0, EventsReceived: 2000, EventsDispatched: 4001,
		CacheInitializations: 1, CacheCapacity: 3200, CacheResourceVersion: 2234,
		WatchEvents: 4698, WatchEventBytes: 63000, WatchLists: 1, WatchListSeconds: 0.96}
	if diff := cmp.Diff(wantPods, findResource(t, snap, "", "pods"), nan); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if got := findResource(t, snap, "apps", "deployments"); got.TerminatedWatchers != 1 || got.Watchers != 0 {
		t.Errorf("deployments = %+v, want 1 terminated watcher and none open", got)
	}
	gd := findLevel(t, snap, "global-default")
	if gd.ExecutingSeats != 2 || gd.LimitSeats != 49 || gd.ExecutingRequests != 2 {
		t.Errorf("global-default = %+v", gd)
	}
}

func nan64() float64 { return nan }
