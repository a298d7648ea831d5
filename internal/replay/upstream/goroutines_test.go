package upstream

import (
	"bytes"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/replay"
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

// TestReadReusesOnlyTheSameDump: Settle's read of a dump the same byte for
// byte as the last one returns what that one found, without reading it
// again; a process that changed is read afresh. Here a goroutine of this
// package starts spinning between two reads: the second must see it busy.
func TestReadReusesOnlyTheSameDump(t *testing.T) {
	b := New()
	self := goroutineID()
	// A quiet process dumps the same bytes twice in a row at once; a
	// goroutine another test left behind may change them now and then.
	reused := false
	for range 100 {
		// Both reads from one call site: the dump holds this goroutine's
		// stack too, line numbers included.
		var views [2]*replay.DumpView
		var dumps [2][]byte
		for i := range 2 {
			v, _, err := b.read(self)
			if err != nil {
				t.Fatal(err)
			}
			views[i], dumps[i] = v, bytes.Clone(b.last.dump)
		}
		if bytes.Equal(dumps[0], dumps[1]) {
			if views[1] != views[0] {
				t.Fatal("the same dump was read again")
			}
			reused = true
			break
		}
	}
	if !reused {
		t.Fatal("no two dumps in a row were the same in 100 tries")
	}

	stop, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var spinner int64
	go func() {
		for {
			once.Do(func() { spinner = goroutineID(); close(started) })
			select {
			case <-stop:
				return
			default:
				goruntime.Gosched()
			}
		}
	}()
	defer close(stop)
	<-started
	for range 1000 {
		_, busyOnes, err := b.read(self)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range busyOnes {
			if strings.HasPrefix(g, fmt.Sprintf("goroutine %d [", spinner)) {
				return
			}
		}
	}
	t.Fatal("the spinning goroutine was never read as busy: a changed dump was not read again")
}
