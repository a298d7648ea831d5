package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// cacheWaitStanza is a watch handler goroutine of a kube-apiserver whose
// pods watch cache is not ready, in the runtime's debug=2 format, grafted
// onto the real v1.37.2 capture. No server built here can show it: from
// 1.34 ResilientWatchCacheInitialization is GA and locked on, and
// (*Cacher).Watch answers 429 instead of waiting (k8s.io/apiserver v0.37.2
// cacher.go:531-533). Its storage frames follow k8s.io/apiserver v0.34.4
// with the gate off (cacher.go:507 waitAndReadGeneration, ready.go:84,
// delegator.go:136, dryrun.go:63, store.go:1433 and 1459, get.go:266); its
// handler chain, from ListResource down, is the real slow-informer
// handler's of the capture. HANDLER and CONN are replaced.
const cacheWaitStanza = `goroutine HANDLER [select, 3 minutes]:
runtime.gopark(0x24b5e1c0a9d8?, 0x2?, 0x10?, 0x0?, 0x24b5e1c0a9ac?)
	runtime/proc.go:462 +0xce
runtime.selectgo(0x24b5e1c0a9d8, 0x24b5e1c0a9a8, 0x0?, 0x0, 0x0?, 0x1)
	runtime/select.go:351 +0x837
k8s.io/apiserver/pkg/storage/cacher.(*ready).waitAndReadGeneration(0x24b5d63c2000, {0x47505d8, 0x24b5de5f71d0})
	k8s.io/apiserver@v0.34.4/pkg/storage/cacher/ready.go:84 +0x9d
k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch(0x24b5d6d8e008, {0x47505d8, 0x24b5de5f71d0}, {0x24b5dd0a2140, 0x1d}, {{0x0, 0x0}, {0x0, 0x0}, {{0x4741f00, 0x24b5d5e9c1a0}, {0x4741f40, 0x24b5d5e9c1c0}, 0x0, 0x0, 0x0, 0x1, {0x0, 0x0, ...}, ...}, ...})
	k8s.io/apiserver@v0.34.4/pkg/storage/cacher/cacher.go:507 +0x1a5
k8s.io/apiserver/pkg/storage/cacher.(*CacheDelegator).Watch(0x24b5d6d8e0a0?, {0x47505d8?, 0x24b5de5f71d0?}, {0x24b5dd0a2140?, 0x1d?}, {{0x0, 0x0}, {0x0, 0x0}, {{0x4741f00, 0x24b5d5e9c1a0}, {0x4741f40, 0x24b5d5e9c1c0}, 0x0, 0x0, 0x0, 0x1, {0x0, 0x0, ...}, ...}, ...})
	k8s.io/apiserver@v0.34.4/pkg/storage/cacher/delegator.go:136 +0x8f
k8s.io/apiserver/pkg/registry/generic/registry.(*DryRunnableStorage).Watch(...)
	k8s.io/apiserver@v0.34.4/pkg/registry/generic/registry/dryrun.go:63
k8s.io/apiserver/pkg/registry/generic/registry.(*Store).WatchPredicate(0x24b5d6c1f200, {0x47505d8, 0x24b5de5f71d0}, {{0x4741f00, 0x24b5d5e9c1a0}, {0x4741f40, 0x24b5d5e9c1c0}, 0x24b5d7a09b60, 0x0, 0x0, 0x1, {0x0, 0x0, ...}, ...}, ...)
	k8s.io/apiserver@v0.34.4/pkg/registry/generic/registry/store.go:1459 +0x4f6
k8s.io/apiserver/pkg/registry/generic/registry.(*Store).Watch(0x24b5d6c1f200, {0x47505d8, 0x24b5de5f71d0}, 0x24b5e2c42e00)
	k8s.io/apiserver@v0.34.4/pkg/registry/generic/registry/store.go:1433 +0x232
k8s.io/apiserver/pkg/endpoints/handlers.ListResource.func1({0x4740b90, 0x24b5dd9bedc0}, 0x24b5d6f1f180)
	k8s.io/apiserver@v0.34.4/pkg/endpoints/handlers/get.go:266 +0x10b9
`

// cacheWaitAPFStanza is its APF goroutine, a copy of a real one of the
// capture (priority-and-fairness.go:231 starts it), parent HANDLER.
const cacheWaitAPFStanza = `goroutine APF [chan receive, 3 minutes]:
k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait(0x24b5de2fc5b0?)
	k8s.io/apiserver@v0.37.2/pkg/util/flowcontrol/apf_context.go:92 +0x19
k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle.func7()
	k8s.io/apiserver@v0.37.2/pkg/server/filters/priority-and-fairness.go:218 +0x1c9
k8s.io/apiserver/pkg/util/flowcontrol.(*configController).Handle.func2()
	k8s.io/apiserver@v0.37.2/pkg/util/flowcontrol/apf_filter.go:192 +0x21d
k8s.io/apiserver/pkg/util/flowcontrol.(*configController).Handle(0x24b5d5009400, {0x4750680, 0x24b5e280ed20}, {0x24b5d9022000, {0x4750530, 0x24b5dffd0940}}, 0x1000004730ac8?, 0x2150da0?, 0x24b5d7161f56?, 0x24b5e280ec40)
	k8s.io/apiserver@v0.37.2/pkg/util/flowcontrol/apf_filter.go:179 +0x759
k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle.func8()
	k8s.io/apiserver@v0.37.2/pkg/server/filters/priority-and-fairness.go:264 +0x11d
created by k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle in goroutine HANDLER
	k8s.io/apiserver@v0.37.2/pkg/server/filters/priority-and-fairness.go:231 +0x845
`

