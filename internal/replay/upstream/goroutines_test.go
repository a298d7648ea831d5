package upstream

import (
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// TestBusy checks what Settle waits for: goroutines running or paused by
// the runtime, the dispatcher waiting out its real-time budget, and the
// dispatcher in its start-up poll; not a dispatcher or a watcher parked on
// a channel.
func TestBusy(t *testing.T) {
	const cacherPkg = "k8s.io/apiserver/pkg/storage/cacher."
	g := func(state string, funcs ...string) *stacks.Goroutine {
		out := &stacks.Goroutine{State: state}
		for _, f := range funcs {
			out.Frames = append(out.Frames, stacks.Frame{Func: f})
		}
		return out
	}
	tests := []struct {
		name string
		g    *stacks.Goroutine
		want bool
	}{
		{"runnable", g("runnable", cacherPkg+"(*Cacher).dispatchEvents"), true},
		{"paused by the garbage collector", g("GC assist wait", cacherPkg+"(*cacheWatcher).sendWatchCacheEvent"), true},
		{"preempted", g("preempted", cacherPkg+"(*cacheWatcher).processInterval"), true},
		{"dispatcher in its loop", g("select", cacherPkg+"(*Cacher).dispatchEvents"), false},
		{"dispatcher waiting out its budget", g("select", cacherPkg+"(*cacheWatcher).add", cacherPkg+"(*Cacher).dispatchEvent", cacherPkg+"(*Cacher).dispatchEvents"), true},
		{"dispatcher polling for the first list", g("select",
			"k8s.io/apimachinery/pkg/util/wait.waitForWithContext",
			"k8s.io/apimachinery/pkg/util/wait.poll",
			"k8s.io/apimachinery/pkg/util/wait.PollUntilContextCancel",
			cacherPkg+"(*Cacher).dispatchEvents"), true},
		{"reflector's backoff wait", g("select", "k8s.io/apimachinery/pkg/util/wait.BackoffUntil", "k8s.io/client-go/tools/cache.(*Reflector).Run"), false},
		{"watcher blocked sending", g("select", cacherPkg+"(*cacheWatcher).sendWatchCacheEvent", cacherPkg+"(*cacheWatcher).processInterval"), false},
	}
	for _, tt := range tests {
		if got := busy(tt.g); got != tt.want {
			t.Errorf("%s: busy = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRelevant(t *testing.T) {
	tests := []struct {
		name      string
		frames    []string
		createdBy string
		want      bool
	}{
		{name: "a cacher frame", frames: []string{"runtime.gopark", "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).dispatchEvents"}, want: true},
		{name: "the reflector", frames: []string{"k8s.io/client-go/tools/cache.(*Reflector).watch"}, want: true},
		{name: "a replay handler", frames: []string{"github.com/watch-doctor/watch-doctor/internal/replay.(*handler).serve"}, want: true},
		{name: "created by the cacher", frames: []string{"time.Sleep"}, createdBy: "k8s.io/apiserver/pkg/storage/cacher.NewCacherFromConfig", want: true},
		{name: "the test runner", frames: []string{"testing.tRunner"}, createdBy: "testing.(*T).Run", want: false},
	}
	for _, tt := range tests {
		g := &stacks.Goroutine{CreatedBy: stacks.Frame{Func: tt.createdBy}}
		for _, f := range tt.frames {
			g.Frames = append(g.Frames, stacks.Frame{Func: f})
		}
		if got := relevant(g); got != tt.want {
			t.Errorf("%s: relevant = %v, want %v", tt.name, got, tt.want)
		}
	}
}
