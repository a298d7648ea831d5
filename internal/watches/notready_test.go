package watches

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestWaitsForCache(t *testing.T) {
	frames := func(fns ...string) []stacks.Frame {
		out := make([]stacks.Frame, len(fns))
		for i, f := range fns {
			out[i] = stacks.Frame{Func: f}
		}
		return out
	}
	const (
		park   = "runtime.gopark"
		list   = "k8s.io/apiserver/pkg/storage/cacher.(*CacheDelegator).GetList"
		handle = "k8s.io/apiserver/pkg/endpoints/handlers.ListResource.func1"
	)
	for _, tc := range []struct {
		name   string
		frames []stacks.Frame
		want   bool
	}{
		{"watch in waitAndReadGeneration (1.31-1.33, gate off)", frames(park, fnReadyWaitGen, fnCacherWatch, handle), true},
		{"watch in wait (before 1.31)", frames(park, fnReadyWait, fnCacherWatch, handle), true},
		{"wait inlined into waitAndReadGeneration", frames(park, fnReadyWaitGen, fnReadyWait, fnCacherWatch, handle), true},
		{"vendored build", frames(park, "k8s.io/kubernetes/vendor/"+fnReadyWait, "k8s.io/kubernetes/vendor/"+fnCacherWatch), true},
		// A LIST waiting for the cache (delegator.go:175 in v0.34.4) is no watch.
		{"list waiting", frames(park, fnReadyWait, list, handle), false},
		// The cacher's own wait (cacher.go:1189 in v0.34.4, no request).
		{"cacher's own goroutine", frames(park, fnReadyWait, "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).dispatchEvents"), false},
		{"Watch elsewhere", frames(park, "sync.(*RWMutex).RLock", fnCacherWatch), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitsForCache(stackOfFrames(tc.frames)); got != tc.want {
				t.Errorf("waitsForCache = %v, want %v", got, tc.want)
			}
		})
	}
}