// graftCacheWait writes the t2 capture into a new directory with a watch
// waiting for its watch cache: the handler goroutine (its frames below
// ListResource.func1 taken from the slow-informer handler's, created by
// a connection of its own) and its APF goroutine added to the dump, and its
// request (user cache-waiter, configmaps, 3 minutes old) to the APF dump.
func graftCacheWait(t *testing.T) string {
	t.Helper()
	src := golden.Fixture("t2")
	dir := filepath.Join(t.TempDir(), "t2")
	rewriteCapture(t, buildPaths{rewrites: func(string) bool { return false }}, src, dir)
	dump, err := os.ReadFile(filepath.Join(dir, "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The slow-informer's handler, 33542 (see testdata/kube-apiserver-v1.37.2/README.md).
	var handler string
	for _, st := range strings.Split(string(dump), "\n\n") {
		if strings.HasPrefix(st, "goroutine 33542 ") {
			handler = st
		}
	}
	_, chain, ok := strings.Cut(handler, "k8s.io/apiserver/pkg/endpoints/handlers.ListResource.func1(")
	if !ok {
		t.Fatal("goroutine 33542 of the capture has no ListResource.func1 frame")
	}
	_, chain, _ = strings.Cut(chain, "\n\t")
	_, chain, _ = strings.Cut(chain, "\n") // below ListResource.func1's file line
	// A connection of its own (another client), not in the dump.
	createdBy := regexp.MustCompile(`(created by golang.org/x/net/http2.\(\*serverConn\).scheduleHandler in goroutine )\d+`)
	if !createdBy.MatchString(chain) {
		t.Fatal("goroutine 33542 of the capture is not an HTTP/2 handler")
	}
	chain = createdBy.ReplaceAllString(chain, "${1}99000")
	graft := strings.NewReplacer("HANDLER", "99001", "APF", "99002").Replace(cacheWaitStanza + chain + "\n\n" + cacheWaitAPFStanza)
	if err := os.WriteFile(filepath.Join(dir, "goroutine-debug2.txt"), append(append(dump, '\n'), graft...), 0o600); err != nil {
		t.Fatal(err)
	}
	apfRows, err := os.ReadFile(filepath.Join(dir, "apf-requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	row := "global-default,    global-default, 7,          -1,                  cache-waiter,    2026-11-29T10:21:30.100000000Z, 1,            0,          0s,                2026-11-29T10:21:30.100100000Z, cache-waiter,  watch,  /api/v1/namespaces/rand2/configmaps,            rand2,     ,       v1,         configmaps, \n"
	if err := os.WriteFile(filepath.Join(dir, "apf-requests.txt"), append(apfRows, row...), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAnalyzeWatchWaitingForWatchCache: a watch waiting in (*ready).wait
// under (*Cacher).Watch is its own finding, tied to its APF goroutine and
// request, with advice; it is neither a stuck replay nor healthy, and the
// capture's own verdicts stay.
func TestAnalyzeWatchWaitingForWatchCache(t *testing.T) {
	t.Parallel()
	dir := graftCacheWait(t)
	code, out, errOut := run(t, nil, "analyze", dir, "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitFindings, errOut)
	}
	r := cacheWaitVerdicts(t, out)
	_, orig, _ := run(t, nil, "analyze", golden.Fixture("t2"), "-o", "json")
	want := cacheWaitVerdicts(t, orig)
	// The capture's own verdicts (stuck slow-informer, slow paced-reader,
	// ambiguous between the two from t2 alone) and the waiting watch,
	// critical after 3 minutes, attributed to its request.
	want.Verdicts = slices.Insert(want.Verdicts, 1, verdict{Type: "WaitingForWatchCache", Severity: "critical", Phase: "waiting-for-cache", User: "cache-waiter", Minutes: 3, IDs: []int64{99001, 99002}})
	if d := cmp.Diff(want.Verdicts, r.Verdicts); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	if r.Summary.StuckWatches != 1 || r.Summary.SlowWatches != 1 {
		t.Errorf("summary stuck %d slow %d, want 1 and 1: a watch waiting for its cache is neither", r.Summary.StuckWatches, r.Summary.SlowWatches)
	}
	if !slices.ContainsFunc(r.Advice, func(a string) bool {
		return strings.Contains(a, "1 watch request(s) wait for a watch cache that is not ready") && strings.Contains(a, "apiserver_watch_cache_initializations_total")
	}) {
		t.Errorf("no advice about the watch cache that is not ready: %q", r.Advice)
	}
}

type verdict struct {
	Type, Severity, Phase, User string
	Minutes                     int
	IDs                         []int64
}

type cacheWaitReport struct {
	Verdicts []verdict
	Summary  api.Summary
	Advice   []string
}

// cacheWaitVerdicts reads the findings of a JSON report as verdicts: the
// goroutines and minutes of WaitingForWatchCache findings only.
func cacheWaitVerdicts(t *testing.T, out string) cacheWaitReport {
	t.Helper()
	var r api.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	c := cacheWaitReport{Summary: r.Summary, Advice: r.Advice}
	for _, f := range r.Findings {
		v := verdict{Type: string(f.Type), Severity: string(f.Severity), Phase: string(f.Phase)}
		if f.Client != nil {
			v.User = f.Client.User
		}
		if f.Type == api.WaitingForWatchCache {
			v.IDs = f.GoroutineIDs
			if f.BlockedMinutes != nil {
				v.Minutes = *f.BlockedMinutes
			}
		}
		c.Verdicts = append(c.Verdicts, v)
	}
	return c
}
